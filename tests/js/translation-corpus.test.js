// The generated English -> French corpus: determinism, d2l's format, one translation per
// sentence, the held-out split, and French grammar checked on every pair by rules written here
// independently of the generator: elision, au/aux, ne … pas, article-noun-adjective agreement,
// predicate adjectives agreeing with the subject, verb endings by person, and English a/an.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { importRepo } from './repo-module.js';

const dir = 'web/shared/translation';
const { D2L_EXAMPLES, PROBE, generateFraEng } = await importRepo(`${dir}/fra-eng.js`);
const { generateFraEngLong } = await importRepo(`${dir}/fra-eng-long.js`);
const { TASKS } = await importRepo(`${dir}/tasks.js`);
const { splitPairs } = await importRepo(`${dir}/split.js`);
const { preprocess } = await importRepo(`${dir}/text.js`);

const corpus = generateFraEng({ seed: 0, size: 4000 });

// ---- An independent model of the French involved --------------------------------------------

// Noun genders (a dictionary fact); plurals by rule: -s/-x stay, -eau -> -eaux, -al -> -aux.
const GENDER = {
  m: 'garçon homme enfant chien chat cheval oiseau livre vélo sac manteau bateau parapluie gâteau œuf parc marché hôtel magasin',
  f: 'fille femme vache souris voiture maison chemise porte clé chaise assiette pomme banane tomate soupe plage gare école',
};
const plural = (w) => (/[sx]$/.test(w) ? w : w.endsWith('eau') ? `${w}x` : w.endsWith('al') ? `${w.slice(0, -2)}aux` : `${w}s`);
const NOUN = new Map(); // form -> { gender, numbers: ['sg'] | ['pl'] | ['sg', 'pl'] (souris) }
for (const [gender, words] of Object.entries(GENDER)) {
  for (const w of words.split(' ')) {
    NOUN.set(w, { gender, numbers: ['sg'] });
    NOUN.set(plural(w), { gender, numbers: plural(w) === w ? ['sg', 'pl'] : ['pl'] });
  }
}

// Adjectives by masculine singular; feminine: -e stays, a few irregular, else +e.
const IRREGULAR_FEMININE = { blanc: 'blanche', frais: 'fraîche', bon: 'bonne' };
const ADJ_LEMMAS =
  'rouge noir blanc vert bleu gris cassé lourd frais chaud froid bon fatigué content prêt occupé grand petit malade calme triste jeune';
const feminine = (a) => IRREGULAR_FEMININE[a] ?? (a.endsWith('e') ? a : `${a}e`);
const ADJECTIVE = new Map(); // form -> the set of "gender number" it can express
for (const lemma of ADJ_LEMMAS.split(' ')) {
  for (const [form, key] of [
    [lemma, 'm sg'],
    [feminine(lemma), 'f sg'],
    [plural(lemma), 'm pl'],
    [plural(feminine(lemma)), 'f pl'],
  ]) {
    ADJECTIVE.set(form, new Set([...(ADJECTIVE.get(form) ?? []), key]));
  }
}

const PRONOUN = { je: 'm sg 1', "j'": 'm sg 1', tu: 'm sg 2', il: 'm sg 3', elle: 'f sg 3', nous: 'm pl 1', ils: 'm pl 3' };
const ETRE = { 'sg 1': 'suis', 'sg 2': 'es', 'sg 3': 'est', 'pl 1': 'sommes', 'pl 3': 'sont' };
const VERB_ENDING = { 'sg 1': /(s|x|e|ai)$/, 'sg 2': /(s|x)$/, 'sg 3': /(t|d|e|a)$/, 'pl 1': /(ons|^sommes)$/, 'pl 3': /(ent|ont)$/ };
const CHEZ = { 'm sg 1': 'moi', 'm sg 2': 'toi', 'm sg 3': 'lui', 'f sg 3': 'elle', 'm pl 1': 'nous', 'm pl 3': 'eux', 'f pl 3': 'elles' };
// Articles: what each says about the noun after it (null: either).
const ARTICLE = { le: 'm sg', la: 'f sg', "l'": 'sg', les: 'pl', un: 'm sg', une: 'f sg', des: 'pl', de: null, "d'": null, au: 'm sg', aux: 'pl' };
// The "gender number" readings of article + noun that agree (none: they do not).
const nounKeys = (article, noun) =>
  noun.numbers.map((n) => `${noun.gender} ${n}`).filter((key) => !ARTICLE[article] || key.includes(ARTICLE[article]));

