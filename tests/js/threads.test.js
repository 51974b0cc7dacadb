// The threaded build against the single-thread one: every entry point, on 2, 3, 4 and 7 threads,
// gives the same bits as { threads: 1 } (Object.is on every element: the core's splits partition
// the outputs, so no sum depends on the thread count). Cases come from the API fuzzer's builders
// (every function, ragged sizes around the kernels' blocks, every mask kind, dropout, weights)
// and from shapes large enough that every split runs in parallel (the GEMM's, the fused
// forward's query blocks, the backward, multi-head attention, cached decoding, kernel
// regression, the Seq2Seq model). Also: the `threads` option and what a load reports, 10,000
// tiny calls through the pool, typed errors on the threaded build, dispose(), and a process that
// exits on its own while the pool's workers idle.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { describe, test } from 'node:test';

import { loadAttention } from 'attention-wasm';

import { BUILDERS, chooser } from './api-fuzz-cases.js';
import * as ref from '../../harness/reference.js';

const { mulberry32, randomTensor, randomStateDict, tensor } = ref;

const COUNTS = [2, 3, 4, 7];
const single = await loadAttention({ threads: 1 });
const threaded = await Promise.all(COUNTS.map((threads) => loadAttention({ threads })));

// Walks two results in step: typed arrays element by element with Object.is (NaN equals NaN,
// 0 differs from -0), everything else by structure.
function assertIdentical(got, want, path = 'result') {
  if (ArrayBuffer.isView(want)) {
    assert.equal(got.constructor, want.constructor, `${path}: type`);
    assert.equal(got.length, want.length, `${path}: length`);
    for (let i = 0; i < want.length; i++) {
      if (!Object.is(got[i], want[i])) assert.fail(`${path}[${i}]: ${got[i]} on threads, ${want[i]} on one thread`);
    }
  } else if (want !== null && typeof want === 'object') {
    assert.deepEqual(Object.keys(got), Object.keys(want), `${path}: keys`);
    for (const key of Object.keys(want)) assertIdentical(got[key], want[key], `${path}.${key}`);
  } else {
    assert.ok(Object.is(got, want), `${path}: ${got} on threads, ${want} on one thread`);
  }
}

// Runs `call(attn)` on one thread and on every threaded load, and holds each to the first.
function assertSameOnEveryCount(call) {
  const want = call(single);
  for (const attn of threaded) assertIdentical(call(attn), want, `${attn.threads} threads`);
}

describe('loadAttention({ threads })', () => {
  test('a count is taken as asked, above the core count too; the loads say so', () => {
    assert.equal(single.threads, 1);
    assert.equal(single.threadsReason, 'one thread requested');
    assert.deepEqual(threaded.map((attn) => attn.threads), COUNTS);
    for (const attn of threaded) {
      assert.equal(attn.threadsReason, null);
      assert.equal(attn.backend, 'wasm-simd');
      assert.equal(attn.relaxedSimd, single.relaxedSimd);
      assert.deepEqual(attn.microkernels, single.microkernels);
    }
  });

  test("'auto' (the default) takes every core up to 8", async () => {
    const attn = await loadAttention();
    const want = Math.min(availableParallelism(), 8);
    assert.equal(attn.threads, want);
    assert.equal(attn.threadsReason, want === 1 ? "capped at the hardware's thread count" : null);
    attn.dispose();
  });

  test('no SIMD, no threads: the scalar build runs on one thread and says why', async () => {
    const attn = await loadAttention({ simd: false, threads: 2 });
    assert.equal(attn.backend, 'wasm');
    assert.equal(attn.threads, 1);
    assert.equal(attn.threadsReason, 'no SIMD (the threaded build is a SIMD build)');
  });

  test('a bad count is a TypeError or RangeError naming threads', async () => {
    for (const bad of [0, -1, 1.5, NaN, Infinity]) {
      await assert.rejects(loadAttention({ threads: bad }), { name: 'RangeError', message: /^threads: expected 'auto' or an integer >= 1/ });
    }
    for (const bad of ['many', '2', true, 2n, {}]) {
      await assert.rejects(loadAttention({ threads: bad }), { name: 'TypeError', message: /^threads: expected 'auto' or an integer >= 1/ });
    }
  });

  test('kernels names each loop of the kernel table with its tile and instruction set', () => {
    const isa = single.relaxedSimd ? 'wasmrelaxedsimd_fma' : 'wasmsimd';
    assert.deepEqual(single.microkernels, ['f32_score_block_1x16', 'f32_score_block_2x16', 'f32_pool_block_1x16',
      'f32_pool_block_2x16', 'f32_gemm_panels_2x16', 'f32_modify_scores_1x4', 'f32_exp_shifted_sum_1x4',
      'f32_exp_shifted_sum_full_1x4'].map((name) => `${name}__${isa}`));
  });
});

