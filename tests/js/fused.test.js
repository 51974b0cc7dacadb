// The fused (flash-style) attention kernel in both wasm builds — the SIMD kernels are only
// exercised here — at sizes that cross its 64-query and 512-key blocks (128 under a sliding
// window, modern-attention.test.js) and its 16-wide tiles, with masks ending inside later
// blocks, causal masks, NaN rows and logits whose running max grows block after block. Each case runs without weights (the online softmax over key blocks)
// and with them (one block per row) against the same double-precision reference.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as ref from '../../harness/reference.js';

const { assertClose, mulberry32, randomTensor, tensor } = ref;

function checkBothPaths(attn, q, k, v, options = {}) {
  const want = ref.scaledDotProductAttention(q, k, v, options);
  const fused = attn.scaledDotProductAttention(q, k, v, options);
  assertClose(fused.output, want.output, { label: 'output without weights' });
  const withWeights = attn.scaledDotProductAttention(q, k, v, { ...options, weights: true });
  assertClose(withWeights.output, want.output, { label: 'output with weights' });
  assertClose(withWeights.weights, want.weights, { label: 'weights' });
}

function inputs(seed, [batch, nq, nk, d, dv]) {
  const rng = mulberry32(seed);
  return [randomTensor(rng, [batch, nq, d]), randomTensor(rng, [batch, nk, d]), randomTensor(rng, [batch, nk, dv])];
}

for (const attn of backends) {
  describe(`fused attention kernel (${labelOf(attn)})`, () => {
    for (const shape of [[1, 1, 1, 1, 1], [1, 3, 17, 5, 7], [2, 65, 129, 64, 64], [1, 130, 300, 24, 33], [3, 7, 257, 3, 2], [1, 200, 16, 64, 1], [2, 9, 513, 8, 5], [1, 70, 1100, 24, 33]]) {
      test(`matches the reference at [B, nq, nk, d, dv] = [${shape}]`, () => {
        checkBothPaths(attn, ...inputs(shape.reduce((a, b) => a * 7 + b, 1), shape));
      });
    }

    test('valid lengths ending inside later key blocks, and an empty row', () => {
      const [q, k, v] = inputs(11, [3, 9, 1100, 16, 20]);
      checkBothPaths(attn, q, k, v, { validLens: new Int32Array([700, 1, 513]) });
      checkBothPaths(attn, q, k, v, { validLens: new Int32Array([0, 1100, 512]) });
    });

    test('causal across blocks', () => {
      const [q, k, v] = inputs(12, [2, 150, 150, 32, 24]);
      checkBothPaths(attn, q, k, v, { causal: true });
      checkBothPaths(attn, ...inputs(17, [1, 600, 600, 16, 8]), { causal: true });
    });

    test('a row masked everywhere is NaN with fill -Infinity, past the first block too', () => {
      const [q, k, v] = inputs(13, [2, 3, 600, 8, 5]);
      const { output } = attn.scaledDotProductAttention(q, k, v, { validLens: [0, 600], fill: -Infinity });
      const perBatch = 3 * 5;
      assert.ok(output.data.subarray(0, perBatch).every(Number.isNaN), 'batch 0 all NaN');
      assert.ok(output.data.subarray(perBatch).every(Number.isFinite), 'batch 1 finite');
    });

    test('fill -Infinity with whole key blocks masked before the visible keys stays finite', () => {
      // Until a row meets a visible key its running max is -Infinity: those blocks must add
      // nothing rather than exp(-Inf - -Inf) = NaN. The first 550 keys are hidden from every query.
      const [q, k, v] = inputs(16, [2, 5, 1100, 8, 6]);
      const mask = tensor(Uint8Array.from({ length: 5 * 1100 }, (_, i) => (i % 1100 < 550 ? 1 : 0)), [5, 1100], Uint8Array);
      checkBothPaths(attn, q, k, v, { mask, fill: -Infinity });
    });

    test('logits that grow block after block (up to ~400) are rescaled correctly', () => {
      const nk = 1600, d = 4;
      const q = tensor(new Float32Array(5 * d).fill(1), [1, 5, d]);
      const k = tensor(Float32Array.from({ length: nk * d }, (_, i) => Math.floor(i / d) / 4), [1, nk, d]);
      const v = randomTensor(mulberry32(14), [1, nk, 6]);
      checkBothPaths(attn, q, k, v, { scale: 0.25 });
    });

    test('logits of ~1e4 over many blocks stay finite and exact', () => {
      const rng = mulberry32(15);
      const q = randomTensor(rng, [1, 4, 16], -100, 100);
      const k = randomTensor(rng, [1, 1100, 16], -100, 100);
      const v = randomTensor(rng, [1, 1100, 16]);
      const { output } = attn.scaledDotProductAttention(q, k, v, { scale: 1 });
      assertClose(output, ref.scaledDotProductAttention(q, k, v, { scale: 1 }).output);
    });
  });
}
