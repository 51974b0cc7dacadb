// Argument validation: every function rejects wrong types with a TypeError and wrong shapes or
// values with a RangeError whose message names the argument (and says expected vs given where
// it has them); absurd sizes fail on shape or allocation instead of crashing; after every error
// the module still computes correct results.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadAttention } from 'attention-wasm';
import { backends, labelOf } from './backends.js';
import * as ref from '../../harness/reference.js';

const { assertClose, mulberry32, randomTensor, tensor } = ref;

const rng = mulberry32(3000);
const q = randomTensor(rng, [2, 3, 4]);
const k = randomTensor(rng, [2, 5, 4]);
const v = randomTensor(rng, [2, 5, 6]);
const x = randomTensor(rng, [2, 3, 5]);
const Wq = randomTensor(rng, [7, 4]);
const Wk = randomTensor(rng, [7, 4]);
const wv = randomTensor(rng, [7]);
const keys = randomTensor(rng, [5]);
const values = randomTensor(rng, [5]);
const queries = randomTensor(rng, [3]);
const huge = 2 ** 31;

/** A small computation checked against the reference: the module is still usable. */
function assertStillWorks(attn) {
  const got = attn.scaledDotProductAttention(q, k, v, { validLens: [2, 4], weights: true });
  const want = ref.scaledDotProductAttention(q, k, v, { validLens: [2, 4] });
  assertClose(got.output, want.output, { label: 'output after an error' });
  assertClose(got.weights, want.weights, { label: 'weights after an error' });
}

/** Asserts fn throws ErrorType with a message matching every pattern. */
function assertThrowsNamed(fn, ErrorType, patterns) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof ErrorType, `expected a ${ErrorType.name}, got ${error?.name}: ${error?.message}`);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  });
}

