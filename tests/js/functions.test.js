// Every stateless function of the API against the double-precision reference, on non-square
// shapes, for the three builds; then the properties the notes rely on (rows sum to 1, masked
// weights exactly 0, shift invariance, huge logits, empty and length-1 sequences, d = 1) and the
// d2l examples.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, expectedBackends, labelOf, singleLoad } from './backends.js';
import * as ref from '../../harness/reference.js';

const { assertClose, assertRowsSumToOne, mulberry32, randomTensor, tensor, LOOSE } = ref;

test('the default load is the SIMD build with relaxed SIMD, { relaxedSimd: false } without it and { simd: false } the scalar one', () => {
  assert.deepEqual(backends.map(({ backend, relaxedSimd }) => ({ backend, relaxedSimd })), expectedBackends);
});

for (const attn of backends) {
  describe(`functions (${labelOf(attn)})`, () => {
    describe('softmax', () => {
      for (const shape of [[3, 5], [2, 3, 7], [7], [4, 1], [1, 2, 3, 4]]) {
        test(`matches the reference on shape [${shape}]`, () => {
          const x = randomTensor(mulberry32(shape.length * 31 + shape[0]), shape, -4, 4);
          const got = attn.softmax(x);
          assertClose(got, ref.softmax(x));
          assertRowsSumToOne(got);
        });
      }

      test('does not modify its input', () => {
        const x = randomTensor(mulberry32(2), [3, 4]);
        const copy = Float32Array.from(x.data);
        attn.softmax(x);
        assert.deepEqual(x.data, copy);
      });

      test('is shift invariant', () => {
        // Multiples of 1/8 in [-4, 4]: x + 1000 and x - 1000 are exact in float32.
        const rng = mulberry32(3);
        const x = tensor(Array.from({ length: 24 }, () => Math.round((rng() * 8 - 4) * 8) / 8), [4, 6]);
        const base = attn.softmax(x);
        for (const shift of [1000, -1000, 0.5]) {
          const shifted = attn.softmax(tensor(x.data.map((v) => v + shift), x.shape));
          assertClose(shifted, base, { label: `shift ${shift}` });
        }
      });

      test('logits of ±1e4 give finite, exact results', () => {
        const got = attn.softmax(tensor([1e4, -1e4, 0, 1e4, -1e4, -1e4, -1e4, -1e4], [2, 4]));
        assert.deepEqual(Array.from(got.data), [0.5, 0, 0, 0.5, 0.25, 0.25, 0.25, 0.25]);
      });

      test('logits in [90, 100] (exp overflows float32) stay finite and match', () => {
        const x = randomTensor(mulberry32(4), [3, 50], 90, 100);
        const got = attn.softmax(x);
        assert.ok(got.data.every(Number.isFinite), 'all finite');
        assertClose(got, ref.softmax(x));
        assertRowsSumToOne(got);
      });

      test("two-logit rows follow the logistic closed form over exp's whole float range", () => {
        // softmax([x, 0])[0] = e^x / (1 + e^x) for x through [-87, 0], in steps that meet every
        // rounding position of exp's range reduction. The bound: a few float roundings, plus
        // exp's condition number |x| times the rounding of the float argument x log2(e).
        const count = 20000;
        const x = new Float32Array(2 * count);
        for (let i = 0; i < count; i++) x[2 * i] = (-87 * i) / (count - 1);
        const got = attn.softmax(tensor(x, [count, 2])).data;
        for (let i = 0; i < count; i++) {
          const e = Math.exp(x[2 * i]);
          const relativeError = Math.abs(got[2 * i] / (e / (1 + e)) - 1);
          if (relativeError > 4e-7 + 1e-7 * Math.abs(x[2 * i])) assert.fail(`x = ${x[2 * i]}: relative error ${relativeError}`);
        }
      });

      test('a row of one element is 1', () => {
        assert.deepEqual(Array.from(attn.softmax(tensor([-3, 0, 1e4], [3, 1])).data), [1, 1, 1]);
      });

      test('empty tensors keep their shape', () => {
        for (const shape of [[0], [3, 0], [0, 3], [2, 0, 4]]) {
          const got = attn.softmax(tensor([], shape));
          assert.deepEqual(got.shape, shape);
          assert.equal(got.data.length, 0);
        }
      });
    });

    describe('maskedSoftmax', () => {
      const x = randomTensor(mulberry32(10), [2, 3, 5], -2, 2);

      test('no valid lengths is a plain softmax', () => {
        assertClose(attn.maskedSoftmax(x), ref.softmax(x));
        assertClose(attn.maskedSoftmax(x, null), ref.softmax(x));
      });

      for (const [name, lens] of [
        ['per batch row (Int32Array)', Int32Array.from([2, 4])],
        ['per batch row (number[])', [5, 1]],
        ['per query (Int32Array [B * nq])', Int32Array.from([1, 2, 3, 5, 4, 0])],
        ['per query (tensor [B, nq])', tensor([1, 2, 3, 5, 4, 2], [2, 3], Int32Array)],
      ]) {
        test(`valid lengths ${name} match the reference, masked weights are exactly 0`, () => {
          const got = attn.maskedSoftmax(x, lens);
          const want = ref.maskedSoftmax(x, ref.tensor(lens.data ?? lens, [lens.length ?? lens.data.length], Int32Array));
          assertClose(got, want);
          assertRowsSumToOne(got);
          const flat = Array.from(lens.data ?? lens);
          for (let b = 0; b < 2; b++) {
            for (let i = 0; i < 3; i++) {
              const len = flat.length === 2 ? flat[b] : flat[b * 3 + i];
              if (len === 0) continue; // a fully masked row is uniform (d2l), tested below
              for (let j = len; j < 5; j++) assert.equal(got.data[(b * 3 + i) * 5 + j], 0, `[${b}, ${i}, ${j}]`);
            }
          }
        });
      }

      test('a zero length gives a uniform row with the default fill (d2l) and NaN with -Infinity (PyTorch)', () => {
        const lens = Int32Array.from([0, 3]);
        const uniform = attn.maskedSoftmax(x, lens);
        for (let j = 0; j < 15; j++) assert.ok(Math.abs(uniform.data[j] - 0.2) < 1e-6, `uniform at ${j}: ${uniform.data[j]}`);
        assertClose(uniform, ref.maskedSoftmax(x, lens));
        const nan = attn.maskedSoftmax(x, lens, { fill: -Infinity });
        assertClose(nan, ref.maskedSoftmax(x, lens, { fill: -Infinity }));
        assert.ok(nan.data.subarray(0, 15).every(Number.isNaN), 'batch row 0 is NaN');
        assert.ok(nan.data.subarray(15).every(Number.isFinite), 'batch row 1 is finite');
      });

      test('logits of ±1e4 and in [90, 100] stay finite', () => {
        const big = tensor(Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? 1e4 : i % 3 === 1 ? -1e4 : 95 + (i % 5))), [2, 3, 5]);
        const got = attn.maskedSoftmax(big, [4, 2]);
        assert.ok(got.data.every(Number.isFinite));
        assertClose(got, ref.maskedSoftmax(big, [4, 2]));
      });

      test('a custom finite fill is used as the masked score', () => {
        const lens = Int32Array.from([2, 3]);
        assertClose(attn.maskedSoftmax(x, lens, { fill: -1 }), ref.maskedSoftmax(x, lens, { fill: -1 }));
      });

      test("d2l: masked_softmax(rand(2, 2, 4), [2, 3])", () => {
        const scores = randomTensor(mulberry32(11), [2, 2, 4], 0, 1);
        const got = attn.maskedSoftmax(scores, Int32Array.from([2, 3]));
        assert.deepEqual(got.shape, [2, 2, 4]);
        assertClose(got, ref.maskedSoftmax(scores, [2, 3]));
        const nonZero = Array.from({ length: 4 }, (_, r) => got.data.subarray(r * 4, r * 4 + 4).filter((w) => w > 0).length);
        assert.deepEqual(nonZero, [2, 2, 3, 3]);
      });

      test("d2l: masked_softmax(rand(2, 2, 4), [[1, 3], [2, 4]])", () => {
        const scores = randomTensor(mulberry32(12), [2, 2, 4], 0, 1);
        const lens = tensor([1, 3, 2, 4], [2, 2], Int32Array);
        const got = attn.maskedSoftmax(scores, lens);
        assertClose(got, ref.maskedSoftmax(scores, lens));
        const nonZero = Array.from({ length: 4 }, (_, r) => got.data.subarray(r * 4, r * 4 + 4).filter((w) => w > 0).length);
        assert.deepEqual(nonZero, [1, 3, 2, 4]);
        assert.equal(got.data[0], 1);
      });

      test('zero-length axes: nk = 0, nq = 0, B = 0', () => {
        for (const [shape, lens] of [[[2, 3, 0], [0, 0]], [[2, 0, 4], [4, 1]], [[0, 3, 4], []]]) {
          const got = attn.maskedSoftmax(tensor([], shape), Int32Array.from(lens));
          assert.deepEqual(got.shape, shape);
          assert.equal(got.data.length, 0);
        }
      });
    });

    describe('score', () => {
      const rng = mulberry32(20);
      const q = randomTensor(rng, [2, 3, 4]);
      const k = randomTensor(rng, [2, 5, 4]);
      const k6 = randomTensor(rng, [2, 5, 6]);
      const Wq = randomTensor(rng, [7, 4]);
      const Wk = randomTensor(rng, [7, 6]);
      const wv = randomTensor(rng, [7]);
      const W = randomTensor(rng, [4, 6]);

      for (const fn of ['dot', 'scaled-dot', 'neg-sq-dist']) {
        test(`'${fn}' matches the reference on q [2, 3, 4], k [2, 5, 4]`, () => {
          assertClose(attn.score(q, k, { fn }), ref.score(q, k, { fn }));
        });
      }

      test("the default is 'scaled-dot'", () => {
        assertClose(attn.score(q, k), ref.score(q, k, { fn: 'scaled-dot' }));
      });

      test("'additive' wv·tanh(Wq q + Wk k) with Wq [7, 4], Wk [7, 6], wv [7] (PyTorch layout)", () => {
        assertClose(attn.score(q, k6, { fn: 'additive', Wq, Wk, wv }), ref.score(q, k6, { fn: 'additive', Wq, Wk, wv }));
      });

      test("'general' qᵀ W k with W [4, 6]", () => {
        assertClose(attn.score(q, k6, { fn: 'general', W }), ref.score(q, k6, { fn: 'general', W }));
      });

      test("'neg-sq-dist' is exactly 0 for identical points and -|q-k|²/2 for nearby ones", () => {
        const p = tensor([1000.25, -3, 1000.5, -3], [1, 2, 2]);
        const got = attn.score(p, p, { fn: 'neg-sq-dist' });
        assert.deepEqual(Array.from(got.data, (x) => x + 0), [0, -0.03125, -0.03125, 0]);
      });

      test('d = 1, nk = 1, nk = 0, nq = 0, B = 0', () => {
        const q1 = randomTensor(rng, [2, 3, 1]);
        const k1 = randomTensor(rng, [2, 4, 1]);
        for (const fn of ['dot', 'scaled-dot', 'neg-sq-dist']) {
          assertClose(attn.score(q1, k1, { fn }), ref.score(q1, k1, { fn }), { label: `d = 1, ${fn}` });
        }
        const oneKey = randomTensor(rng, [2, 1, 4]);
        assertClose(attn.score(q, oneKey), ref.score(q, oneKey), { label: 'nk = 1' });
        for (const [qs, ks] of [[[2, 3, 4], [2, 0, 4]], [[2, 0, 4], [2, 5, 4]], [[0, 3, 4], [0, 5, 4]]]) {
          const got = attn.score(randomTensor(rng, qs), randomTensor(rng, ks));
          assert.deepEqual(got.shape, [qs[0], qs[1], ks[1]]);
          assert.equal(got.data.length, 0);
        }
      });
    });

    describe('bmm', () => {
      test('matches the reference on [2, 3, 4] x [2, 4, 5]', () => {
        const rng = mulberry32(30);
        const a = randomTensor(rng, [2, 3, 4]);
        const b = randomTensor(rng, [2, 4, 5]);
        assertClose(attn.bmm(a, b), ref.bmm(a, b));
      });

      // Sums of 1000 products of size ~0.25 carry float32 rounding of ~1e-5 in absolute terms,
      // which the 1e-6 absolute tolerance cannot absorb where the sum cancels to ~0.01.
      test('a long inner axis (k = 1000) within the looser float32 tolerance', () => {
        const rng = mulberry32(31);
        const a = randomTensor(rng, [1, 3, 1000]);
        const b = randomTensor(rng, [1, 1000, 2]);
        assertClose(attn.bmm(a, b), ref.bmm(a, b), LOOSE);
      });

      test('an empty inner axis gives zeros; empty outer axes give empty tensors', () => {
        const zeros = attn.bmm(tensor([], [2, 3, 0]), tensor([], [2, 0, 4]));
        assert.deepEqual(zeros.shape, [2, 3, 4]);
        assert.ok(zeros.data.every((v) => v === 0));
        assert.equal(attn.bmm(tensor([], [0, 3, 2]), tensor([], [0, 2, 4])).data.length, 0);
        assert.deepEqual(attn.bmm(tensor([], [1, 0, 2]), tensor([1, 2], [1, 2, 1])).shape, [1, 0, 1]);
      });
    });

    describe('scaledDotProductAttention', () => {
      const rng = mulberry32(40);
      const q = randomTensor(rng, [2, 3, 4]);
      const k = randomTensor(rng, [2, 5, 4]);
      const v = randomTensor(rng, [2, 5, 6]);
      const boolMask = ref.randomBits(rng, 15);
      const boolMaskBatched = ref.randomBits(rng, 30);
      const additive = randomTensor(rng, [3, 5], -2, 2);
      const additiveBatched = randomTensor(rng, [2, 3, 5], -2, 2);

      const cases = [
        ['no options', {}],
        ['validLens [B]', { validLens: Int32Array.from([3, 5]) }],
        ['validLens [B, nq]', { validLens: tensor([1, 2, 3, 5, 4, 1], [2, 3], Int32Array) }],
        ['bool mask [nq, nk] (bare Uint8Array)', { mask: boolMask }],
        ['bool mask [B, nq, nk] (tensor)', { mask: tensor(boolMaskBatched, [2, 3, 5], Uint8Array) }],
        ['additive mask [nq, nk] (tensor)', { mask: additive }],
        ['additive mask [B, nq, nk] (bare Float32Array)', { mask: additiveBatched.data }],
        ['causal', { causal: true }],
        ['scale 0.3', { scale: 0.3 }],
        ['validLens + causal + additive mask', { validLens: [4, 2], causal: true, mask: additive }],
        ['fill -Infinity with a zero length', { validLens: [0, 2], fill: -Infinity }],
        ['default fill with a zero length (uniform)', { validLens: [0, 2] }],
      ];
      for (const [name, options] of cases) {
        test(`${name}: output and weights match the reference`, () => {
          const got = attn.scaledDotProductAttention(q, k, v, { ...options, weights: true });
          const want = ref.scaledDotProductAttention(q, k, v, options);
          assertClose(got.output, want.output, { label: 'output' });
          assertClose(got.weights, want.weights, { label: 'weights' });
          if (options.fill !== -Infinity) assertRowsSumToOne(got.weights);
        });
      }

      test('scores of order ±1e4 (scale 2e3) stay finite and match', () => {
        const got = attn.scaledDotProductAttention(q, k, v, { scale: 2e3, weights: true, validLens: [5, 3] });
        const want = ref.scaledDotProductAttention(q, k, v, { scale: 2e3, validLens: [5, 3] });
        assert.ok(got.output.data.every(Number.isFinite) && got.weights.data.every(Number.isFinite));
        assertClose(got.output, want.output, { label: 'output' });
        assertClose(got.weights, want.weights, { label: 'weights' });
      });

      test('weights are omitted unless requested, and the output is the same', () => {
        const without = attn.scaledDotProductAttention(q, k, v, { validLens: [3, 5] });
        assert.equal(without.weights, undefined);
        const withWeights = attn.scaledDotProductAttention(q, k, v, { validLens: [3, 5], weights: true });
        assert.deepEqual(without.output, withWeights.output);
      });

      test('masked weights are exactly 0 (validLens, bool mask, causal)', () => {
        const { weights } = attn.scaledDotProductAttention(q, k, v, { validLens: [3, 4], mask: boolMask, causal: true, weights: true });
        const want = ref.scaledDotProductAttention(q, k, v, { validLens: [3, 4], mask: boolMask, causal: true });
        let masked = 0;
        for (let b = 0; b < 2; b++) {
          for (let i = 0; i < 3; i++) {
            for (let j = 0; j < 5; j++) {
              const hidden = j >= [3, 4][b] || boolMask[i * 5 + j] === 1 || j > i;
              const allHidden = [0, 1, 2, 3, 4].every((c) => c >= [3, 4][b] || boolMask[i * 5 + c] === 1 || c > i);
              if (hidden && !allHidden) {
                assert.equal(weights.data[(b * 3 + i) * 5 + j], 0, `[${b}, ${i}, ${j}]`);
                masked++;
              }
            }
          }
        }
        assert.ok(masked > 0);
        assertClose(weights, want.weights);
      });

      test('length-1 sequences: one key gets all the weight, the output is its value', () => {
        const v1 = randomTensor(rng, [2, 1, 6]);
        const got = attn.scaledDotProductAttention(q, randomTensor(rng, [2, 1, 4]), v1, { weights: true });
        assert.ok(got.weights.data.every((w) => w === 1));
        for (let b = 0; b < 2; b++) {
          for (let i = 0; i < 3; i++) assertClose(got.output.data.subarray((b * 3 + i) * 6, (b * 3 + i + 1) * 6), v1.data.subarray(b * 6, b * 6 + 6));
        }
        const one = attn.scaledDotProductAttention(randomTensor(rng, [1, 1, 4]), randomTensor(rng, [1, 1, 4]), tensor([7], [1, 1, 1]));
        assert.deepEqual(Array.from(one.output.data), [7]);
      });

      test('nk = 0 gives zero outputs (the empty sum) and empty weights', () => {
        const got = attn.scaledDotProductAttention(q, tensor([], [2, 0, 4]), tensor([], [2, 0, 6]), { weights: true, validLens: [0, 0] });
        assert.deepEqual(got.output.shape, [2, 3, 6]);
        assert.ok(got.output.data.every((x) => x === 0));
        assert.deepEqual(got.weights.shape, [2, 3, 0]);
      });

      test('nq = 0 and B = 0 give empty results of the right shape', () => {
        const noQueries = attn.scaledDotProductAttention(tensor([], [2, 0, 4]), k, v, { weights: true, validLens: [1, 2] });
        assert.deepEqual(noQueries.output.shape, [2, 0, 6]);
        assert.deepEqual(noQueries.weights.shape, [2, 0, 5]);
        const noBatch = attn.scaledDotProductAttention(tensor([], [0, 3, 4]), tensor([], [0, 5, 4]), tensor([], [0, 5, 6]), { weights: true });
        assert.deepEqual(noBatch.output.shape, [0, 3, 6]);
        assert.deepEqual(noBatch.weights.shape, [0, 3, 5]);
      });

      test('d = 1 matches the reference', () => {
        const q1 = randomTensor(rng, [2, 3, 1], -3, 3);
        const k1 = randomTensor(rng, [2, 4, 1], -3, 3);
        const v1 = randomTensor(rng, [2, 4, 2]);
        const got = attn.scaledDotProductAttention(q1, k1, v1, { weights: true, validLens: [4, 3] });
        const want = ref.scaledDotProductAttention(q1, k1, v1, { validLens: [4, 3] });
        assertClose(got.output, want.output);
        assertClose(got.weights, want.weights);
      });

      test('null mask options mean no mask (PyTorch None); null for other options is a TypeError', () => {
        const r = mulberry32(43);
        const [qq, kk, vv] = [randomTensor(r, [2, 3, 4]), randomTensor(r, [2, 5, 4]), randomTensor(r, [2, 5, 3])];
        const none = { validLens: null, mask: null, causal: null, fill: null };
        const got = attn.scaledDotProductAttention(qq, kk, vv, { ...none, weights: true });
        const want = ref.scaledDotProductAttention(qq, kk, vv);
        assertClose(got.output, want.output, { label: 'output' });
        assertClose(got.weights, want.weights, { label: 'weights' });
        assert.throws(() => attn.scaledDotProductAttention(qq, kk, vv, { weights: null }),
          { name: 'TypeError', message: /^weights: expected a boolean, got null/ });
      });

      test('a longer sequence (nq 33, nk 257, d 64, dv 17)', () => {
        const r = mulberry32(41);
        const qq = randomTensor(r, [1, 33, 64]);
        const kk = randomTensor(r, [1, 257, 64]);
        const vv = randomTensor(r, [1, 257, 17]);
        const got = attn.scaledDotProductAttention(qq, kk, vv, { weights: true, causal: true });
        const want = ref.scaledDotProductAttention(qq, kk, vv, { causal: true });
        assertClose(got.output, want.output, { label: 'output' });
        assertClose(got.weights, want.weights, { label: 'weights' });
      });
    });

    describe('additiveAttention', () => {
      const rng = mulberry32(50);
      const q = randomTensor(rng, [2, 3, 4]);
      const k = randomTensor(rng, [2, 5, 6]);
      const v = randomTensor(rng, [2, 5, 3]);
      const params = { Wq: randomTensor(rng, [8, 4]), Wk: randomTensor(rng, [8, 6]), wv: randomTensor(rng, [8]) };

      for (const [name, options] of [
        ['no mask', {}],
        ['validLens [B]', { validLens: [2, 4] }],
        ['validLens [B, nq]', { validLens: Int32Array.from([1, 5, 3, 2, 2, 4]) }],
        ['causal', { causal: true }],
      ]) {
        test(`${name}: matches the reference`, () => {
          const got = attn.additiveAttention(q, k, v, { ...params, ...options, weights: true });
          const want = ref.additiveAttention(q, k, v, { ...params, ...options });
          assertClose(got.output, want.output, { label: 'output' });
          assertClose(got.weights, want.weights, { label: 'weights' });
          assertRowsSumToOne(got.weights);
        });
      }

      test("d2l's example: queries [2, 1, 20], keys ones [2, 10, 2], values arange(40) [2, 10, 4], valid_lens [2, 6]", () => {
        const r = mulberry32(51);
        const queries = randomTensor(r, [2, 1, 20], 0, 1);
        const keys = tensor(new Float32Array(40).fill(1), [2, 10, 2]);
        const values = tensor(Float32Array.from({ length: 80 }, (_, i) => i % 40), [2, 10, 4]); // arange(40).repeat(2)
        const p = { Wq: randomTensor(r, [8, 20], -0.1, 0.1), Wk: randomTensor(r, [8, 2], -0.1, 0.1), wv: randomTensor(r, [8], -0.1, 0.1) };
        const got = attn.additiveAttention(queries, keys, values, { ...p, validLens: [2, 6], weights: true });
        assert.deepEqual(got.output.shape, [2, 1, 4]);
        // Identical keys: uniform weights over the valid ones.
        for (let j = 0; j < 10; j++) {
          assert.ok(Math.abs(got.weights.data[j] - (j < 2 ? 0.5 : 0)) < 1e-6);
          assert.ok(Math.abs(got.weights.data[10 + j] - (j < 6 ? 1 / 6 : 0)) < 1e-6);
        }
        assertClose(got.output, ref.additiveAttention(queries, keys, values, { ...p, validLens: [2, 6] }).output);
      });

      test('nk = 0 and nq = 0', () => {
        const empty = attn.additiveAttention(q, tensor([], [2, 0, 6]), tensor([], [2, 0, 3]), { ...params, weights: true });
        assert.deepEqual(empty.output.shape, [2, 3, 3]);
        assert.ok(empty.output.data.every((x) => x === 0));
        const none = attn.additiveAttention(tensor([], [2, 0, 4]), k, v, { ...params, weights: true });
        assert.deepEqual(none.output.shape, [2, 0, 3]);
      });
    });

    describe('kernelRegression', () => {
      const rng = mulberry32(60);
      const keys1 = randomTensor(rng, [40], 0, 5);
      const values1 = tensor(keys1.data.map((x) => 2 * Math.sin(x) + x ** 0.8), [40]);
      const queries1 = randomTensor(rng, [25], 0, 5);
      const keys2 = randomTensor(rng, [30, 2], -1, 1);
      const values2 = randomTensor(rng, [30, 3]);
      const queries2 = randomTensor(rng, [7, 2], -1, 1);

      for (const kernel of ['gaussian', 'boxcar', 'epanechnikov', 'constant']) {
        for (const bandwidth of [0.5, 2]) {
          test(`${kernel}, σ = ${bandwidth}: 1-D keys [40] and 2-D keys [30, 2] with values [30, 3]`, () => {
            for (const [keys, values, queries] of [[keys1, values1, queries1], [keys2, values2, queries2]]) {
              const got = attn.kernelRegression({ keys, values, queries, kernel, bandwidth, weights: true });
              const want = ref.kernelRegression({ keys, values, queries, kernel, bandwidth });
              assertClose(got.output, want.output, { label: 'output' });
              assertClose(got.weights, want.weights, { label: 'weights' });
              assertRowsSumToOne(got.weights);
            }
          });
        }
      }

      test('defaults: gaussian, σ = 1, no weights', () => {
        const got = attn.kernelRegression({ keys: keys1, values: values1, queries: queries1 });
        assert.equal(got.weights, undefined);
        assert.deepEqual(got.output.shape, [25, 1]);
        assertClose(got.output, ref.kernelRegression({ keys: keys1, values: values1, queries: queries1 }).output);
      });

      test('a query no key reaches (boxcar, small σ) has zero weights and a NaN output', () => {
        const keys = tensor([0, 1, 2], [3]);
        const queries = tensor([0.05, 10], [2]);
        for (const kernel of ['boxcar', 'epanechnikov']) {
          const got = attn.kernelRegression({ keys, values: tensor([1, 2, 3], [3]), queries, kernel, bandwidth: 0.1, weights: true });
          assert.ok(Math.abs(got.output.data[0] - 1) < 1e-6, `${kernel}: ${got.output.data[0]}`);
          assert.ok(Number.isNaN(got.output.data[1]), `${kernel}: NaN for the unreachable query`);
          assert.deepEqual(Array.from(got.weights.data.subarray(3)), [0, 0, 0]);
        }
      });

      test('Gaussian kernel with σ = 1: the weights are softmax of the neg-sq-dist score', () => {
        const keys = randomTensor(rng, [12, 3]);
        const queries = randomTensor(rng, [5, 3]);
        const { weights } = attn.kernelRegression({ keys, values: randomTensor(rng, [12]), queries, kernel: 'gaussian', bandwidth: 1, weights: true });
        const scores = attn.score({ data: queries.data, shape: [1, 5, 3] }, { data: keys.data, shape: [1, 12, 3] }, { fn: 'neg-sq-dist' });
        const soft = attn.softmax(scores);
        assertClose(weights.data, soft.data);
      });

      test('one key, zero queries, zero keys', () => {
        const one = attn.kernelRegression({ keys: tensor([1], [1]), values: tensor([5, 6], [1, 2]), queries: tensor([-3, 0, 9], [3]) });
        assert.deepEqual(Array.from(one.output.data), [5, 6, 5, 6, 5, 6]);
        const noQueries = attn.kernelRegression({ keys: keys1, values: values1, queries: tensor([], [0]), weights: true });
        assert.deepEqual(noQueries.output.shape, [0, 1]);
        assert.deepEqual(noQueries.weights.shape, [0, 40]);
        const noKeys = attn.kernelRegression({ keys: tensor([], [0]), values: tensor([], [0]), queries: tensor([1, 2], [2]) });
        assert.deepEqual(noKeys.output.shape, [2, 1]);
        assert.ok(noKeys.output.data.every(Number.isNaN), 'no key reaches any query');
      });
    });

    describe('kernelValues', () => {
      // On, below and past the bandwidth (boxcar includes d = σ), and at Infinity.
      const distances = tensor([0, 0.25, 0.5, 1, 1.5, 2, 10, Infinity], [2, 4]);
      for (const kernel of ['gaussian', 'boxcar', 'epanechnikov', 'constant']) {
        test(`${kernel} matches the reference at distance / bandwidth, shape kept`, () => {
          const got = attn.kernelValues({ distances, kernel, bandwidth: 0.5 });
          assert.deepEqual(got.shape, [2, 4]);
          assertClose(got, ref.kernelValues({ distances, kernel, bandwidth: 0.5 }));
        });
      }

      test('defaults to the Gaussian kernel with bandwidth 1', () => {
        assertClose(attn.kernelValues({ distances: tensor([0, 1, 2], [3]) }), tensor([1, Math.exp(-0.5), Math.exp(-2)], [3]));
      });

      test('are the unnormalised weights kernelRegression gives one query', () => {
        const keys = randomTensor(mulberry32(61), [12], -2, 2);
        const { weights } = attn.kernelRegression({ keys, values: keys, queries: tensor([0], [1]), kernel: 'epanechnikov', bandwidth: 1.5, weights: true });
        const K = attn.kernelValues({ distances: tensor(keys.data.map(Math.abs), [12]), kernel: 'epanechnikov', bandwidth: 1.5 }).data;
        const sum = K.reduce((a, b) => a + b, 0);
        assertClose(weights, tensor(Array.from(K, (k) => k / sum), [1, 12]));
      });

      test('a negative or NaN distance and a bad bandwidth are RangeErrors naming them', () => {
        assert.throws(() => attn.kernelValues({ distances: tensor([0, 1, -0.5], [3]) }),
          { name: 'RangeError', message: 'distances: expected distances >= 0, got -0.5 at index 2' });
        assert.throws(() => attn.kernelValues({ distances: tensor([NaN], [1]) }), { name: 'RangeError', message: /^distances: .* got NaN at index 0/ });
        assert.throws(() => attn.kernelValues({ distances: tensor([1], [1]), bandwidth: 0 }), { name: 'RangeError', message: /^bandwidth: / });
        assert.deepEqual(attn.kernelValues({ distances: tensor([], [0]) }).shape, [0]);
      });
    });

    describe('leaveOneOut', () => {
      const rng = mulberry32(70);
      const keys = randomTensor(rng, [50], 0, 5);
      const values = tensor(keys.data.map((x, i) => 2 * Math.sin(x) + x ** 0.8 + 0.3 * Math.sin(37 * i)), [50]);
      const bandwidths = [0.05, 0.1, 0.3, 1, 3];

      for (const kernel of ['gaussian', 'boxcar', 'epanechnikov', 'constant']) {
        test(`${kernel}: errors and best bandwidth match the reference`, () => {
          const got = attn.leaveOneOut({ keys, values, kernel, bandwidths });
          const want = ref.leaveOneOut({ keys, values, kernel, bandwidths: bandwidths.map(Math.fround) });
          assert.ok(got.errors instanceof Float32Array);
          assertClose(got.errors, want.errors, { label: 'errors' });
          assert.equal(got.best, Number.isNaN(want.best) ? NaN : Math.fround(want.best));
        });
      }

      test('2-D keys and values, bandwidths as a Float32Array', () => {
        const k2 = randomTensor(rng, [20, 2]);
        const v2 = randomTensor(rng, [20, 2]);
        const got = attn.leaveOneOut({ keys: k2, values: v2, bandwidths: Float32Array.from([0.2, 0.5, 2]) });
        const want = ref.leaveOneOut({ keys: k2, values: v2, bandwidths: Float32Array.from([0.2, 0.5, 2]) });
        assertClose(got.errors, want.errors);
        assert.equal(got.best, Math.fround(want.best));
      });

      test('a key no other key reaches makes the error Infinity; none finite gives best NaN', () => {
        const far = tensor([0, 0.1, 0.2, 50], [4]);
        const got = attn.leaveOneOut({ keys: far, values: tensor([1, 2, 3, 4], [4]), kernel: 'boxcar', bandwidths: [1, 100] });
        assert.equal(got.errors[0], Infinity);
        assert.ok(Number.isFinite(got.errors[1]));
        assert.equal(got.best, 100);
        const none = attn.leaveOneOut({ keys: far, values: tensor([1, 2, 3, 4], [4]), kernel: 'boxcar', bandwidths: [1] });
        assert.ok(Number.isNaN(none.best));
        const single = attn.leaveOneOut({ keys: tensor([1], [1]), values: tensor([1], [1]), bandwidths: [1] });
        assert.equal(single.errors[0], Infinity);
        assert.ok(Number.isNaN(single.best));
      });
    });

    describe('positionalEncoding', () => {
      for (const [n, d] of [[7, 6], [5, 5], [1, 1], [1000, 64], [3, 32]]) {
        test(`[${n}, ${d}] matches sin/cos(i / 10000^(2j/d))`, () => {
          assertClose(attn.positionalEncoding(n, d), ref.positionalEncoding(n, d));
        });
      }

      test('row 0 is [0, 1, 0, 1, ...]', () => {
        assert.deepEqual(Array.from(attn.positionalEncoding(1, 6).data), [0, 1, 0, 1, 0, 1]);
      });

      test('n = 0 and d = 0 give empty tensors', () => {
        assert.deepEqual(attn.positionalEncoding(0, 4).shape, [0, 4]);
        assert.deepEqual(attn.positionalEncoding(4, 0).shape, [4, 0]);
        assert.equal(attn.positionalEncoding(4, 0).data.length, 0);
      });
    });

    describe('multi-head attention (d2l example)', () => {
      test('embed 100, 5 heads, batch 2, 4 queries, 6 kv pairs, validLens [3, 2] -> [2, 4, 100]', () => {
        const rng = mulberry32(80);
        const config = { embedDim: 100, numHeads: 5, bias: false };
        const mha = new attn.MultiHeadAttention(config);
        const dict = ref.randomStateDict(rng, config, 0.1);
        mha.loadStateDict(dict);
        const X = tensor(new Float32Array(2 * 4 * 100).fill(1), [2, 4, 100]);
        const Y = tensor(new Float32Array(2 * 6 * 100).fill(1), [2, 6, 100]);
        const got = mha.forward(X, Y, Y, { validLens: [3, 2] });
        assert.deepEqual(got.output.shape, [2, 4, 100]);
        assert.deepEqual(got.weights.shape, [2, 4, 6]);
        const want = ref.multiHeadAttention(dict, config, X, Y, Y, { validLens: [3, 2] });
        assertClose(got.output, want.output, { label: 'output' });
        assertClose(got.weights, want.weights, { label: 'weights' });
        // Random inputs too, not only ones.
        const Xr = randomTensor(rng, [2, 4, 100]);
        const Yr = randomTensor(rng, [2, 6, 100]);
        const gotR = mha.forward(Xr, Yr, Yr, { validLens: [3, 2] });
        const wantR = ref.multiHeadAttention(dict, config, Xr, Yr, Yr, { validLens: [3, 2] });
        assertClose(gotR.output, wantR.output, { label: 'output (random)' });
        assertClose(gotR.weights, wantR.weights, { label: 'weights (random)' });
        for (let b = 0; b < 2; b++) {
          for (let i = 0; i < 4; i++) {
            for (let j = [3, 2][b]; j < 6; j++) assert.equal(gotR.weights.data[(b * 4 + i) * 6 + j], 0);
          }
        }
        mha.dispose();
      });
    });
  });
}

test('the three builds agree with each other', { skip: singleLoad }, () => {
  const [first, ...others] = backends;
  const rng = mulberry32(90);
  const q = randomTensor(rng, [3, 17, 24]);
  const k = randomTensor(rng, [3, 29, 24]);
  const v = randomTensor(rng, [3, 29, 9]);
  const a = first.scaledDotProductAttention(q, k, v, { weights: true, validLens: [29, 7, 1] });
  for (const attn of others) {
    const b = attn.scaledDotProductAttention(q, k, v, { weights: true, validLens: [29, 7, 1] });
    assertClose(a.output, b.output, { label: `${labelOf(attn)} output` });
    assertClose(a.weights, b.weights, { label: `${labelOf(attn)} weights` });
  }
});
