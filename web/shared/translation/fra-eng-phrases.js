// The phrases the English -> French sentence templates (fra-eng-sentences.js) are built from: a
// subject, an object noun phrase, English "do" negation, each drawn from the seeded generator
// with its English and French spellings side by side.

import { ADJECTIVES_BY_KIND, HOME_BY_AGREE, NOUNS, PRONOUNS } from './fra-eng-lexicon.js';
import { nounPhrase } from './french.js';

/** A uniformly drawn element of `list`. */
export const pick = (rand, list) => list[Math.floor(rand() * list.length)];
const an = (word) => (/^[aeiou]/.test(word) ? 'an' : 'a');
const PEOPLE = NOUNS.filter((n) => n.kind === 'person');

// A subject: a pronoun, or "the girl(s)" (a person noun with a definite article). `person`
// indexes the conjugations; `agree` the adjective forms; `third`: English third person
// singular; `be`/`beNot`: English spellings (full and contracted).
export function subject(rand) {
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

// An object noun phrase for a verb: [English, French].
export function object(rand, kinds, articles, negated) {
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

// English "do" negation: "do not" / "don't" (or does, did).
export const doNot = (rand, form) => pick(rand, [`${form} not`, `${form}n't`]);