// [description, (attn) => call, expected error type, patterns the message must match]
const CASES = {
  softmax: [
    ['x null', (a) => a.softmax(null), TypeError, [/^x: expected a tensor/]],
    ['x undefined', (a) => a.softmax(), TypeError, [/^x:/]],
    ['x a bare Float32Array', (a) => a.softmax(new Float32Array(4)), TypeError, [/^x: expected a tensor \{ data, shape \}, got Float32Array\(4\)/]],
    ['x.data a number[]', (a) => a.softmax({ data: [1, 2], shape: [2] }), TypeError, [/x\.data: expected Float32Array, got Array\(2\)/]],
    ['x.data a Float64Array', (a) => a.softmax({ data: new Float64Array(2), shape: [2] }), TypeError, [/x\.data: expected Float32Array, got Float64Array\(2\)/]],
    ['x.shape not an array', (a) => a.softmax({ data: new Float32Array(2), shape: '2' }), TypeError, [/x\.shape/]],
    ['x.shape fractional', (a) => a.softmax(tensor([1, 2], [2.5])), RangeError, [/x\.shape\[0\]/, /2\.5/]],
    ['x.shape negative', (a) => a.softmax(tensor([1, 2], [2, -1])), RangeError, [/x\.shape\[1\]/, /-1/]],
    ['x.shape NaN', (a) => a.softmax(tensor([1, 2], [NaN])), RangeError, [/x\.shape\[0\]/, /NaN/]],
    ['x.shape Infinity', (a) => a.softmax(tensor([1, 2], [Infinity])), RangeError, [/x\.shape\[0\]/, /Infinity/]],
    ['x.shape a string size', (a) => a.softmax(tensor([1, 2], ['2'])), TypeError, [/x\.shape\[0\]/]],
    ['x data length != shape', (a) => a.softmax(tensor([1, 2], [3])), RangeError, [/^x: shape \[3\] holds 3 values, but data has 2/]],
    ['x of rank 0', (a) => a.softmax(tensor([1], [])), RangeError, [/^x:/, /\[\]/]],
  ],
  maskedSoftmax: [
    ['x of rank 2', (a) => a.maskedSoftmax(tensor([1, 2, 3, 4], [2, 2]), [1, 1]), RangeError, [/^x: expected shape \[\*, \*, \*\], got \[2, 2\]/]],
    ['validLens of the wrong length', (a) => a.maskedSoftmax(x, [1, 2, 3]), RangeError, [/validLens/, /\[2\] or \[2, 3\]/, /got \[3\]/]],
    ['validLens negative', (a) => a.maskedSoftmax(x, [-1, 2]), RangeError, [/validLens/, /\[0, 5\]/, /-1/]],
    ['validLens too long (Int32Array)', (a) => a.maskedSoftmax(x, Int32Array.from([6, 2])), RangeError, [/validLens/, /\[0, 5\]/, /6/]],
    ['validLens too long (per query)', (a) => a.maskedSoftmax(x, Int32Array.from([1, 2, 3, 4, 5, 6])), RangeError, [/validLens/, /6/]],
    ['validLens fractional', (a) => a.maskedSoftmax(x, [1.5, 2]), RangeError, [/validLens/, /1\.5/]],
    ['validLens NaN', (a) => a.maskedSoftmax(x, [NaN, 2]), RangeError, [/validLens/, /NaN/]],
    ['validLens a Float32Array', (a) => a.maskedSoftmax(x, Float32Array.from([1, 2])), TypeError, [/validLens/]],
    ['validLens a string', (a) => a.maskedSoftmax(x, '12'), TypeError, [/validLens/]],
    ['validLens a tensor of shape [3, 2] for B 2, nq 3', (a) => a.maskedSoftmax(x, tensor([1, 2, 3, 4, 5, 1], [3, 2], Int32Array)), RangeError, [/validLens/, /\[2, 3\]/, /\[3, 2\]/]],
    ['validLens a tensor of rank 3', (a) => a.maskedSoftmax(x, tensor([1, 2, 3, 4, 5, 1], [2, 3, 1], Int32Array)), RangeError, [/validLens/, /\[2, 3, 1\]/]],
    ['fill a string', (a) => a.maskedSoftmax(x, [1, 2], { fill: '-1e6' }), TypeError, [/fill/]],
    ['fill NaN', (a) => a.maskedSoftmax(x, [1, 2], { fill: NaN }), RangeError, [/fill/, /NaN/]],
    ['options not an object', (a) => a.maskedSoftmax(x, [1, 2], 5), TypeError, [/options/]],
  ],
  score: [
    ["fn 'cosine'", (a) => a.score(q, k, { fn: 'cosine' }), RangeError, [/^fn: expected 'dot' \| 'scaled-dot' \| 'neg-sq-dist' \| 'additive' \| 'general', got 'cosine'/]],
    ['fn a number', (a) => a.score(q, k, { fn: 3 }), TypeError, [/^fn:/]],
    ['q of rank 2', (a) => a.score(tensor([1, 2], [1, 2]), k), RangeError, [/^q: expected shape \[\*, \*, \*\], got \[1, 2\]/]],
    ['k of another width', (a) => a.score(q, randomTensor(rng, [2, 5, 3])), RangeError, [/^k: expected shape \[2, \*, 4\], got \[2, 5, 3\]/]],
    ['k of another batch', (a) => a.score(q, randomTensor(rng, [3, 5, 4])), RangeError, [/^k: expected shape \[2, \*, 4\], got \[3, 5, 4\]/]],
    ['additive without wv', (a) => a.score(q, k, { fn: 'additive', Wq, Wk }), TypeError, [/^wv:/]],
    ['additive with Wq transposed', (a) => a.score(q, k, { fn: 'additive', Wq: randomTensor(rng, [4, 7]), Wk, wv }), RangeError, [/^Wq: expected shape \[7, 4\], got \[4, 7\]/]],
    ['additive with Wk of the wrong width', (a) => a.score(q, k, { fn: 'additive', Wq, Wk: randomTensor(rng, [7, 5]), wv }), RangeError, [/^Wk: expected shape \[7, 4\], got \[7, 5\]/]],
    ['additive with wv of rank 2', (a) => a.score(q, k, { fn: 'additive', Wq, Wk, wv: randomTensor(rng, [7, 1]) }), RangeError, [/^wv: expected shape \[\*\], got \[7, 1\]/]],
    ['general without W', (a) => a.score(q, k, { fn: 'general' }), TypeError, [/^W:/]],
    ['general with W of the wrong shape', (a) => a.score(q, randomTensor(rng, [2, 5, 6]), { fn: 'general', W: randomTensor(rng, [6, 4]) }), RangeError, [/^W: expected shape \[4, 6\], got \[6, 4\]/]],
  ],
  bmm: [
    ['a of rank 2', (a) => a.bmm(tensor([1, 2], [1, 2]), k), RangeError, [/^a: expected shape \[\*, \*, \*\], got \[1, 2\]/]],
    ['b with a mismatched inner size', (a) => a.bmm(q, randomTensor(rng, [2, 5, 3])), RangeError, [/^b: expected shape \[2, 4, \*\], got \[2, 5, 3\]/]],
    ['b of another batch', (a) => a.bmm(q, randomTensor(rng, [1, 4, 3])), RangeError, [/^b: expected shape \[2, 4, \*\], got \[1, 4, 3\]/]],
    ['b null', (a) => a.bmm(q, null), TypeError, [/^b:/]],
  ],
  scaledDotProductAttention: [
    ['q null', (a) => a.scaledDotProductAttention(null, k, v), TypeError, [/^q:/]],
    ['k of another width', (a) => a.scaledDotProductAttention(q, randomTensor(rng, [2, 5, 3]), v), RangeError, [/^k: expected shape \[2, \*, 4\], got \[2, 5, 3\]/]],
    ['v with another number of rows', (a) => a.scaledDotProductAttention(q, k, randomTensor(rng, [2, 4, 6])), RangeError, [/^v: expected shape \[2, 5, \*\], got \[2, 4, 6\]/]],
    ['dropout 1', (a) => a.scaledDotProductAttention(q, k, v, { dropout: 1 }), RangeError, [/^dropout: expected a probability in \[0, 1\), got 1$/]],
    ['dropout -0.1', (a) => a.scaledDotProductAttention(q, k, v, { dropout: -0.1 }), RangeError, [/^dropout:/, /-0\.1/]],
    ['dropout NaN', (a) => a.scaledDotProductAttention(q, k, v, { dropout: NaN }), RangeError, [/^dropout:/, /NaN/]],
    ['dropout a string', (a) => a.scaledDotProductAttention(q, k, v, { dropout: '0.1' }), TypeError, [/^dropout:/]],
    ['scale Infinity', (a) => a.scaledDotProductAttention(q, k, v, { scale: Infinity }), RangeError, [/^scale:/, /Infinity/]],
    ['scale NaN', (a) => a.scaledDotProductAttention(q, k, v, { scale: NaN }), RangeError, [/^scale:/, /NaN/]],
    ['scale a string', (a) => a.scaledDotProductAttention(q, k, v, { scale: '1' }), TypeError, [/^scale:/]],
    ['seed negative', (a) => a.scaledDotProductAttention(q, k, v, { dropout: 0.1, seed: -1 }), RangeError, [/^seed:/, /-1/]],
    ['seed fractional', (a) => a.scaledDotProductAttention(q, k, v, { dropout: 0.1, seed: 1.5 }), RangeError, [/^seed:/, /1\.5/]],
    ['seed beyond 2^53', (a) => a.scaledDotProductAttention(q, k, v, { dropout: 0.1, seed: 2 ** 64 }), RangeError, [/^seed:/]],
    ['weights a string', (a) => a.scaledDotProductAttention(q, k, v, { weights: 'yes' }), TypeError, [/^weights: expected a boolean/]],
    ['causal a number', (a) => a.scaledDotProductAttention(q, k, v, { causal: 1 }), TypeError, [/^causal: expected a boolean/]],
    ['mask of the wrong size (bare)', (a) => a.scaledDotProductAttention(q, k, v, { mask: new Uint8Array(7) }), RangeError, [/^mask: expected shape \[3, 5\] or \[2, 3, 5\], got 7 values/]],
    ['mask of the wrong shape (tensor)', (a) => a.scaledDotProductAttention(q, k, v, { mask: tensor(new Uint8Array(15), [5, 3], Uint8Array) }), RangeError, [/^mask:/, /\[3, 5\] or \[2, 3, 5\]/, /got \[5, 3\]/]],
    ['mask an Int32Array', (a) => a.scaledDotProductAttention(q, k, v, { mask: new Int32Array(15) }), TypeError, [/^mask:/]],
    ['mask a number[]', (a) => a.scaledDotProductAttention(q, k, v, { mask: new Array(15).fill(0) }), TypeError, [/^mask:/]],
    ['validLens too long', (a) => a.scaledDotProductAttention(q, k, v, { validLens: [6, 1] }), RangeError, [/^validLens:/, /\[0, 5\]/, /6/]],
    ['options a string', (a) => a.scaledDotProductAttention(q, k, v, 'causal'), TypeError, [/options/]],
  ],
  additiveAttention: [
    ['no options (no parameters)', (a) => a.additiveAttention(q, k, v), TypeError, [/^wv:/]],
    ['Wq of the wrong shape', (a) => a.additiveAttention(q, k, v, { Wq: randomTensor(rng, [7, 5]), Wk, wv }), RangeError, [/^Wq: expected shape \[7, 4\], got \[7, 5\]/]],
    ['v with another number of rows', (a) => a.additiveAttention(q, k, randomTensor(rng, [2, 3, 6]), { Wq, Wk, wv }), RangeError, [/^v: expected shape \[2, 5, \*\], got \[2, 3, 6\]/]],
    ['k of another batch', (a) => a.additiveAttention(q, randomTensor(rng, [1, 5, 4]), v, { Wq, Wk, wv }), RangeError, [/^k: expected shape \[2, \*, \*\], got \[1, 5, 4\]/]],
    ['dropout 1.5', (a) => a.additiveAttention(q, k, v, { Wq, Wk, wv, dropout: 1.5 }), RangeError, [/^dropout:/, /1\.5/]],
    ['validLens negative', (a) => a.additiveAttention(q, k, v, { Wq, Wk, wv, validLens: [-2, 1] }), RangeError, [/^validLens:/, /-2/]],
  ],
  kernelRegression: [
    ['no arguments', (a) => a.kernelRegression(), TypeError, [/^keys:/]],
    ['options a number', (a) => a.kernelRegression(5), TypeError, [/kernelRegression|options/]],
    ["kernel 'triangle'", (a) => a.kernelRegression({ keys, values, queries, kernel: 'triangle' }), RangeError, [/^kernel: expected 'gaussian' \| 'boxcar' \| 'epanechnikov' \| 'constant', got 'triangle'/]],
    ['kernel a number', (a) => a.kernelRegression({ keys, values, queries, kernel: 1 }), TypeError, [/^kernel:/]],
    ['bandwidth 0', (a) => a.kernelRegression({ keys, values, queries, bandwidth: 0 }), RangeError, [/^bandwidth:/, /got 0/]],
    ['bandwidth negative', (a) => a.kernelRegression({ keys, values, queries, bandwidth: -1 }), RangeError, [/^bandwidth:/, /-1/]],
    ['bandwidth Infinity', (a) => a.kernelRegression({ keys, values, queries, bandwidth: Infinity }), RangeError, [/^bandwidth:/, /Infinity/]],
    ['bandwidth NaN', (a) => a.kernelRegression({ keys, values, queries, bandwidth: NaN }), RangeError, [/^bandwidth:/, /NaN/]],
    ['bandwidth a string', (a) => a.kernelRegression({ keys, values, queries, bandwidth: '1' }), TypeError, [/^bandwidth:/]],
    ['values of another length', (a) => a.kernelRegression({ keys, values: randomTensor(rng, [4]), queries }), RangeError, [/^values: expected shape \[5, \*\]/]],
    ['queries of another width', (a) => a.kernelRegression({ keys: randomTensor(rng, [5, 2]), values, queries: randomTensor(rng, [3, 3]) }), RangeError, [/^queries: expected shape \[\*, 2\], got \[3, 3\]/]],
    ['keys of rank 3', (a) => a.kernelRegression({ keys: randomTensor(rng, [5, 1, 1]), values, queries }), RangeError, [/^keys: expected shape \[n, d\] or \[n\], got \[5, 1, 1\]/]],
    ['weights a number', (a) => a.kernelRegression({ keys, values, queries, weights: 1 }), TypeError, [/^weights:/]],
  ],
  leaveOneOut: [
    ['no bandwidths', (a) => a.leaveOneOut({ keys, values }), TypeError, [/^bandwidths:/]],
    ['bandwidths a number', (a) => a.leaveOneOut({ keys, values, bandwidths: 1 }), TypeError, [/^bandwidths:/]],
    ['a zero bandwidth', (a) => a.leaveOneOut({ keys, values, bandwidths: [1, 0] }), RangeError, [/^bandwidths\[1\]:/, /got 0/]],
    ['a string bandwidth', (a) => a.leaveOneOut({ keys, values, bandwidths: [1, '2'] }), TypeError, [/^bandwidths\[1\]:/]],
    ['a NaN bandwidth', (a) => a.leaveOneOut({ keys, values, bandwidths: [NaN] }), RangeError, [/^bandwidths\[0\]:/, /NaN/]],
    ["kernel 'cosine'", (a) => a.leaveOneOut({ keys, values, bandwidths: [1], kernel: 'cosine' }), RangeError, [/^kernel:/, /'cosine'/]],
    ['values of another length', (a) => a.leaveOneOut({ keys, values: randomTensor(rng, [6]), bandwidths: [1] }), RangeError, [/^values: expected shape \[5, \*\]/]],
  ],
  positionalEncoding: [
    ['n negative', (a) => a.positionalEncoding(-1, 4), RangeError, [/^n:/, /-1/]],
    ['d fractional', (a) => a.positionalEncoding(4, 2.5), RangeError, [/^d:/, /2\.5/]],
    ['n a string', (a) => a.positionalEncoding('4', 4), TypeError, [/^n:/]],
    ['d missing', (a) => a.positionalEncoding(4), TypeError, [/^d:/]],
    ['n NaN', (a) => a.positionalEncoding(NaN, 4), RangeError, [/^n:/, /NaN/]],
  ],
};