describe('the threaded build gives the same bits as one thread', () => {
  test("the API fuzzer's cases: every function, ragged sizes, every mask kind, dropout, weights", () => {
    const c = chooser(mulberry32(20261124));
    const total = BUILDERS.reduce((sum, [, weight]) => sum + weight, 0);
    for (let i = 0; i < 300; i++) {
      let left = c.rng() * total;
      const [builder] = BUILDERS.find(([, weight]) => (left -= weight) < 0) ?? BUILDERS[0];
      const kase = builder(c);
      assertSameOnEveryCount((attn) => kase.run(attn, kase.args));
    }
  });

  const rng = mulberry32(7);
  const [B, nq, nk, d, dv] = [3, 197, 333, 64, 48];
  const q = randomTensor(rng, [B, nq, d], -2, 2);
  const k = randomTensor(rng, [B, nk, d], -2, 2);
  const v = randomTensor(rng, [B, nk, dv]);
  const gradOutput = randomTensor(rng, [B, nq, dv]);
  const masks = {
    none: {},
    'validLens [B]': { validLens: Int32Array.from([333, 1, 150]) },
    'validLens [B, nq]': { validLens: Int32Array.from({ length: B * nq }, (_, i) => (i * 37) % (nk + 1)) },
    causal: { causal: true },
    'boolean mask': { mask: tensor(Uint8Array.from({ length: nq * nk }, (_, i) => (i % 7 < 4 ? 1 : 0)), [nq, nk], Uint8Array) },
    'additive mask': { mask: randomTensor(rng, [B, nq, nk], -3, 0) },
  };

  for (const [name, mask] of Object.entries(masks)) {
    test(`scaled dot-product attention, forward with weights and backward: ${name}`, () => {
      assertSameOnEveryCount((attn) => attn.scaledDotProductAttention(q, k, v, { ...mask, weights: true }));
      assertSameOnEveryCount((attn) => attn.scaledDotProductAttentionBackward(q, k, v, gradOutput, mask));
    });
  }

  test('dropout, a single long sequence, and the additive score', () => {
    assertSameOnEveryCount((attn) => attn.scaledDotProductAttention(q, k, v, { dropout: 0.3, seed: 11, weights: true }));
    const one = randomTensor(rng, [1, 1500, 64]);
    assertSameOnEveryCount((attn) => attn.scaledDotProductAttention(one, one, one, { causal: true }));
    assertSameOnEveryCount((attn) => attn.scaledDotProductAttentionBackward(one, one, one, one, { causal: true }));
    const params = { Wq: randomTensor(rng, [32, d]), Wk: randomTensor(rng, [32, d]), wv: randomTensor(rng, [32]) };
    assertSameOnEveryCount((attn) => attn.additiveAttention(q, k, v, { ...params, validLens: masks['validLens [B]'].validLens, weights: true }));
  });

  test('bmm, score and softmax over large batches', () => {
    const a = randomTensor(rng, [2, 300, 200]);
    const b = randomTensor(rng, [2, 200, 150]);
    assertSameOnEveryCount((attn) => attn.bmm(a, b));
    assertSameOnEveryCount((attn) => attn.score(q, k, { fn: 'scaled-dot' }));
    assertSameOnEveryCount((attn) => attn.maskedSoftmax(attn.score(q, k), masks['validLens [B, nq]'].validLens));
  });

  test('kernel regression and its leave-one-out search', () => {
    const keys = randomTensor(rng, [1200], 0, 5);
    const values = randomTensor(rng, [1200]);
    const queries = randomTensor(rng, [900], 0, 5);
    assertSameOnEveryCount((attn) => attn.kernelRegression({ keys, values, queries, bandwidth: 0.3 }));
    const bandwidths = Float32Array.from({ length: 12 }, (_, i) => 0.05 * (i + 1));
    assertSameOnEveryCount((attn) => attn.leaveOneOut({ keys, values, bandwidths }));
  });

  test('multi-head attention: forward, backward, and decoding through a KV cache', () => {
    const config = { embedDim: 128, numHeads: 4 };
    const dict = randomStateDict(mulberry32(3), config);
    const x = randomTensor(rng, [2, 150, 128]);
    const g = randomTensor(rng, [2, 150, 128]);
    const run = (attn, body) => {
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      try {
        return body(mha);
      } finally {
        mha.dispose();
      }
    };
    assertSameOnEveryCount((attn) => run(attn, (mha) => mha.forward(x, x, x, { causal: true })));
    assertSameOnEveryCount((attn) => run(attn, (mha) => mha.backward(x, x, x, g, { keyPaddingMask: null })));
    assertSameOnEveryCount((attn) => run(attn, (mha) => {
      const cache = mha.createCache({ batch: 2 });
      const outputs = [];
      for (let t = 0; t < 150; t += 50) {
        const chunk = tensor(new Float32Array(2 * 50 * 128).map((_, i) => x.data[(Math.floor(i / 6400) * 150 + t) * 128 + (i % 6400)]), [2, 50, 128]);
        outputs.push(mha.forward(chunk, chunk, chunk, { cache }).output);
      }
      cache.dispose();
      return outputs;
    }));
  });

  test('the Seq2Seq model: loss, gradients, two training steps, greedy translation', () => {
    const steps = 9, batch = 16, vocab = 40;
    const tokens = (seed) => tensor(Int32Array.from({ length: batch * steps }, (_, i) => 3 + ((i * seed) % (vocab - 3))), [batch, steps], Int32Array);
    const [src, tgtIn, tgtOut] = [tokens(7), tokens(11), tokens(13)];
    const lens = Int32Array.from({ length: batch }, (_, i) => 1 + (i % steps));
    assertSameOnEveryCount((attn) => {
      const m = new attn.Seq2SeqAttention({ srcVocabSize: vocab, tgtVocabSize: vocab, embedSize: 32, numHiddens: 64, numLayers: 2, seed: 5 });
      try {
        const first = m.lossAndGradients(src, lens, tgtIn, tgtOut, { pad: 0 });
        const losses = [0, 1].map(() => m.trainStep(src, lens, tgtIn, tgtOut, { pad: 0, lr: 0.005, clip: 1 }));
        return { first, losses, state: m.stateDict(), translation: m.translate(src, lens, { bos: 1, eos: 2, maxLen: steps }) };
      } finally {
        m.dispose();
      }
    });
  });
});

