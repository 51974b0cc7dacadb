// Dropout on the attention weights: inverted dropout (survivors scaled by 1 / (1 - p)) drawn
// from a seeded stream, so the same seed drops the same weights; p = 0 is no dropout; the
// returned weights are the distribution before dropout.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf, singleLoad } from './backends.js';
import * as ref from '../../harness/reference.js';

const { assertClose, assertRowsSumToOne, mulberry32, randomTensor, tensor } = ref;

const B = 2, NQ = 16, NK = 64, D = 8;
const rng = mulberry32(5000);
const q = randomTensor(rng, [B, NQ, D]);
const k = randomTensor(rng, [B, NK, D]);
const v = randomTensor(rng, [B, NK, 5]);
// v = identity per batch row: the output row is then the dropped weight row itself.
const identity = tensor(Float32Array.from({ length: B * NK * NK }, (_, i) => (Math.floor(i / NK) % NK === i % NK ? 1 : 0)), [B, NK, NK]);
const additive = { Wq: randomTensor(rng, [6, D]), Wk: randomTensor(rng, [6, D]), wv: randomTensor(rng, [6]) };

for (const attn of backends) {
  describe(`dropout (${labelOf(attn)})`, () => {
    test('the same seed gives the same output, another seed another one', () => {
      const a = attn.scaledDotProductAttention(q, k, v, { dropout: 0.3, seed: 42 });
      const b = attn.scaledDotProductAttention(q, k, v, { dropout: 0.3, seed: 42 });
      const c = attn.scaledDotProductAttention(q, k, v, { dropout: 0.3, seed: 43 });
      assert.deepEqual(a.output, b.output);
      assert.notDeepEqual(a.output, c.output);
      assert.notDeepEqual(a.output, attn.scaledDotProductAttention(q, k, v).output);
    });

    test('the default seed is 0', () => {
      assert.deepEqual(attn.scaledDotProductAttention(q, k, v, { dropout: 0.3 }).output,
        attn.scaledDotProductAttention(q, k, v, { dropout: 0.3, seed: 0 }).output);
    });

    test('dropout 0 equals no dropout, whatever the seed', () => {
      const none = attn.scaledDotProductAttention(q, k, v, { validLens: [40, 64], weights: true });
      for (const seed of [0, 7, 2 ** 53 - 1]) {
        const zero = attn.scaledDotProductAttention(q, k, v, { validLens: [40, 64], dropout: 0, seed, weights: true });
        assert.deepEqual(zero, none);
      }
    });

    test('the returned weights are the pre-dropout distribution', () => {
      const dropped = attn.scaledDotProductAttention(q, k, v, { dropout: 0.5, seed: 1, weights: true, causal: true });
      const none = attn.scaledDotProductAttention(q, k, v, { weights: true, causal: true });
      // Equal up to float32 rounding (the dropout path may sum in another order).
      assertClose(dropped.weights, none.weights);
      assertRowsSumToOne(dropped.weights);
      assertClose(dropped.weights, ref.scaledDotProductAttention(q, k, v, { causal: true }).weights);
    });

    test('each pooled weight is either dropped (0) or scaled by 1 / (1 - p); about p of them drop', () => {
      const p = 0.3;
      const { output, weights } = attn.scaledDotProductAttention(q, k, identity, { dropout: p, seed: 9, weights: true });
      let dropped = 0;
      for (let i = 0; i < weights.data.length; i++) {
        const got = output.data[i];
        const w = weights.data[i];
        if (got === 0) {
          dropped++;
        } else {
          assert.ok(Math.abs(got - w / (1 - p)) <= 1e-6 + 1e-5 * w, `entry ${i}: got ${got}, weight ${w}`);
        }
      }
      const fraction = dropped / weights.data.length;
      assert.ok(fraction > 0.25 && fraction < 0.35, `dropped fraction ${fraction} for p = ${p}`);
    });

    test('averaged over seeds, the output approaches the undropped one (inverted dropout is unbiased)', () => {
      const none = attn.scaledDotProductAttention(q, k, v).output;
      const mean = new Float64Array(none.data.length);
      const seeds = 400;
      for (let seed = 0; seed < seeds; seed++) {
        const { data } = attn.scaledDotProductAttention(q, k, v, { dropout: 0.2, seed }).output;
        for (let i = 0; i < data.length; i++) mean[i] += data[i] / seeds;
      }
      assertClose(mean, none.data, { atol: 0.02, rtol: 0, label: 'mean over seeds' });
    });

    test('additive attention: seeded, pre-dropout weights, p = 0 is none', () => {
      const options = { ...additive, dropout: 0.4, seed: 5, weights: true, validLens: [30, 50] };
      const a = attn.additiveAttention(q, k, v, options);
      assert.deepEqual(a, attn.additiveAttention(q, k, v, options));
      assert.notDeepEqual(a.output, attn.additiveAttention(q, k, v, { ...options, seed: 6 }).output);
      const none = attn.additiveAttention(q, k, v, { ...additive, weights: true, validLens: [30, 50] });
      assertClose(a.weights, none.weights);
      assert.deepEqual(attn.additiveAttention(q, k, v, { ...options, dropout: 0 }), none);
    });
  });
}

test('the three builds drop the same weights for the same seed', { skip: singleLoad }, () => {
  const [first, ...others] = backends;
  const a = first.scaledDotProductAttention(q, k, identity, { dropout: 0.5, seed: 123 }).output;
  for (const attn of others) {
    const b = attn.scaledDotProductAttention(q, k, identity, { dropout: 0.5, seed: 123 }).output;
    for (let i = 0; i < a.data.length; i++) assert.equal(a.data[i] === 0, b.data[i] === 0, `${labelOf(attn)}, entry ${i}`);
    assertClose(a, b, { label: labelOf(attn) });
  }
});