const mhaCases = (E = 8, H = 2) => {
  const mhaQ = randomTensor(rng, [2, 3, E]);
  const mhaK = randomTensor(rng, [2, 5, E]);
  const forward = (options, query = mhaQ, key = mhaK, value = key) => (a) => {
    const mha = new a.MultiHeadAttention({ embedDim: E, numHeads: H });
    try {
      return mha.forward(query, key, value, options);
    } finally {
      mha.dispose();
    }
  };
  return [
    ['config null', (a) => new a.MultiHeadAttention(null), TypeError, [/^config:/]],
    ['config without embedDim', (a) => new a.MultiHeadAttention({ numHeads: 2 }), TypeError, [/^embedDim:/]],
    ['numHeads not dividing embedDim', (a) => new a.MultiHeadAttention({ embedDim: 8, numHeads: 3 }), RangeError, [/^numHeads: expected a divisor of embedDim 8, got 3/]],
    ['embedDim 0', (a) => new a.MultiHeadAttention({ embedDim: 0, numHeads: 1 }), RangeError, [/^embedDim:/, /0/]],
    ['embedDim fractional', (a) => new a.MultiHeadAttention({ embedDim: 8.5, numHeads: 1 }), RangeError, [/^embedDim:/, /8\.5/]],
    ['numHeads 0', (a) => new a.MultiHeadAttention({ embedDim: 8, numHeads: 0 }), RangeError, [/^numHeads:/]],
    ['kdim negative', (a) => new a.MultiHeadAttention({ embedDim: 8, numHeads: 2, kdim: -1 }), RangeError, [/^kdim:/, /-1/]],
    ['vdim a string', (a) => new a.MultiHeadAttention({ embedDim: 8, numHeads: 2, vdim: '4' }), TypeError, [/^vdim:/]],
    ['bias a number', (a) => new a.MultiHeadAttention({ embedDim: 8, numHeads: 2, bias: 1 }), TypeError, [/^bias: expected a boolean/]],
    ['query of another width', forward({}, randomTensor(rng, [2, 3, 7])), RangeError, [/^query: expected shape \[\*, \*, 8\], got \[2, 3, 7\]/]],
    ['key of another batch', forward({}, mhaQ, randomTensor(rng, [3, 5, 8])), RangeError, [/^key: expected shape \[2, \*, 8\], got \[3, 5, 8\]/]],
    ['value with other rows', forward({}, mhaQ, mhaK, randomTensor(rng, [2, 4, 8])), RangeError, [/^value: expected shape \[2, 5, 8\], got \[2, 4, 8\]/]],
    ['keyPaddingMask of the wrong size', forward({ keyPaddingMask: new Uint8Array(6) }), RangeError, [/^keyPaddingMask: expected shape \[2, 5\]/]],
    ['keyPaddingMask a Float32Array', forward({ keyPaddingMask: new Float32Array(10) }), TypeError, [/^keyPaddingMask:/]],
    ['attnMask [L, S] transposed', forward({ attnMask: tensor(new Uint8Array(15), [5, 3], Uint8Array) }), RangeError, [/^attnMask: expected shape \[3, 5\] or \[4, 3, 5\], got \[5, 3\]/]],
    ['attnMask [B, L, S] instead of [B * H, L, S]', forward({ attnMask: tensor(new Float32Array(30), [2, 3, 5]) }), RangeError, [/^attnMask:/, /\[4, 3, 5\]/, /got \[2, 3, 5\]/]],
    ['needWeights a string', forward({ needWeights: 'no' }), TypeError, [/^needWeights:/]],
    ['averageAttnWeights a number', forward({ averageAttnWeights: 0 }), TypeError, [/^averageAttnWeights:/]],
    ['options null', forward(null), TypeError, [/^options:/]],
    ['validLens too long', forward({ validLens: [5, 6] }), RangeError, [/^validLens:/, /6/]],
  ];
};
CASES.MultiHeadAttention = mhaCases();