describe('the pool', () => {
  test('10,000 tiny calls, each split into more tasks than threads', () => {
    const attn = threaded[2];
    const x = randomTensor(mulberry32(1), [1, 130, 8]);
    const want = single.scaledDotProductAttention(x, x, x, { causal: true }).output;
    for (let i = 0; i < 10000; i++) {
      const got = attn.scaledDotProductAttention(x, x, x, { causal: true }).output;
      if (i % 1000 === 0) assertIdentical(got, want);
    }
  });

  test('bad input is the same typed error on the threaded build, which keeps working', () => {
    const random = (...shape) => randomTensor(mulberry32(shape.length), shape);
    for (const attn of threaded) {
      assert.throws(() => attn.scaledDotProductAttention(random(2, 3, 4), random(2, 5, 3), random(2, 5, 4)), { name: 'RangeError', message: /^k: / });
      assert.throws(() => attn.scaledDotProductAttention(random(1, 2, 2), random(1, 2, 2), random(1, 2, 2), { validLens: Int32Array.from([3]) }), {
        name: 'RangeError', message: /^validLens/,
      });
      assert.throws(() => attn.leaveOneOut({ keys: random(3), values: random(3), bandwidths: [-1] }), { name: 'RangeError', message: /^bandwidths/ });
      assertIdentical(attn.softmax(random(1, 2, 3)), single.softmax(random(1, 2, 3)));
    }
  });

  test('dispose() ends the workers; the module goes on computing on the calling thread', async () => {
    const attn = await loadAttention({ threads: 3 });
    const x = randomTensor(mulberry32(2), [2, 100, 16]);
    const before = attn.scaledDotProductAttention(x, x, x).output;
    attn.dispose();
    attn.dispose(); // a second call is harmless
    assert.equal(attn.threads, 1);
    assert.equal(attn.threadsReason, 'disposed');
    assertIdentical(attn.scaledDotProductAttention(x, x, x).output, before);
  });

  test('a process that never calls dispose() exits on its own within 2 s', () => {
    const script = `import { loadAttention } from 'attention-wasm';
      const attn = await loadAttention({ threads: 4 });
      const x = { data: new Float32Array(64 * 32).fill(0.5), shape: [1, 64, 32] };
      attn.scaledDotProductAttention(x, x, x);
      console.log('threads', attn.threads, 'done at', Date.now());`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8', timeout: 20000 });
    const exited = Date.now();
    assert.equal(child.status, 0, child.stderr);
    const [, threads, done] = child.stdout.match(/threads (\d+) done at (\d+)/);
    assert.equal(threads, '4');
    assert.ok(exited - Number(done) < 2000, `the process exited ${exited - Number(done)} ms after its last statement`);
  });
});
