// d2l's MTFraEng._build_arrays: token lists ending in '<eos>' are cut or padded with '<pad>' to
// numSteps; targets get '<bos>' in front (numSteps + 1 tokens) and split into the decoder input
// (all but the last) and the label (all but the first), the teacher-forcing shift; a source's
// valid length counts its non-'<pad>' entries (its tokens and '<eos>', at most numSteps).
// Vocabularies are built, as d2l does, from the padded sentences with minFreq 2.
//
// Deliberate differences from d2l, none of which changes a value d2l computes on its data:
// - results are Int32Array tensors { data, shape } (row-major [rows, numSteps]) and an Int32Array
//   of valid lengths, the layout Seq2SeqAttention takes;
// - every token that maps to '<unk>' is reported in `unknown` (d2l maps it silently);
// - '<eos>' and '<pad>' (and '<bos>' on the target side) are reserved tokens. d2l reserves none:
//   they get in by their counts, as they do whenever some rows are padded; when no row is, d2l's
//   vocabulary lacks '<pad>' and its valid lengths count against '<unk>'s index instead. The
//   source vocabulary does not get '<bos>', as in d2l (its indices stay d2l's).
import { BOS, EOS, PAD, tokenize } from './text.js';
import { Vocab } from './vocab.js';

function checkNumSteps(numSteps) {
  if (!Number.isInteger(numSteps) || numSteps < 1) {
    throw new RangeError(`numSteps: expected a positive integer, given ${numSteps}`);
  }
}

function checkSentences(name, sentences) {
  if (!Array.isArray(sentences)) throw new TypeError(`${name}: expected an array of strings, given ${typeof sentences}`);
  sentences.forEach((s, i) => {
    if (typeof s !== 'string') throw new TypeError(`${name}[${i}]: expected a string, given ${typeof s}`);
  });
}

function requireTokens(vocab, side, tokens) {
  for (const token of tokens) {
    if (!vocab.has(token)) {
      throw new RangeError(`${side} vocabulary: expected it to contain '${token}', given ${vocab.length} tokens without it`);
    }
  }
}

// d2l's pad_or_trim.
const padOrTrim = (tokens, numSteps) =>
  tokens.length > numSteps ? tokens.slice(0, numSteps) : [...tokens, ...Array(numSteps - tokens.length).fill(PAD)];

// Token lists (all of one length) -> row-major Int32Array, recording tokens that map to '<unk>'.
function encodeRows(rows, vocab, side, unknown) {
  const width = rows.length ? rows[0].length : 0;
  const data = new Int32Array(rows.length * width);
  rows.forEach((tokens, row) => {
    tokens.forEach((token, position) => {
      data[row * width + position] = vocab.get(token);
      if (!vocab.has(token)) unknown.push({ row, side, position, token });
    });
  });
  return data;
}

// Source side: rows padded to numSteps -> ids [n, numSteps] and valid lengths = the count of
// ids != pad in each row (d2l's rule).
function sourceArrays(rows, vocab, numSteps, unknown) {
  requireTokens(vocab, 'source', [PAD, EOS]);
  const data = encodeRows(rows, vocab, 'src', unknown);
  const pad = vocab.get(PAD);
  const validLens = new Int32Array(rows.length);
  for (let i = 0; i < data.length; i++) if (data[i] !== pad) validLens[Math.floor(i / numSteps)]++;
  return { src: { data, shape: [rows.length, numSteps] }, srcValidLens: validLens };
}

// Target side: rows of '<bos>' + numSteps tokens -> decoder input (all but the last) and label
// (all but the first), each [n, numSteps].
function targetArrays(rows, vocab, numSteps, unknown) {
  requireTokens(vocab, 'target', [PAD, BOS, EOS]);
  const first = unknown.length;
  const full = encodeRows(rows, vocab, 'tgt', unknown);
  // Report positions in the label's frame (the first real target token is position 0).
  for (const u of unknown.slice(first)) u.position -= 1;
  const n = rows.length;
  const tgtInput = new Int32Array(n * numSteps);
  const tgtOutput = new Int32Array(n * numSteps);
  for (let r = 0; r < n; r++) {
    const row = full.subarray(r * (numSteps + 1), (r + 1) * (numSteps + 1));
    tgtInput.set(row.subarray(0, numSteps), r * numSteps);
    tgtOutput.set(row.subarray(1), r * numSteps);
  }
  return { tgtInput: { data: tgtInput, shape: [n, numSteps] }, tgtOutput: { data: tgtOutput, shape: [n, numSteps] } };
}