// Sizes no 32-bit wasm heap can hold, declared over tiny (or empty) data: they must fail on the
// shape or the allocation, before anything is allocated, with the argument named.
CASES['absurd sizes'] = [
  ['positionalEncoding(2^31, 4)', (a) => a.positionalEncoding(huge, 4), RangeError, [/^(output|n)\b/, /2147483648/]],
  ['positionalEncoding(2^53, 1)', (a) => a.positionalEncoding(2 ** 53, 1), RangeError, [/^(output|n)\b/]],
  ['SDPA with weights for 2^31 keys (empty data, d = 0)', (a) => a.scaledDotProductAttention(tensor([], [1, 1, 0]), tensor([], [1, huge, 0]), tensor([], [1, huge, 0]), { weights: true }), RangeError, [/^k\.shape\[1\]/, /2147483648/]],
  ['q declared [1, 2^31, 4] over 4 values', (a) => a.scaledDotProductAttention({ data: new Float32Array(4), shape: [1, huge, 4] }, k, v), RangeError, [/^q: shape \[1, 2147483648, 4\] holds 8589934592 values, but data has 4/]],
  ['score of 2^16 x 2^16 (d = 0)', (a) => a.score(tensor([], [1, 2 ** 16, 0]), tensor([], [1, 2 ** 16, 0])), RangeError, [/^scores\b/, /65536/]],
  ['bmm to [1, 2^16, 2^16]', (a) => a.bmm(tensor([], [1, 2 ** 16, 0]), tensor([], [1, 0, 2 ** 16])), RangeError, [/^output\b/, /65536/]],
  ['kernel-regression weights of 2^16 x 2^16 (dx = 0)', (a) => a.kernelRegression({ keys: tensor([], [2 ** 16, 0]), values: tensor(new Float32Array(2 ** 16), [2 ** 16]), queries: tensor([], [2 ** 16, 0]), weights: true }), RangeError, [/^weights\b/, /65536/, /limit of 4032 MiB/]],
  ['multi-head key declared [1, 2^30, 1] over 1 value', (a) => {
    const mha = new a.MultiHeadAttention({ embedDim: 1, numHeads: 1 });
    try {
      return mha.forward(tensor([1], [1, 1, 1]), { data: new Float32Array(1), shape: [1, 2 ** 30, 1] });
    } finally {
      mha.dispose();
    }
  }, RangeError, [/^key\b/, /1073741824/]],
  ['MultiHeadAttention({ embedDim: 2^20 }): 4 TiB of weights', (a) => new a.MultiHeadAttention({ embedDim: 2 ** 20, numHeads: 1 }), RangeError, [/embedDim/, /1048576/]],
  ['MultiHeadAttention({ embedDim: 2^31 })', (a) => new a.MultiHeadAttention({ embedDim: huge, numHeads: 1 }), RangeError, [/embedDim/, /(?<!-)2147483648/]],
  ['MultiHeadAttention({ kdim: 2^31 })', (a) => new a.MultiHeadAttention({ embedDim: 4, numHeads: 1, kdim: huge }), RangeError, [/kdim/, /(?<!-)2147483648/]],
];

