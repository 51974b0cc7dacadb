// The French grammar the corpus needs: elision (je -> j', ne -> n', le/la -> l', de -> d' before
// a vowel sound), the articles with their agreement, à + le/les -> au/aux, and the negation
// ne ... pas around the verb. Elided words are glued to the next word, one token as in d2l's
// fra-eng data ("j'ai", "n'est", "l'école").

// h muet words of the lexicon: they elide like vowels (l'homme, l'hôtel).
const H_MUET = new Set(['homme', 'hommes', 'hôtel']);

/** True when `word` begins with a vowel sound (so a preceding je/ne/le/la/de elides). */
export function vowelSound(word) {
  return /^[aeiouyàâéèêëîïôûœ]/.test(word) || H_MUET.has(word);
}

/** `short` (e.g. "le") before `word`: "l'" glued to it before a vowel sound, else two words. */
export function elide(short, word) {
  return vowelSound(word) ? `${short[0]}'${word}` : `${short} ${word}`;
}

/**
 * A noun phrase: article + noun + adjective (French puts these adjectives after the noun).
 * article: 'def' (le/la/l'/les), 'indef' (un/une/des), 'de' (de/d', an indefinite object under
 * negation: "je n'ai pas de voiture"), 'a-def' (à + definite: au/à la/à l'/aux).
 * noun: { fr: [sg, pl], gender }; adjective: { fr: [m sg, f sg, m pl, f pl] } or null.
 */
export function nounPhrase(article, noun, plural, adjective = null) {
  const word = noun.fr[plural ? 1 : 0];
  const agree = (noun.gender === 'f' ? 1 : 0) + (plural ? 2 : 0);
  const adj = adjective ? ` ${adjective.fr[agree]}` : '';
  return `${determine(article, noun.gender, plural, word)}${adj}`;
}

function determine(article, gender, plural, word) {
  switch (article) {
    case 'def':
      return plural ? `les ${word}` : elide(gender === 'f' ? 'la' : 'le', word);
    case 'indef':
      return `${plural ? 'des' : gender === 'f' ? 'une' : 'un'} ${word}`;
    case 'de':
      return elide('de', word);
    case 'a-def':
      if (plural) return `aux ${word}`;
      if (vowelSound(word)) return `à l'${word}`;
      return gender === 'f' ? `à la ${word}` : `au ${word}`;
    default:
      throw new RangeError(`article: expected 'def', 'indef', 'de' or 'a-def', given ${article}`);
  }
}

/**
 * subject + verb (+ ne ... pas) + rest: "je" elides before a vowel-initial verb ("j'ai"), and
 * so does "ne" ("je n'ai pas"). `verb` may be several words (a compound tense's auxiliary and
 * participle: the negation goes around the first).
 */
export function clause(subject, verb, negated, rest = '') {
  const [first, ...more] = verb.split(' ');
  const tail = [...more, rest].filter((w) => w).join(' ');
  let core;
  if (negated) core = `${subject} ${elide('ne', first)} pas`;
  else core = subject === 'je' ? elide('je', first) : `${subject} ${first}`;
  return tail ? `${core} ${tail}` : core;
}