/**
 * d2l's _build_arrays on sentence pairs [{ src, tgt }] (already preprocessed text, tokens
 * separated by spaces). Pass `srcVocab`/`tgtVocab` to encode with existing vocabularies (d2l's
 * `build`); otherwise they are built from these pairs' padded rows with `minFreq` (d2l: 2).
 * Returns { src, tgtInput, tgtOutput: { data: Int32Array, shape: [n, numSteps] },
 *           srcValidLens: Int32Array [n], srcVocab, tgtVocab,
 *           unknown: [{ row, side: 'src' | 'tgt', position, token }] }.
 */
export function buildArrays(pairs, { numSteps, srcVocab, tgtVocab, minFreq = 2 } = {}) {
  checkNumSteps(numSteps);
  if (!Array.isArray(pairs)) throw new TypeError(`pairs: expected an array of { src, tgt }, given ${typeof pairs}`);
  checkSentences('pairs[].src', pairs.map((p) => p?.src));
  checkSentences('pairs[].tgt', pairs.map((p) => p?.tgt));
  const srcRows = pairs.map((p) => padOrTrim(tokenize(p.src, { eos: true }), numSteps));
  const tgtRows = pairs.map((p) => [BOS, ...padOrTrim(tokenize(p.tgt, { eos: true }), numSteps)]);
  srcVocab ??= new Vocab(srcRows, { minFreq, reservedTokens: [EOS, PAD] });
  tgtVocab ??= new Vocab(tgtRows, { minFreq, reservedTokens: [BOS, EOS, PAD] });
  const unknown = [];
  return {
    ...sourceArrays(srcRows, srcVocab, numSteps, unknown),
    ...targetArrays(tgtRows, tgtVocab, numSteps, unknown),
    srcVocab,
    tgtVocab,
    unknown,
  };
}

/**
 * Sources only, for translation: sentences (preprocessed) -> { src: { data, shape: [n, numSteps] },
 * srcValidLens, tokens (each sentence's tokens and '<eos>', before padding), unknown: [{ row,
 * position, token }] } — the words a page should flag because the model reads them as '<unk>'.
 */
export function encodeSources(sentences, srcVocab, numSteps) {
  checkSentences('sentences', sentences);
  checkNumSteps(numSteps);
  if (!(srcVocab instanceof Vocab)) throw new TypeError('srcVocab: expected a Vocab');
  const tokens = sentences.map((s) => tokenize(s, { eos: true }));
  const unknown = [];
  const rows = tokens.map((t) => padOrTrim(t, numSteps));
  const { src, srcValidLens } = sourceArrays(rows, srcVocab, numSteps, unknown);
  return { src, srcValidLens, tokens, unknown: unknown.map(({ row, position, token }) => ({ row, position, token })) };
}

/**
 * d2l's reading of a prediction: the tokens before the first '<eos>' (all of them when there is
 * none). `ids`: one row of indices.
 */
export function decodeTokens(ids, tgtVocab) {
  const out = [];
  for (const token of tgtVocab.toTokens(Array.from(ids))) {
    if (token === EOS) break;
    out.push(token);
  }
  return out;
}

/**
 * Pairs split into training and held-out sets -> arrays for both with vocabularies built from
 * the training pairs only (d2l builds them from all its examples; here held-out words the
 * training set lacks show up as '<unk>', reported in heldOut.unknown, as they would for a
 * visitor's sentence).
 */
export function buildDataset({ train, heldOut }, { numSteps, minFreq = 2 } = {}) {
  const trainArrays = buildArrays(train, { numSteps, minFreq });
  const { srcVocab, tgtVocab } = trainArrays;
  return { train: trainArrays, heldOut: buildArrays(heldOut, { numSteps, srcVocab, tgtVocab }), srcVocab, tgtVocab };
}