for (const attn of backends) {
  describe(`argument errors (${labelOf(attn)})`, () => {
    for (const [group, cases] of Object.entries(CASES)) {
      describe(group, () => {
        for (const [name, call, ErrorType, patterns] of cases) {
          test(`${name} -> ${ErrorType.name}`, () => {
            assertThrowsNamed(() => call(attn), ErrorType, patterns);
            assertStillWorks(attn);
          });
        }
      });
    }

    // Sizes beyond int32 over empty data: the mathematically right answer is an empty (or
    // all-zero) tensor, so either that comes back, or a RangeError naming the argument and the
    // size as given (not wrapped around to a negative int32).
    describe('sizes beyond int32 over empty data', () => {
      const emptyOrNamed = (call, expectedShape, name) => {
        let result;
        try {
          result = call();
        } catch (error) {
          assert.ok(error instanceof RangeError, `${error.name}: ${error.message}`);
          assert.match(error.message, new RegExp(`^${name}\\b`), `the message names ${name}`);
          assert.doesNotMatch(error.message, /-2147483648/, 'the size is reported as given, not wrapped to int32');
          return;
        }
        assert.deepEqual(result.shape ?? result.output.shape, expectedShape);
      };

      test('positionalEncoding(2^31, 0)', () => {
        emptyOrNamed(() => attn.positionalEncoding(huge, 0), [huge, 0], 'n');
        assertStillWorks(attn);
      });

      test('SDPA without weights over 2^31 keys of width 0', () => {
        emptyOrNamed(() => attn.scaledDotProductAttention(tensor([], [1, 1, 0]), tensor([], [1, huge, 0]), tensor([], [1, huge, 0])), [1, 1, 0], 'k');
        assertStillWorks(attn);
      });

      test('maskedSoftmax, score, bmm with a 2^31 axis and no data', () => {
        emptyOrNamed(() => attn.maskedSoftmax(tensor([], [1, huge, 0]), Int32Array.from([0])), [1, huge, 0], 'x');
        emptyOrNamed(() => attn.score(tensor([], [1, huge, 0]), tensor([], [1, 0, 0])), [1, huge, 0], 'q');
        emptyOrNamed(() => attn.bmm(tensor([], [1, huge, 0]), tensor([], [1, 0, 0])), [1, huge, 0], 'a');
        assertStillWorks(attn);
      });
    });
  });
}

describe('loadAttention options', () => {
  test('simd not a boolean -> TypeError', async () => {
    await assert.rejects(loadAttention({ simd: 'yes' }), { name: 'TypeError', message: /^simd: expected a boolean/ });
  });

  test('options not an object -> TypeError', async () => {
    await assert.rejects(loadAttention(null), { name: 'TypeError', message: /^options:/ });
    await assert.rejects(loadAttention('simd'), { name: 'TypeError', message: /^options:/ });
  });

  test('wasmUrl not a string or URL -> TypeError', async () => {
    await assert.rejects(loadAttention({ wasmUrl: 42 }), { name: 'TypeError', message: /^wasmUrl:/ });
  });

  test('simd: true loads the SIMD build here', async () => {
    assert.equal((await loadAttention({ simd: true })).backend, 'wasm-simd');
  });
});
