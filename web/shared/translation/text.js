// d2l's text handling for machine translation (MTFraEng._preprocess and _tokenize, d2l-en
// chapter_recurrent-modern/machine-translation-and-dataset.md), so a sentence a visitor types
// goes through exactly the steps the corpus went through.

/** Special tokens, spelled as d2l spells them. */
export const PAD = '<pad>';
export const BOS = '<bos>';
export const EOS = '<eos>';
export const UNK = '<unk>';

const PUNCTUATION = ',.!?';

/**
 * d2l's _preprocess: non-breaking spaces become spaces, letters are lowercased, and a space
 * is inserted before , . ! ? when the character before it is not a space ("Go." -> "go .").
 * Apostrophes are kept inside words ("J'ai" -> "j'ai"), as in d2l's fra-eng data.
 */
export function preprocess(text) {
  if (typeof text !== 'string') throw new TypeError(`text: expected a string, given ${typeof text}`);
  const clean = text.replaceAll('\u202f', ' ').replaceAll('\xa0', ' ');
  const lower = clean.toLowerCase();
  let out = '';
  for (let i = 0; i < lower.length; i++) {
    // d2l tests the character before in the un-lowercased text; lowercasing keeps spaces.
    const spaceFirst = i > 0 && PUNCTUATION.includes(lower[i]) && clean[i - 1] !== ' ';
    out += spaceFirst ? ` ${lower[i]}` : lower[i];
  }
  return out;
}

/**
 * d2l's per-sentence tokenisation: split on single spaces and drop empty tokens (so runs of
 * spaces do not make empty tokens). d2l's _tokenize then appends '<eos>'; pass `eos: true`
 * for that.
 */
export function tokenize(sentence, { eos = false } = {}) {
  if (typeof sentence !== 'string') throw new TypeError(`sentence: expected a string, given ${typeof sentence}`);
  const tokens = sentence.split(' ').filter((t) => t);
  if (eos) tokens.push(EOS);
  return tokens;
}

/**
 * d2l's _tokenize on fra.txt-style text: one "source<TAB>target" pair a line; lines without
 * exactly one tab are skipped. Returns { src, tgt }, token lists each ending in '<eos>'.
 * `maxExamples` keeps d2l's bound `i > max_examples` (lines 0 … maxExamples, one more than
 * the name says) so the same text gives the same pairs.
 */
export function tokenizePairs(text, { maxExamples } = {}) {
  const src = [];
  const tgt = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (maxExamples && i > maxExamples) break;
    const parts = lines[i].split('\t');
    if (parts.length === 2) {
      src.push(tokenize(parts[0], { eos: true }));
      tgt.push(tokenize(parts[1], { eos: true }));
    }
  }
  return { src, tgt };
}