const vowelSound = (w) => /^[aeiouyàâéèêîôûœ]/.test(w) || ['homme', 'hommes', 'hôtel'].includes(w);
// "j'ai" -> ["j'", "ai"]: elided words become words of their own.
const words = (sentence) => sentence.split(' ').flatMap((t) => (/^[a-z]'./.test(t) ? [t.slice(0, 2), t.slice(2)] : [t]));

const AVOIR_FORMS = ['ai', 'as', 'a', 'avons', 'ont'];

// Checks one French sentence; returns a list of problems (empty when it is grammatical). Each
// word must be accounted for by some rule (subject, verb, article, noun, adjective, ...): a
// word none explains is a problem too, so a misspelt form cannot slip past unchecked.
function frenchProblems(sentence) {
  const w = words(sentence);
  const problems = [];
  const explained = new Set([w.length - 1]); // the final . or !
  const explain = (...indices) => indices.forEach((i) => explained.add(i));
  const agree = (i, keys, what) => {
    if (!keys.some((key) => ADJECTIVE.get(w[i]).has(key))) problems.push(`${w[i]} does not agree with ${what} (${keys})`);
    explain(i);
  };

  w.forEach((x, i) => {
    const next = w[i + 1] ?? '';
    if (['je', 'ne', 'le', 'la', 'de'].includes(x) && vowelSound(next)) problems.push(`${x} ${next}: not elided`);
    if (x.endsWith("'") && !vowelSound(next)) problems.push(`${x}${next}: elided before a consonant`);
    if (x === 'à' && ['le', 'les'].includes(next)) problems.push(`à ${next}: should be au/aux`);
    if (x === 'ne' || x === "n'") {
      if (w[i + 2] === 'pas') explain(i, i + 2);
      else problems.push('ne without pas after the verb');
    }
  });
  if (w.filter((x) => x === 'pas').length !== w.filter((x) => x === 'ne' || x === "n'").length) problems.push('pas without ne');

  // Noun phrases: every noun has an article that agrees (à before la/l'), and an adjective
  // after it agrees.
  w.forEach((x, i) => {
    const noun = NOUN.get(x);
    if (!noun) return;
    const article = w[i - 1];
    if (!(article in ARTICLE)) return problems.push(`${x} without an article`);
    explain(i - 1, i);
    if (w[i - 2] === 'à' && ['la', "l'"].includes(article)) explain(i - 2);
    const keys = nounKeys(article, noun);
    if (keys.length === 0) problems.push(`${article} ${x}: article does not agree`);
    if (ADJECTIVE.has(w[i + 1])) agree(i + 1, keys, x);
  });

  if (w[w.length - 1] === '!') {
    explain(0); // an imperative: the verb comes first, no subject
    return unexplained(w, explained, problems);
  }
  // The subject: a pronoun, or an article and a noun.
  let subject;
  let start; // index of the word after the subject
  if (w[0] in PRONOUN) [subject, start] = [PRONOUN[w[0]], 1];
  else if (NOUN.has(w[1]) && nounKeys(w[0], NOUN.get(w[1])).length === 1) [subject, start] = [`${nounKeys(w[0], NOUN.get(w[1]))[0]} 3`, 2];
  if (!subject) return [...problems, 'no subject'];
  explain(0);
  const [gender, number, person] = subject.split(' ');
  const neg = w[start] === 'ne' || w[start] === "n'";
  const v = start + (neg ? 1 : 0);
  const after = v + (neg ? 2 : 1); // past "pas"
  explain(v);
  if (!VERB_ENDING[`${number} ${person}`].test(w[v])) problems.push(`verb ${w[v]} does not agree with the subject (${subject})`);
  if (Object.values(ETRE).includes(w[v])) {
    if (w[v] !== ETRE[`${number} ${person}`]) problems.push(`être: ${w[v]} for ${subject}`);
    if (ADJECTIVE.has(w[after])) agree(after, [`${gender} ${number}`], 'the subject');
    if (w[after] === 'chez') {
      explain(after, after + 1);
      if (w[after + 1] !== CHEZ[subject]) problems.push(`chez ${w[after + 1]} for ${subject}`);
    }
  }
  // Passé composé: avoir + a past participle (-é, -u).
  if (AVOIR_FORMS.includes(w[v]) && /(é|u)$/.test(w[after])) explain(after);
  return unexplained(w, explained, problems);
}

function unexplained(w, explained, problems) {
  const rest = w.filter((_, i) => !explained.has(i));
  return rest.length ? [...problems, `words no rule accounts for: ${rest.join(', ')}`] : problems;
}

// English: a/an by the next word's first letter, do/does by the subject's number.
function englishProblems(sentence) {
  const w = sentence.split(' ');
  const problems = [];
  w.forEach((x, i) => {
    const next = w[i + 1] ?? '';
    if (x === 'a' && /^[aeiou]/.test(next)) problems.push(`a ${next}`);
    if (x === 'an' && !/^[aeiou]/.test(next)) problems.push(`an ${next}`);
  });
  const third = ['he', 'she'].includes(w[0]) || (w[0] === 'the' && !/(s|men|children|mice)$/.test(w[1]));
  if (third && /^(do|don't)$/.test(w[w[0] === 'the' ? 2 : 1])) problems.push('do after a third person singular');
  if (!third && /^(does|doesn't)$/.test(w[w[0] === 'the' ? 2 : 1])) problems.push('does after a plural or i/you');
  return problems;
}

describe('English -> French corpus', () => {
  test('the same seed gives the same pairs, another seed others', () => {
    assert.deepEqual(generateFraEng({ seed: 0, size: 4000 }), corpus);
    assert.notDeepEqual(generateFraEng({ seed: 1, size: 300 }), corpus.slice(0, 300));
    assert.deepEqual(generateFraEng({ seed: 0, size: 500 }), corpus.slice(0, 500), 'a smaller size is a prefix');
  });

  test("d2l's format and size: distinct sources, d2l's examples first, at most 9 tokens (10 with <eos>)", () => {
    assert.equal(corpus.length, 4000);
    assert.equal(new Set(corpus.map((p) => p.src)).size, 4000);
    assert.deepEqual(corpus.slice(0, 4), [
      { src: 'go .', tgt: 'va !' },
      { src: 'i lost .', tgt: "j'ai perdu ." },
      { src: "he's calm .", tgt: 'il est calme .' },
      { src: "i'm home .", tgt: 'je suis chez moi .' },
    ]);
    assert.deepEqual(D2L_EXAMPLES, corpus.slice(0, 4));
    for (const { src, tgt } of corpus) {
      for (const s of [src, tgt]) {
        assert.equal(preprocess(s), s, `already preprocessed: ${s}`);
        assert.match(s, /^[^ ]+( [^ ]+)* [.!]$/, `one space between tokens, ending in . or !: ${s}`);
        assert.ok(s.split(' ').length <= 9, `at most 9 tokens: ${s}`);
      }
    }
  });

  test('each English sentence has one translation, whatever the seed', () => {
    const seen = new Map();
    for (const seed of [0, 1, 2]) {
      for (const { src, tgt } of generateFraEng({ seed, size: 3000 })) {
        assert.equal(seen.get(src) ?? tgt, tgt, src);
        seen.set(src, tgt);
      }
    }
  });

  test('every French sentence is grammatical (elision, agreement, ne … pas, verb endings)', () => {
    const bad = corpus.flatMap(({ src, tgt }) => frenchProblems(tgt).map((p) => `${src} -> ${tgt}: ${p}`));
    assert.deepEqual(bad.slice(0, 10), []);
    // The checks see what they are meant to: agreement cases of each kind occur.
    const all = corpus.map((p) => p.tgt).join(' ');
    const forms = ['voitures rouges', 'fraîches', 'blanche', 'bonnes', "l'école", 'au parc', 'aux magasins'];
    for (const form of [...forms, "j'ai", "n'est pas", "d'", 'de ', 'chez eux', 'chez elles']) {
      assert.ok(all.includes(form), `the corpus has "${form}"`);
    }
  });

  test('the grammar checks catch broken French', () => {
    const broken = [
      'la voiture rouges .', 'le voiture rouge .', 'je ai perdu .', 'il ne est pas calme .', 'elle est grand .',
      'nous sont fatigués .', 'ils vont à le parc .', 'je suis chez lui .', 'il ne voit la voiture .',
      'les filles voit le chat .', 'le chien noire .', 'la maison est petits .', 'il voit la voiture fraise .',
    ];
    for (const sentence of broken) {
      assert.notDeepEqual(frenchProblems(sentence), [], sentence);
    }
  });

  test('English: a/an and do/does agree; negation is translated as ne … pas', () => {
    const bad = corpus.flatMap(({ src }) => englishProblems(src).map((p) => `${src}: ${p}`));
    assert.deepEqual(bad.slice(0, 10), []);
    assert.notDeepEqual(englishProblems('he do not see an car .'), []);
    for (const { src, tgt } of corpus) {
      const negated = /\bnot\b|n't\b/.test(src);
      assert.equal(tgt.split(' ').includes('pas'), negated, `${src} -> ${tgt}`);
    }
  });

  test('adjectives follow the noun in French: "the red car" -> "la voiture rouge"', () => {
    const reordered = corpus.filter(
      ({ src }) => / (red|black|white|green|blue|grey) [a-z]+ \.$/.test(src) && !/ (is|are|isn't|aren't|not) /.test(src),
    );
    assert.ok(reordered.length > 100, `${reordered.length} sentences with a colour before a noun`);
    for (const { src, tgt } of reordered) {
      const [adj, noun] = src.split(' ').slice(-3, -1);
      const fr = tgt.split(' ').slice(-3, -1);
      assert.ok(!/^(rouge|noir|blanc|vert|bleu|gris)/.test(fr[0].replace(/^[ld]'/, '')), `${src} -> ${tgt}: ${adj} ${noun}`);
      assert.match(fr[1], /^(rouge|noir|blanc|vert|bleu|gris)/, `${src} -> ${tgt}`);
    }
  });
});

describe('English -> French long sentences (the with/without-attention figure)', () => {
  const long = generateFraEngLong({ seed: 0, size: TASKS['fra-eng-long'].size });
  const clausesOf = (text, joiner) => text.slice(0, -2).split(` ${joiner} `).map((c) => `${c} .`);

  test('the same seed gives the same pairs; sources are distinct', () => {
    assert.deepEqual(generateFraEngLong({ seed: 0, size: long.length }), long);
    assert.equal(new Set(long.map((p) => p.src)).size, long.length);
  });

  test('one to four clauses joined by "and" / "et", each one grammatical on both sides', () => {
    const counts = [0, 0, 0, 0, 0];
    const bad = [];
    for (const { src, tgt } of long) {
      const en = clausesOf(src, 'and'), fr = clausesOf(tgt, 'et');
      assert.equal(en.length, fr.length, `${src} -> ${tgt}`);
      counts[en.length] += 1;
      for (const [i, clause] of fr.entries()) bad.push(...frenchProblems(clause).map((p) => `${clause}: ${p}`), ...englishProblems(en[i]).map((p) => `${en[i]}: ${p}`));
    }
    assert.deepEqual(bad.slice(0, 10), []);
    for (let n = 1; n <= 4; n++) assert.ok(counts[n] > 0.15 * long.length, `${counts[n]} sentences of ${n} clauses`);
  });

  test('long enough for the figure, short enough for the task: up to 30 tokens, a fifth of them 20 or more', () => {
    const lengths = long.map((p) => p.src.split(' ').length);
    assert.ok(lengths.filter((n) => n >= 20).length > 0.2 * long.length, 'sources of 20 tokens or more');
    for (const { src, tgt } of long) {
      for (const text of [src, tgt]) assert.ok(text.split(' ').length + 1 <= TASKS['fra-eng-long'].numSteps, `fits with <eos>: ${text}`);
    }
  });
});

describe('held-out split', () => {
  const { train, heldOut } = splitPairs(corpus, { heldOutFraction: 0.1, keepInTrain: D2L_EXAMPLES.map((p) => p.tgt) });

  test('about 10% held out, every pair on one side, nothing leaks', () => {
    assert.equal(train.length + heldOut.length, corpus.length);
    assert.ok(heldOut.length > 0.07 * corpus.length && heldOut.length < 0.13 * corpus.length, `${heldOut.length} held out`);
    const trainSrc = new Set(train.map((p) => p.src));
    const trainTgt = new Set(train.map((p) => p.tgt));
    for (const p of heldOut) {
      assert.ok(!trainSrc.has(p.src), `source in both sets: ${p.src}`);
      assert.ok(!trainTgt.has(p.tgt), `target in both sets: ${p.tgt}`);
    }
  });

  test("d2l's examples stay in training; a pair's side does not depend on the corpus", () => {
    for (const p of D2L_EXAMPLES) assert.ok(train.some((t) => t.src === p.src), p.src);
    const other = splitPairs(generateFraEng({ seed: 9, size: 2000 }), { heldOutFraction: 0.1, keepInTrain: D2L_EXAMPLES.map((p) => p.tgt) });
    const side = new Map([...train.map((p) => [p.tgt, 'train']), ...heldOut.map((p) => [p.tgt, 'held'])]);
    let shared = 0;
    for (const [list, name] of [[other.train, 'train'], [other.heldOut, 'held']]) {
      for (const p of list) {
        if (!side.has(p.tgt)) continue;
        shared++;
        assert.equal(side.get(p.tgt), name, p.tgt);
      }
    }
    assert.ok(shared > 100, `${shared} targets in both corpora`);
  });

  test('the heatmap probe is grammatical and held out whatever the seed', () => {
    assert.deepEqual(frenchProblems(PROBE.tgt), []);
    assert.deepEqual(splitPairs([PROBE], { heldOutFraction: 0.1 }).heldOut, [PROBE]);
    for (const seed of [0, 1, 2]) {
      const { train: t } = splitPairs(generateFraEng({ seed, size: 4000 }), { heldOutFraction: 0.1 });
      assert.ok(!t.some((p) => p.src === PROBE.src), `seed ${seed}`);
    }
  });

  test('fraction 0 holds nothing out, 1 everything but the kept pairs; bad fractions throw', () => {
    assert.equal(splitPairs(corpus, { heldOutFraction: 0 }).heldOut.length, 0);
    assert.equal(splitPairs(corpus, { heldOutFraction: 1, keepInTrain: ['va !'] }).train.length, 1);
    assert.throws(() => splitPairs(corpus, { heldOutFraction: 1.5 }), /heldOutFraction: expected a number in \[0, 1\], given 1.5/);
  });
});
