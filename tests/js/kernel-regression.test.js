// Kernel regression where the plain Gaussian form fails: small bandwidths, far queries, and the
// leave-one-out ranking that depends on them; closed forms first, then a seeded property test
// against the double-precision reference (log-sum-exp form) over random shapes and bandwidths
// down to 1e-8. The three builds.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as ref from '../../harness/reference.js';
import { fuzzSeed } from './fuzz-seed.js';

const { assertClose, assertRowsSumToOne, mulberry32, randomTensor, tensor } = ref;

for (const attn of backends) {
  describe(`kernel regression numerics (${labelOf(attn)})`, () => {
    test('a far query with a small Gaussian bandwidth gets the nearest key\'s value', () => {
      // exp(-(d / sigma)^2 / 2) is 0 for every key here; softmax(-d^2 / (2 sigma^2)) puts
      // weight 1 on key 2 and exp(-1600) and exp(-600), exactly 0 in float, on the others.
      for (const bandwidth of [0.05, 1e-3, 1e-20]) {
        const got = attn.kernelRegression({
          keys: tensor([0, 1, 2], [3]), values: tensor([0, 1, 2], [3]), queries: tensor([3], [1]),
          kernel: 'gaussian', bandwidth, weights: true,
        });
        assert.deepEqual(Array.from(got.output.data), [2], `σ = ${bandwidth}`);
        assert.deepEqual(Array.from(got.weights.data), [0, 0, 1], `σ = ${bandwidth}`);
      }
    });

    test('two keys far from the query: the logistic closed form', () => {
      // Keys 0 and 1, query 1000: key 1's weight is 1 / (1 + exp(-1999 / (2 sigma^2))), O(1)
      // for these sigma while each exp(-d^2 / (2 sigma^2)) < exp(-499) underflows.
      for (const bandwidth of [20, 31.6, 45, 80]) {
        const s2 = 2 * Math.fround(bandwidth) ** 2;
        const w1 = 1 / (1 + Math.exp(-1999 / s2));
        const got = attn.kernelRegression({
          keys: tensor([0, 1], [2]), values: tensor([-3, 5, 4, 0.5], [2, 2]), queries: tensor([1000], [1]),
          bandwidth, weights: true,
        });
        assertClose(got.weights.data, [1 - w1, w1], { label: `weights, σ = ${bandwidth}` });
        assertClose(got.output.data, [-3 * (1 - w1) + 4 * w1, 5 * (1 - w1) + 0.5 * w1], { label: `output, σ = ${bandwidth}` });
      }
    });

    test('leaveOneOut scores small Gaussian bandwidths by the nearest neighbour, finitely', () => {
      // As sigma -> 0 each key is predicted by its nearest other key: 0 <- 1, 1 <- 0, 3 <- 1, 6 <- 3.
      const keys = tensor([0, 1, 3, 6], [4]);
      const values = tensor([1, -2, 0.5, 4], [4]);
      const nearest = (9 + 9 + 6.25 + 12.25) / 4;
      const got = attn.leaveOneOut({ keys, values, bandwidths: [0.02, 1e-3, 1e-30] });
      assertClose(got.errors, [nearest, nearest, nearest], { label: 'errors' });
      assert.equal(got.best, Math.fround(0.02));
    });

    test('leaveOneOut picks a small Gaussian bandwidth when it predicts best', () => {
      // Pairs 0.01 apart with equal values, pairs 5 apart: the nearest neighbour is exact (error 0);
      // sigma = 2 mixes the pairs. With the plain form sigma = 5e-4 scored +Infinity and lost.
      const keys = tensor([0, 0.01, 5, 5.01, 10, 10.01], [6]);
      const values = tensor([1, 1, 7, 7, -3, -3], [6]);
      const bandwidths = [2, 5e-4];
      const got = attn.leaveOneOut({ keys, values, bandwidths });
      const want = ref.leaveOneOut({ keys, values, bandwidths: bandwidths.map(Math.fround) });
      assert.equal(got.errors[1], 0);
      assertClose(got.errors, want.errors, { label: 'errors' });
      assert.equal(got.best, Math.fround(5e-4));
    });

    test('compact kernels: an unreached key scores Infinity and best is the smallest finite error', () => {
      // The key at 10 has no neighbour within 7: those bandwidths are Infinity wherever they sit.
      const keys = tensor([0, 1, 3, 10], [4]);
      const values = tensor([1, 2, 4, 8], [4]);
      const bandwidths = [0.5, 8, 2, 20, 7.5];
      for (const kernel of ['boxcar', 'epanechnikov']) {
        const got = attn.leaveOneOut({ keys, values, kernel, bandwidths });
        const want = ref.leaveOneOut({ keys, values, kernel, bandwidths });
        assert.equal(got.errors[0], Infinity);
        assert.equal(got.errors[2], Infinity);
        assertClose(got.errors, want.errors, { label: `${kernel} errors` });
        const finite = [1, 3, 4].reduce((a, b) => (got.errors[b] < got.errors[a] ? b : a));
        assert.equal(got.best, bandwidths[finite], kernel);
      }
    });

    test('property: random shapes, kernels and bandwidths (1e-8 to 30) match the reference', (t) => {
      const seed = fuzzSeed();
      t.diagnostic(`seed ${seed} (rerun with ATTN_FUZZ_SEED=${seed})`);
      const rng = mulberry32(seed);
      const pick = (list) => list[Math.floor(rng() * list.length)];
      const size = (max) => Math.floor(rng() * (max + 1));
      const kernels = ['gaussian', 'gaussian', 'boxcar', 'epanechnikov', 'constant'];
      const started = performance.now();
      let cases = 0;
      for (; cases < 300 && performance.now() - started < 1500; cases++) {
        const [n, m, dx, dy] = [1 + size(30), size(8), 1 + size(3), 1 + size(2)];
        const kernel = pick(kernels);
        const bandwidth = Math.fround(10 ** (-8 + 9.5 * rng()));
        const keys = randomTensor(rng, [n, dx], -2, 2);
        const values = randomTensor(rng, [n, dy], -3, 3);
        const queries = randomTensor(rng, [m, dx], -2 * pick([1, 1, 10]), 2 * pick([1, 1, 10]));
        const label = `seed ${seed}, case ${cases}: ${kernel}, σ = ${bandwidth}, n ${n}, m ${m}, dx ${dx}, dy ${dy}`;
        const got = attn.kernelRegression({ keys, values, queries, kernel, bandwidth, weights: true });
        const want = ref.kernelRegression({ keys, values, queries, kernel, bandwidth });
        // A compact kernel's weight 1 - u near the support's edge (u -> 1) cancels: float32's
        // rounding of u then shows up 1/(1 - u) times larger once the row is normalised.
        const tolerance = kernel === 'boxcar' || kernel === 'epanechnikov' ? ref.LOOSE : undefined;
        assertClose(got.weights, want.weights, { ...tolerance, label: `${label}: weights` });
        assertClose(got.output, want.output, { ...tolerance, label: `${label}: output` });
        if (kernel === 'gaussian') {
          assert.ok(got.output.data.every(Number.isFinite), `${label}: the Gaussian reaches every query`);
          assertRowsSumToOne(got.weights);
        }
        if (n >= 2) {
          const bandwidths = [bandwidth, Math.fround(bandwidth * 10), Math.fround(bandwidth / 10)];
          const search = attn.leaveOneOut({ keys, values, kernel, bandwidths });
          const expected = ref.leaveOneOut({ keys, values, kernel, bandwidths });
          assertClose(search.errors, expected.errors, { ...ref.LOOSE, label: `${label}: leave-one-out errors` });
          if (Number.isNaN(expected.best)) assert.ok(Number.isNaN(search.best), label);
          else assert.equal(search.best, bandwidths[search.errors.indexOf(Math.min(...search.errors))], label);
        }
      }
      t.diagnostic(`${cases} cases`);
      assert.ok(cases >= 50, `only ${cases} cases ran in the time budget`);
    });
  });
}
