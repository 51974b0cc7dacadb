// MultiHeadAttention against the reference re-implementation of
// torch.nn.MultiheadAttention(batch_first=True): state-dict names, packed and separate
// projections, biases, every mask, per-head weights, self and cross attention, lifetime.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as ref from '../../harness/reference.js';

const { assertClose, assertRowsSumToOne, mulberry32, randomTensor, randomStateDict, tensor } = ref;

// B = 2 batch rows, L = 3 queries, S = 5 keys, E = 8, H = 2 heads (head_dim 4).
const B = 2, L = 3, S = 5, E = 8, H = 2;

function compare(got, want, label = '') {
  assertClose(got.output, want.output, { label: `${label} output` });
  if (want.weights) assertClose(got.weights, want.weights, { label: `${label} weights` });
}

for (const attn of backends) {
  describe(`MultiHeadAttention (${labelOf(attn)})`, () => {
    const rng = mulberry32(1000);
    const x = randomTensor(rng, [B, L, E]);
    const memory = randomTensor(rng, [B, S, E]);
    const values = randomTensor(rng, [B, S, E]);

    test('config defaults and the parameter list of a packed configuration (PyTorch names)', () => {
      const mha = new attn.MultiHeadAttention({ embedDim: E, numHeads: H });
      assert.deepEqual({ ...mha.config }, { embedDim: E, numHeads: H, kdim: E, vdim: E, bias: true });
      assert.deepEqual(mha.parameters, [
        { name: 'in_proj_weight', shape: [3 * E, E] },
        { name: 'in_proj_bias', shape: [3 * E] },
        { name: 'out_proj.weight', shape: [E, E] },
        { name: 'out_proj.bias', shape: [E] },
      ]);
      mha.dispose();
    });

    test('separate projections when kdim / vdim differ; no biases with bias: false', () => {
      const mha = new attn.MultiHeadAttention({ embedDim: E, numHeads: H, kdim: 5, vdim: 3, bias: false });
      assert.deepEqual(mha.parameters, [
        { name: 'q_proj_weight', shape: [E, E] },
        { name: 'k_proj_weight', shape: [E, 5] },
        { name: 'v_proj_weight', shape: [E, 3] },
        { name: 'out_proj.weight', shape: [E, E] },
      ]);
      mha.dispose();
    });

    describe('packed in_proj_weight with biases', () => {
      const config = { embedDim: E, numHeads: H };
      const dict = randomStateDict(mulberry32(1001), config);
      const mha = new attn.MultiHeadAttention(config);

      test('loadStateDict returns the instance', () => {
        assert.equal(mha.loadStateDict(dict), mha);
      });

      test('self-attention forward(x) matches the reference; averaged weights [B, L, L]', () => {
        const got = mha.forward(x);
        assert.deepEqual(got.weights.shape, [B, L, L]);
        compare(got, ref.multiHeadAttention(dict, config, x, x, x));
        assertRowsSumToOne(got.weights);
      });

      test('cross-attention forward(x, memory): value defaults to key', () => {
        const got = mha.forward(x, memory);
        assert.deepEqual(got.output.shape, [B, L, E]);
        assert.deepEqual(got.weights.shape, [B, L, S]);
        compare(got, ref.multiHeadAttention(dict, config, x, memory, memory));
      });

      test('cross-attention with distinct key and value', () => {
        compare(mha.forward(x, memory, values), ref.multiHeadAttention(dict, config, x, memory, values));
      });

      test('needWeights: false omits the weights, same output', () => {
        const got = mha.forward(x, memory, values, { needWeights: false });
        assert.equal(got.weights, undefined);
        assert.deepEqual(got.output, mha.forward(x, memory, values).output);
      });

      test('averageAttnWeights: false gives per-head weights [B, H, L, S] whose mean is the average', () => {
        const got = mha.forward(x, memory, values, { averageAttnWeights: false });
        assert.deepEqual(got.weights.shape, [B, H, L, S]);
        compare(got, ref.multiHeadAttention(dict, config, x, memory, values, { averageAttnWeights: false }));
        assertRowsSumToOne(got.weights);
        const averaged = mha.forward(x, memory, values).weights;
        const mean = new Float64Array(B * L * S);
        for (let b = 0; b < B; b++) {
          for (let h = 0; h < H; h++) {
            for (let t = 0; t < L * S; t++) mean[b * L * S + t] += got.weights.data[(b * H + h) * L * S + t] / H;
          }
        }
        assertClose(averaged.data, mean);
      });

      test('keyPaddingMask [B, S] (bare and tensor): padded keys get weight exactly 0', () => {
        const padding = Uint8Array.from([0, 0, 0, 1, 1, 0, 1, 0, 0, 1]);
        const want = ref.multiHeadAttention(dict, config, x, memory, values, { keyPaddingMask: padding });
        for (const keyPaddingMask of [padding, tensor(padding, [B, S], Uint8Array)]) {
          const got = mha.forward(x, memory, values, { keyPaddingMask, averageAttnWeights: false });
          compare(got, ref.multiHeadAttention(dict, config, x, memory, values, { keyPaddingMask: padding, averageAttnWeights: false }));
          for (let b = 0; b < B; b++) {
            for (let r = 0; r < H * L; r++) {
              for (let j = 0; j < S; j++) {
                if (padding[b * S + j]) assert.equal(got.weights.data[(b * H * L + r) * S + j], 0);
              }
            }
          }
        }
        compare(mha.forward(x, memory, values, { keyPaddingMask: padding }), want);
      });

      const boolLS = Uint8Array.from([0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0]);
      const boolBHLS = ref.randomBits(mulberry32(1002), B * H * L * S, 0.4);
      for (let s = 0; s < B * H * L; s++) boolBHLS[s * S + (s % S)] = 0; // every query sees a key
      const floatLS = randomTensor(mulberry32(1003), [L, S], -2, 2);
      const floatBHLS = randomTensor(mulberry32(1004), [B * H, L, S], -2, 2);
      for (const [name, attnMask] of [
        ['bool [L, S] (bare)', boolLS],
        ['bool [L, S] (tensor)', tensor(boolLS, [L, S], Uint8Array)],
        ['bool [B * H, L, S] (tensor)', tensor(boolBHLS, [B * H, L, S], Uint8Array)],
        ['float [L, S] (tensor)', floatLS],
        ['float [B * H, L, S] (bare)', floatBHLS.data],
      ]) {
        test(`attnMask ${name} matches the reference (head-major: block b * H + h)`, () => {
          const options = { attnMask, averageAttnWeights: false };
          const got = mha.forward(x, memory, values, options);
          compare(got, ref.multiHeadAttention(dict, config, x, memory, values, options));
          const bools = attnMask instanceof Uint8Array ? attnMask : attnMask.data instanceof Uint8Array ? attnMask.data : null;
          if (bools) {
            for (let s = 0; s < B * H; s++) {
              for (let t = 0; t < L * S; t++) {
                const masked = bools.length === L * S ? bools[t] : bools[s * L * S + t];
                if (masked) assert.equal(got.weights.data[s * L * S + t], 0, `matrix ${s}, entry ${t}`);
              }
            }
          }
        });
      }

      test('attnMask [B * H, L, S] is head-major: masking only head 1 of batch row 0 changes only it', () => {
        const mask = new Uint8Array(B * H * L * S);
        mask.fill(1, 1 * L * S, 1 * L * S + S - 1); // matrix 1 = (b 0, h 1), query 0 sees only key S-1
        const got = mha.forward(x, memory, values, { attnMask: mask, averageAttnWeights: false });
        const free = mha.forward(x, memory, values, { averageAttnWeights: false });
        for (let s = 0; s < B * H; s++) {
          const block = (a) => Array.from(a.data.subarray(s * L * S, (s + 1) * L * S));
          if (s === 1) assert.notDeepEqual(block(got.weights), block(free.weights));
          else assert.deepEqual(block(got.weights), block(free.weights));
        }
        assert.equal(got.weights.data[1 * L * S + S - 1], 1);
      });

      test('a query that sees no key gives NaN (PyTorch) by default, a uniform row with fill -1e6', () => {
        const padding = Uint8Array.from([1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
        const got = mha.forward(x, memory, values, { keyPaddingMask: padding });
        const want = ref.multiHeadAttention(dict, config, x, memory, values, { keyPaddingMask: padding });
        compare(got, want);
        assert.ok(got.output.data.subarray(0, L * E).every(Number.isNaN), 'batch row 0 is NaN');
        assert.ok(got.output.data.subarray(L * E).every(Number.isFinite), 'batch row 1 is finite');
        const uniform = mha.forward(x, memory, values, { keyPaddingMask: padding, fill: -1e6 });
        compare(uniform, ref.multiHeadAttention(dict, config, x, memory, values, { keyPaddingMask: padding, fill: -1e6 }));
        assert.ok(uniform.weights.data.subarray(0, L * S).every((w) => Math.abs(w - 1 / S) < 1e-6));
      });

      test('validLens and causal combine with keyPaddingMask', () => {
        const options = { validLens: [4, 2], causal: true, keyPaddingMask: Uint8Array.from([0, 1, 0, 0, 0, 0, 0, 0, 0, 0]) };
        compare(mha.forward(x, memory, values, options), ref.multiHeadAttention(dict, config, x, memory, values, options));
      });

      test('no keys (S = 0): the attention is the empty sum, the output is out_proj.bias', () => {
        const got = mha.forward(x, tensor([], [B, 0, E]), tensor([], [B, 0, E]));
        assert.deepEqual(got.weights.shape, [B, L, 0]);
        for (let r = 0; r < B * L; r++) assertClose(got.output.data.subarray(r * E, (r + 1) * E), dict['out_proj.bias'].data);
        const noQueries = mha.forward(tensor([], [B, 0, E]), memory);
        assert.deepEqual(noQueries.output.shape, [B, 0, E]);
        assert.deepEqual(mha.forward(tensor([], [0, L, E]), tensor([], [0, S, E])).output.shape, [0, L, E]);
      });

      test('a failed loadStateDict leaves the loaded weights in place', () => {
        const before = mha.forward(x, memory).output;
        const broken = { ...randomStateDict(mulberry32(5), config), 'out_proj.bias': randomTensor(rng, [E + 1]) };
        assert.throws(() => mha.loadStateDict(broken), RangeError);
        assert.deepEqual(mha.forward(x, memory).output, before);
      });
    });

    test('separate q/k/v projections (kdim 5, vdim 3) match the reference', () => {
      const config = { embedDim: E, numHeads: 4, kdim: 5, vdim: 3 };
      const dict = randomStateDict(mulberry32(1010), config);
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      const key = randomTensor(rng, [B, S, 5]);
      const value = randomTensor(rng, [B, S, 3]);
      compare(mha.forward(x, key, value), ref.multiHeadAttention(dict, config, x, key, value));
      compare(mha.forward(x, key, value, { averageAttnWeights: false, keyPaddingMask: Uint8Array.from([0, 0, 1, 0, 1, 1, 0, 0, 0, 0]) }),
        ref.multiHeadAttention(dict, config, x, key, value, { averageAttnWeights: false, keyPaddingMask: Uint8Array.from([0, 0, 1, 0, 1, 1, 0, 0, 0, 0]) }));
      mha.dispose();
    });

    test('bias: false matches the reference', () => {
      const config = { embedDim: E, numHeads: H, bias: false };
      const dict = randomStateDict(mulberry32(1020), config);
      assert.deepEqual(Object.keys(dict).sort(), ['in_proj_weight', 'out_proj.weight']);
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      compare(mha.forward(x, memory, values), ref.multiHeadAttention(dict, config, x, memory, values));
      mha.dispose();
    });

    test('one head and embedDim heads (head_dim 1)', () => {
      for (const numHeads of [1, E]) {
        const config = { embedDim: E, numHeads };
        const dict = randomStateDict(mulberry32(1030 + numHeads), config);
        const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
        const options = { averageAttnWeights: false, attnMask: randomTensor(rng, [B * numHeads, L, S], -1, 1) };
        compare(mha.forward(x, memory, values, options), ref.multiHeadAttention(dict, config, x, memory, values, options), `H = ${numHeads}`);
        mha.dispose();
      }
    });

    test('a larger model (E 64, 8 heads, L 20, S 30)', () => {
      const config = { embedDim: 64, numHeads: 8 };
      const r = mulberry32(1040);
      const dict = randomStateDict(r, config, 0.2);
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      const q = randomTensor(r, [2, 20, 64]);
      const kv = randomTensor(r, [2, 30, 64]);
      const options = { keyPaddingMask: ref.randomBits(r, 60, 0.2), averageAttnWeights: false };
      const got = mha.forward(q, kv, kv, options);
      const want = ref.multiHeadAttention(dict, config, q, kv, kv, options);
      assertClose(got.output, want.output, { label: 'output' });
      assertClose(got.weights, want.weights, { label: 'weights' });
      mha.dispose();
    });

    test('resetParameters(seed) is deterministic and zeroes the biases', () => {
      const config = { embedDim: E, numHeads: H };
      const a = new attn.MultiHeadAttention(config).resetParameters(7);
      const b = new attn.MultiHeadAttention(config).loadStateDict(randomStateDict(rng, config)).resetParameters(7);
      const c = new attn.MultiHeadAttention(config).resetParameters(8);
      assert.deepEqual(a.forward(x, memory).output, b.forward(x, memory).output);
      assert.notDeepEqual(a.forward(x, memory).output, c.forward(x, memory).output);
      // No keys: the output is the output bias, which resetting zeroes.
      const empty = b.forward(x, tensor([], [B, 0, E])).output;
      assert.ok(empty.data.every((v) => v === 0));
      for (const m of [a, b, c]) m.dispose();
    });

    test('instances are independent', () => {
      const config = { embedDim: E, numHeads: H };
      const dictA = randomStateDict(mulberry32(1050), config);
      const a = new attn.MultiHeadAttention(config).loadStateDict(dictA);
      const before = a.forward(x).output;
      const b = new attn.MultiHeadAttention(config).loadStateDict(randomStateDict(mulberry32(1051), config));
      b.forward(x);
      b.dispose();
      assert.deepEqual(a.forward(x).output, before);
      a.dispose();
    });

    test('dispose: later use throws a TypeError, disposing twice is fine', () => {
      const config = { embedDim: E, numHeads: H };
      const mha = new attn.MultiHeadAttention(config).loadStateDict(randomStateDict(rng, config));
      mha.dispose();
      assert.throws(() => mha.forward(x), { name: 'TypeError', message: /dispose/ });
      assert.throws(() => mha.loadStateDict(randomStateDict(rng, config)), { name: 'TypeError', message: /dispose/ });
      assert.throws(() => mha.resetParameters(1), { name: 'TypeError', message: /dispose/ });
      assert.doesNotThrow(() => mha.dispose());
      assert.doesNotThrow(() => mha.dispose());
      // The module is still fine.
      const other = new attn.MultiHeadAttention(config).loadStateDict(randomStateDict(mulberry32(3), config));
      compare(other.forward(x), ref.multiHeadAttention(randomStateDict(mulberry32(3), config), config, x));
      other.dispose();
    });

    test('missing and unknown state-dict entries and wrong shapes are RangeErrors naming the entry', () => {
      const config = { embedDim: E, numHeads: H };
      const mha = new attn.MultiHeadAttention(config);
      const dict = randomStateDict(rng, config);
      const { in_proj_bias: _bias, ...missing } = dict;
      assert.throws(() => mha.loadStateDict(missing), { name: 'RangeError', message: /in_proj_bias.*\[24\]/ });
      assert.throws(() => mha.loadStateDict({ ...dict, 'out_proj.scale': randomTensor(rng, [E]) }), { name: 'RangeError', message: /out_proj\.scale/ });
      assert.throws(() => mha.loadStateDict({ ...dict, in_proj_weight: randomTensor(rng, [E, 3 * E]) }),
        { name: 'RangeError', message: /in_proj_weight.*expected shape \[24, 8\], got \[8, 24\]/ });
      // Separate projection names are unknown to a packed configuration, and vice versa.
      const separate = randomStateDict(rng, { embedDim: E, kdim: 5, vdim: E });
      assert.throws(() => mha.loadStateDict(separate), { name: 'RangeError', message: /q_proj_weight|k_proj_weight|v_proj_weight/ });
      const unpacked = new attn.MultiHeadAttention({ embedDim: E, numHeads: H, kdim: 5 });
      assert.throws(() => unpacked.loadStateDict(dict), { name: 'RangeError', message: /in_proj_weight|q_proj_weight/ });
      assert.throws(() => mha.loadStateDict(null), { name: 'TypeError', message: /dict/ });
      assert.throws(() => mha.loadStateDict({ ...dict, in_proj_bias: { data: [1, 2], shape: [2] } }), { name: 'TypeError', message: /in_proj_bias/ });
      mha.dispose();
      unpacked.dispose();
    });
  });
}
