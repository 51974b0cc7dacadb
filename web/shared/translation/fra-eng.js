// A seeded generator of a small English -> French parallel corpus in d2l's fra-eng format
// (lowercase, punctuation separated by spaces, apostrophes inside tokens), built from the words
// in fra-eng-lexicon.js and the grammar in french.js. No download: the same seed gives the same
// pairs everywhere.
//
// Sentence kinds: pronoun or noun subjects with être + adjective ("she is tired ." -> "elle est
// fatiguée ."), "... is home" (-> "chez moi/lui/eux ..."), present-tense verbs with an object
// noun phrase whose adjective French moves after the noun ("he sees the red car ." -> "il voit
// la voiture rouge ."), aller + place (au/à la/aux), passé composé with avoir ("i lost ." ->
// "j'ai perdu ."), and imperatives ("go ." -> "va !"); each can be negated (ne ... pas, with
// un/une/des -> de under negation). Every English sentence has exactly one French translation.

import { uniform } from '../random.js';
import {
  ADJECTIVES_BY_KIND,
  ALLER,
  AVOIR,
  ETRE,
  HOME_BY_AGREE,
  IMPERATIVES,
  NOUNS,
  PAST,
  PLACES,
  PRONOUNS,
  VERBS,
} from './fra-eng-lexicon.js';
import { clause, nounPhrase } from './french.js';

/** d2l's four test sentences (sec_seq2seq_training): always in the corpus. */
export const D2L_EXAMPLES = [
  { src: 'go .', tgt: 'va !' },
  { src: 'i lost .', tgt: "j'ai perdu ." },
  { src: "he's calm .", tgt: 'il est calme .' },
  { src: "i'm home .", tgt: 'je suis chez moi .' },
];

/**
 * A probe for the alignment heatmap: French swaps "black cats" into "chats noirs". Its target
 * hashes into the held-out split (splitPairs with any heldOutFraction above 0.0933), so whatever
 * the seed it is never a training pair: the heatmap shows alignment on an unseen sentence.
 */
export const PROBE = { src: 'she likes the black cats .', tgt: 'elle aime les chats noirs .' };

const pick = (rand, list) => list[Math.floor(rand() * list.length)];
const an = (word) => (/^[aeiou]/.test(word) ? 'an' : 'a');
const PEOPLE = NOUNS.filter((n) => n.kind === 'person');

// A subject: a pronoun, or "the girl(s)" (a person noun with a definite article). `person`
// indexes the conjugations; `agree` the adjective forms; `third`: English third person
// singular; `be`/`beNot`: English spellings (full and contracted).
function subject(rand) {
  if (rand() < 0.7) {
    const p = pick(rand, PRONOUNS);
    return { ...p, third: p.person === 2 };
  }
  const noun = pick(rand, PEOPLE);
  const plural = rand() < 0.5;
  const en = `the ${noun.en[plural ? 1 : 0]}`;
  const agree = (noun.gender === 'f' ? 1 : 0) + (plural ? 2 : 0);
  return {
    en,
    fr: nounPhrase('def', noun, plural),
    person: plural ? 4 : 2,
    agree,
    home: HOME_BY_AGREE[agree],
    third: !plural,
    be: [`${en} ${plural ? 'are' : 'is'}`],
    beNot: plural ? [`${en} are not`, `${en} aren't`] : [`${en} is not`, `${en} isn't`],
  };
}

// English "do" negation: "do not" / "don't" (or does, did).
const doNot = (rand, form) => pick(rand, [`${form} not`, `${form}n't`]);

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

// An object noun phrase for a verb: [English, French].
function object(rand, kinds, articles, negated) {
  const noun = pick(rand, NOUNS.filter((n) => kinds.includes(n.kind)));
  const article = pick(rand, articles);
  const plural = article === 'plural' || article === 'generic' || (article === 'the' && rand() < 0.5);
  const adj = rand() < 0.6 ? pick(rand, ADJECTIVES_BY_KIND[noun.kind].attributive) : null;
  const words = [adj?.en, noun.en[plural ? 1 : 0]].filter((w) => w).join(' ');
  const en = article === 'the' ? `the ${words}` : article === 'a' ? `${an(words)} ${words}` : words;
  // un/une/des become de under negation; "like" reads a bare plural as generic: les.
  let fr = article === 'the' || article === 'generic' ? 'def' : 'indef';
  if (fr === 'indef' && negated) fr = 'de';
  return [en, nounPhrase(fr, noun, plural, adj)];
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
const KINDS = [
  [verbObject, 0.4],
  [beAdjective, 0.15],
  [nounIsAdjective, 0.12],
  [past, 0.1],
  [goPlace, 0.1],
  [beHome, 0.07],
  [imperative, 0.06],
];

/**
 * `size` distinct English -> French pairs [{ src, tgt }] from `seed`: d2l's four examples
 * first, then sentences drawn until `size` distinct sources are found.
 */
export function generateFraEng({ seed = 0, size = 4000 } = {}) {
  if (!Number.isInteger(size) || size < D2L_EXAMPLES.length) {
    throw new RangeError(`size: expected an integer >= ${D2L_EXAMPLES.length}, given ${size}`);
  }
  const rand = uniform(seed);
  const pairs = [...D2L_EXAMPLES];
  const seen = new Set(pairs.map((p) => p.src));
  const total = KINDS.reduce((sum, [, w]) => sum + w, 0);
  for (let attempts = 0; pairs.length < size; attempts++) {
    if (attempts > 100 * size) throw new RangeError(`size: expected at most what the grammar yields, given ${size}`);
    let r = rand() * total;
    const [kind] = KINDS.find(([, w]) => (r -= w) < 0) ?? KINDS[KINDS.length - 1];
    const pair = kind(rand);
    if (!seen.has(pair.src)) {
      seen.add(pair.src);
      pairs.push(pair);
    }
  }
  return pairs;
}
