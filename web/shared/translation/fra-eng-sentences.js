// The sentence templates of the English -> French corpus (fra-eng.js draws from them): pronoun
// or noun subjects with être + adjective ("she is tired ." -> "elle est fatiguée ."), "... is
// home" (-> "chez moi/lui/eux ..."), present-tense verbs with an object noun phrase whose
// adjective French moves after the noun ("he sees the red car ." -> "il voit la voiture
// rouge ."), aller + place (au/à la/aux), passé composé with avoir ("i lost ." -> "j'ai
// perdu ."), and imperatives ("go ." -> "va !"); each can be negated (ne ... pas, with
// un/une/des -> de under negation). Every English sentence has exactly one French translation.
// Each template takes the seeded generator and returns one { src, tgt } pair.

import { ADJECTIVES_BY_KIND, ALLER, AVOIR, ETRE, IMPERATIVES, NOUNS, PAST, PLACES, VERBS } from './fra-eng-lexicon.js';
import { doNot, object, pick, subject } from './fra-eng-phrases.js';
import { clause, nounPhrase } from './french.js';

const sentence = (en, fr, end = '.') => ({ src: `${en} .`, tgt: `${fr} ${end}` });

// "she is tired ." -> "elle est fatiguée ."
function beAdjective(rand) {
  const s = subject(rand);
  const negated = rand() < 0.3;
  const adj = pick(rand, ADJECTIVES_BY_KIND.person.predicative);
  return sentence(`${pick(rand, negated ? s.beNot : s.be)} ${adj.en}`, clause(s.fr, ETRE[s.person], negated, adj.fr[s.agree]));
}

// "the cars are red ." -> "les voitures sont rouges ."
function nounIsAdjective(rand) {
  const noun = pick(rand, NOUNS.filter((n) => n.kind !== 'person'));
  const plural = rand() < 0.5;
  const negated = rand() < 0.3;
  const adj = pick(rand, ADJECTIVES_BY_KIND[noun.kind].predicative);
  const be = plural ? (negated ? pick(rand, ['are not', "aren't"]) : 'are') : negated ? pick(rand, ['is not', "isn't"]) : 'is';
  const agree = (noun.gender === 'f' ? 1 : 0) + (plural ? 2 : 0);
  return sentence(
    `the ${noun.en[plural ? 1 : 0]} ${be} ${adj.en}`,
    clause(nounPhrase('def', noun, plural), ETRE[plural ? 4 : 2], negated, adj.fr[agree]),
  );
}

// "i'm home ." -> "je suis chez moi ."
function beHome(rand) {
  const s = subject(rand);
  const negated = rand() < 0.3;
  return sentence(`${pick(rand, negated ? s.beNot : s.be)} home`, clause(s.fr, ETRE[s.person], negated, `chez ${s.home}`));
}

// "he sees the red car ." -> "il voit la voiture rouge ."
function verbObject(rand) {
  const s = subject(rand);
  const v = pick(rand, VERBS);
  const negated = rand() < 0.3;
  const [enObject, frObject] = object(rand, v.kinds, v.articles, negated);
  const enVerb = negated ? `${doNot(rand, s.third ? 'does' : 'do')} ${v.en[0]}` : v.en[s.third ? 1 : 0];
  return sentence(`${s.en} ${enVerb} ${enObject}`, clause(s.fr, v.fr[s.person], negated, frObject));
}

// "we go to the park ." -> "nous allons au parc ."
function goPlace(rand) {
  const s = subject(rand);
  const place = pick(rand, PLACES);
  const negated = rand() < 0.3;
  const enVerb = negated ? `${doNot(rand, s.third ? 'does' : 'do')} go` : s.third ? 'goes' : 'go';
  const frPlace = nounPhrase('a-def', { fr: [place.fr, place.fr], gender: place.gender }, Boolean(place.plural));
  return sentence(`${s.en} ${enVerb} to the ${place.en}`, clause(s.fr, ALLER[s.person], negated, frPlace));
}

// "i lost ." -> "j'ai perdu ."; "she found the keys ." -> "elle a trouvé les clés ."
function past(rand) {
  const s = subject(rand);
  const p = pick(rand, PAST);
  const negated = rand() < 0.3;
  const [enObject, frObject] = rand() < p.object ? object(rand, ['thing', 'animal'], ['the', 'a'], negated) : ['', ''];
  const enVerb = negated ? `${doNot(rand, 'did')} ${p.en[1]}` : p.en[0];
  const en = [s.en, enVerb, enObject].filter((w) => w).join(' ');
  return sentence(en, clause(s.fr, `${AVOIR[s.person]} ${p.fr}`, negated, frObject));
}

// "go ." -> "va !"; "go to the beach ." -> "va à la plage !"
function imperative(rand) {
  const i = pick(rand, IMPERATIVES);
  if (i.en === 'go' && rand() < 0.5) {
    const place = pick(rand, PLACES);
    const frPlace = nounPhrase('a-def', { fr: [place.fr, place.fr], gender: place.gender }, Boolean(place.plural));
    return sentence(`go to the ${place.en}`, `va ${frPlace}`, '!');
  }
  return sentence(i.en, i.fr, '!');
}

// Sentence kinds and how often each is drawn (the small kinds run out of new sentences first;
// repeats are redrawn).
export const SENTENCE_KINDS = [
  [verbObject, 0.4],
  [beAdjective, 0.15],
  [nounIsAdjective, 0.12],
  [past, 0.1],
  [goPlace, 0.1],
  [beHome, 0.07],
  [imperative, 0.06],
];
