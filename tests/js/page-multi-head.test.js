// The computation behind the page's section 4 (web/src/sections/multi-head/compute.js), without
// a page: what each designed head is built to do, checked as a property of its weights, and the
// random layer and cross-attention against the double-precision reference, in the three builds.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { importRepo } from './repo-module.js';
import * as ref from '../../harness/reference.js';

const { assertClose, assertRowsSumToOne, tensor } = ref;
const { MAX_TOKENS, createMultiHeadModel, tokenize, wordEmbedding } = await importRepo('web/src/sections/multi-head/compute.js');

test('tokenize lower-cases words, keeps apostrophes and digits, drops punctuation, stops at MAX_TOKENS', () => {
  assert.deepEqual(tokenize("The cat's 2 hats, the CAT!"), ['the', "cat's", '2', 'hats', 'the', 'cat']);
  assert.equal(tokenize('a '.repeat(40)).length, MAX_TOKENS);
  assert.deepEqual(tokenize(' ,.; '), []);
});

for (const attn of backends) {
  describe(`section 4's computation (${labelOf(attn)})`, () => {
    const tokens = tokenize('the pink elephant tried to get into the car but it was too big');
    const n = tokens.length;
    const settings = { d: 16, h: 4, seed: 3, scale: 1, pe: true, causal: false, lookup: 'car' };
    const model = createMultiHeadModel(attn);
    const { target, designed, randomHeads, weightShape, outputShape } = model.self(tokens, settings);
    const head = (id) => designed.find((h) => h.id === id).weights;
    const row = (w, i) => Array.from(w.subarray(i * n, (i + 1) * n));
    const argmax = (values) => values.indexOf(Math.max(...values));

    test('every head is a distribution over the keys', () => {
      for (const { weights } of [...designed, ...randomHeads]) assertRowsSumToOne({ data: weights, shape: [n, n] });
      assert.deepEqual(weightShape, [1, 4, n, n]);
      assert.deepEqual(outputShape, [1, n, 16]);
    });

    test('previous token: all weight on j = i − 1 (the first token on itself)', () => {
      for (let i = 0; i < n; i++) assert.equal(row(head('prev'), i)[Math.max(0, i - 1)], 1);
    });

    test('same word: both occurrences of "the" share the weight of a "the" query', () => {
      const [first, second] = tokens.flatMap((t, j) => (t === 'the' ? [j] : []));
      const weights = row(head('same'), first);
      assertClose([weights[first] + weights[second]], [1], { atol: 1e-3, rtol: 0 });
      assertClose([weights[first]], [weights[second]]);
    });

    test('uniform: scale 0 gives 1/n everywhere', () => {
      assertClose(head('uniform'), new Float64Array(n * n).fill(1 / n));
    });

    test("hard lookup: every query finds the target's key", () => {
      assert.equal(target, 'car');
      const at = tokens.indexOf('car');
      for (let i = 0; i < n; i++) assert.equal(argmax(row(head('lookup'), i)), at);
    });

    test('the random heads are nn.MultiheadAttention with the seeded parameters', () => {
      const X = new Float32Array(n * 16);
      const P = ref.positionalEncoding(n, 16).data;
      tokens.forEach((w, i) => wordEmbedding(w, 16).forEach((e, c) => { X[i * 16 + c] = Math.sqrt(16) * e + P[i * 16 + c]; }));
      const mha = new attn.MultiHeadAttention({ embedDim: 16, numHeads: 4 }).resetParameters(3);
      const dict = mha.stateDict();
      mha.dispose();
      const x = tensor(X, [1, n, 16]);
      const want = ref.multiHeadAttention(dict, { embedDim: 16, numHeads: 4 }, x, x, x, { averageAttnWeights: false });
      randomHeads.forEach(({ weights }, i) => assertClose(weights, want.weights.data.subarray(i * n * n, (i + 1) * n * n), { label: `head ${i}` }));
    });

    test('causal: no head looks ahead', () => {
      const causal = model.self(tokens, { ...settings, causal: true });
      for (const { weights } of [...causal.designed.filter((h) => h.id !== 'lookup'), ...causal.randomHeads]) {
        for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(weights[i * n + j], 0);
      }
    });

    test('cross-attention: a word of sentence B attends to the same word of sentence A', () => {
      const b = tokenize('it was too big for the small car');
      const { same, random, outputShape: shape } = model.cross(tokens, b, settings);
      assert.deepEqual(shape, [1, b.length, 16]);
      assertRowsSumToOne({ data: random, shape: [b.length, n] });
      const i = b.indexOf('car');
      assert.equal(argmax(Array.from(same.subarray(i * n, (i + 1) * n))), tokens.indexOf('car'));
    });
  });
}
