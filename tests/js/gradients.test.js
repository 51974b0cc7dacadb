// The backward passes of the JS API against central finite differences of the double-precision
// references in harness/reference.js, in the three builds: shapes that are not multiples of the
// kernel's tiles, nk = 1, valid lengths 0 and nk, a fully masked row, causal with nq != nk,
// logits near ±1e4, dropout; additive attention's parameters; MultiHeadAttention's inputs and
// every parameter by its state-dict name. Tolerance, the rule: 2e-4 of the largest entry.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { assertGradient, dot, dropoutFactors, numericGradient, toDouble } from './gradient-check.js';
import * as ref from '../../harness/reference.js';

const { mulberry32, randomTensor, tensor } = ref;

// sum(O * dO) of the reference SDPA with dropout factors applied to the weights.
function sdpaLoss(q, k, v, gradOutput, options, factors) {
  const { weights } = ref.scaledDotProductAttention(q, k, v, options);
  const dropped = { data: factors ? weights.data.map((p, i) => p * factors[i]) : weights.data, shape: weights.shape };
  return dot(ref.bmm(dropped, v), gradOutput);
}

function checkSdpa(attn, { shapes: [B, nq, nk, d, dv], options = {}, seed, inputs }) {
  const rng = mulberry32(seed);
  const [q, k, v, gradOutput] = inputs ?? [[B, nq, d], [B, nk, d], [B, nk, dv], [B, nq, dv]].map((s) => randomTensor(rng, s));
  const got = attn.scaledDotProductAttentionBackward(q, k, v, gradOutput, options);
  const factors = options.dropout ? dropoutFactors(attn, q, k, options) : null;
  const [qd, kd, vd, gd] = [q, k, v, gradOutput].map(toDouble);
  const loss = () => sdpaLoss(qd, kd, vd, gd, options, factors);
  // The analytic double reference (which the fuzzer uses at sizes finite differences cannot
  // afford) is held to the same finite differences.
  const analytic = ref.scaledDotProductAttentionBackward(q, k, v, gradOutput, options, factors);
  for (const [name, x] of [['dq', qd], ['dk', kd], ['dv', vd]]) {
    const want = numericGradient(x, loss);
    assertGradient(got[name], want, name);
    assertGradient(analytic[name], want, `reference ${name}`);
  }
}

for (const attn of backends) {
  describe(`scaledDotProductAttentionBackward (${labelOf(attn)})`, () => {
    test('matches finite differences without a mask, and with nk = 1 and nq = nk = 1', () => {
      checkSdpa(attn, { shapes: [2, 5, 7, 6, 3], seed: 1 });
      checkSdpa(attn, { shapes: [2, 3, 1, 4, 2], seed: 2 });
      checkSdpa(attn, { shapes: [1, 1, 1, 1, 1], seed: 3 });
    });

    test('valid lengths 0 and nk, per batch row and per query', () => {
      checkSdpa(attn, { shapes: [3, 4, 6, 5, 3], options: { validLens: new Int32Array([0, 6, 2]) }, seed: 4 });
      checkSdpa(attn, { shapes: [2, 3, 5, 4, 2], options: { validLens: tensor([1, 0, 5, 5, 2, 3], [2, 3], Int32Array) }, seed: 5 });
    });

    test('a boolean mask with a fully masked row, and key blocks past 128 keys', () => {
      const mask = new Uint8Array(4 * 6).fill(0);
      mask.fill(1, 6, 12); // query 1 sees nothing: uniform with d2l's fill, no gradient into q, k
      mask[2] = 1;
      checkSdpa(attn, { shapes: [2, 4, 6, 5, 3], options: { mask }, seed: 6 });
      checkSdpa(attn, { shapes: [1, 3, 130, 4, 2], options: { validLens: new Int32Array([129]) }, seed: 7 });
    });

    test('causal with more and fewer queries than keys, and a custom scale', () => {
      checkSdpa(attn, { shapes: [2, 6, 4, 3, 2], options: { causal: true }, seed: 8 });
      checkSdpa(attn, { shapes: [2, 3, 7, 3, 2], options: { causal: true, scale: 0.3 }, seed: 9 });
    });

    test('logits near ±1e4 give finite, exact gradients', () => {
      // Integer entries keep q·k exact in float32 and scale 1/2 exact: logits 1e4 + j/2 and -1e4 - j/2.
      const rng = mulberry32(10);
      const q = tensor([100, 1, 0, 0, -100, 0, 1, 0], [1, 2, 4]);
      const k = tensor(Array.from({ length: 20 }, (_, t) => [200, t >> 2, -(t >> 2), 0][t % 4]), [1, 5, 4]);
      const v = randomTensor(rng, [1, 5, 3]);
      const gradOutput = randomTensor(rng, [1, 2, 3]);
      const got = attn.scaledDotProductAttentionBackward(q, k, v, gradOutput);
      for (const t of [got.dq, got.dk, got.dv]) assert.ok(t.data.every(Number.isFinite));
      checkSdpa(attn, { shapes: [1, 2, 5, 4, 3], inputs: [q, k, v, gradOutput] });
    });

    test('dropout: the same seed regenerates the forward mask; another seed moves the gradients', () => {
      const options = { dropout: 0.3, seed: 7, validLens: new Int32Array([5, 3]) };
      checkSdpa(attn, { shapes: [2, 6, 5, 4, 3], options, seed: 11 });
      const rng = mulberry32(12);
      const args = [[2, 6, 4], [2, 5, 4], [2, 5, 3], [2, 6, 3]].map((s) => randomTensor(rng, s));
      const a = attn.scaledDotProductAttentionBackward(...args, options);
      const b = attn.scaledDotProductAttentionBackward(...args, { ...options, seed: 8 });
      assert.notDeepEqual(a.dv.data, b.dv.data);
    });

    test('results are fresh tensors shaped like q, k, v; a gradOutput of the wrong shape is a RangeError', () => {
      const rng = mulberry32(13);
      const [q, k, v] = [[2, 3, 4], [2, 5, 4], [2, 5, 6]].map((s) => randomTensor(rng, s));
      const got = attn.scaledDotProductAttentionBackward(q, k, v, randomTensor(rng, [2, 3, 6]));
      assert.deepEqual([got.dq.shape, got.dk.shape, got.dv.shape], [[2, 3, 4], [2, 5, 4], [2, 5, 6]]);
      assert.ok(got.dq.data instanceof Float32Array);
      assert.throws(() => attn.scaledDotProductAttentionBackward(q, k, v, randomTensor(rng, [2, 3, 5])),
        { name: 'RangeError', message: 'gradOutput: expected shape [2, 3, 6], got [2, 3, 5]' });
      assert.throws(() => attn.scaledDotProductAttentionBackward(q, k, v, [1, 2]), { name: 'TypeError', message: /^gradOutput\.data: expected Float32Array/ });
      assert.throws(() => attn.scaledDotProductAttentionBackward(q, randomTensor(rng, [2, 5, 3]), v, randomTensor(rng, [2, 3, 6])),
        { name: 'RangeError', message: /^k: expected shape \[2, \*, 4\], got \[2, 5, 3\]/ });
    });
  });

  describe(`additiveAttentionBackward (${labelOf(attn)})`, () => {
    function checkAdditive([B, nq, nk, dq, dk, dv, h], options, seed) {
      const rng = mulberry32(seed);
      const [q, k, v, gradOutput] = [[B, nq, dq], [B, nk, dk], [B, nk, dv], [B, nq, dv]].map((s) => randomTensor(rng, s));
      const params = { Wq: randomTensor(rng, [h, dq]), Wk: randomTensor(rng, [h, dk]), wv: randomTensor(rng, [h]) };
      const got = attn.additiveAttentionBackward(q, k, v, gradOutput, { ...params, ...options });
      const [qd, kd, vd, gd] = [q, k, v, gradOutput].map(toDouble);
      const pd = Object.fromEntries(Object.entries(params).map(([name, t]) => [name, toDouble(t)]));
      const loss = () => dot(ref.additiveAttention(qd, kd, vd, { ...pd, ...options }).output, gd);
      for (const [name, x] of [['dq', qd], ['dk', kd], ['dv', vd], ['dWq', pd.Wq], ['dWk', pd.Wk], ['dwv', pd.wv]]) {
        assertGradient(got[name], numericGradient(x, loss), name);
      }
    }

    test('matches finite differences for q, k, v, Wq, Wk and wv', () => {
      checkAdditive([2, 3, 5, 4, 6, 3, 7], {}, 20);
      checkAdditive([1, 2, 1, 3, 3, 2, 1], {}, 21); // nk = 1, h = 1
    });

    test('valid lengths 0 and nk, per batch row and per query', () => {
      checkAdditive([3, 2, 4, 3, 2, 2, 5], { validLens: new Int32Array([0, 4, 2]) }, 22);
      checkAdditive([2, 3, 4, 3, 2, 2, 5], { validLens: tensor([1, 0, 4, 4, 2, 3], [2, 3], Int32Array) }, 23);
    });
  });

  describe(`MultiHeadAttention.backward and stateDict (${labelOf(attn)})`, () => {
    function checkMha(config, [B, L, S], options, seed) {
      const rng = mulberry32(seed);
      const { embedDim: E, kdim = E, vdim = E } = config;
      const dict = ref.randomStateDict(rng, config);
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      try {
        const [query, key, value, gradOutput] = [[B, L, E], [B, S, kdim], [B, S, vdim], [B, L, E]].map((s) => randomTensor(rng, s));
        const got = mha.backward(query, key, value, gradOutput, options);
        const [qd, kd, vd, gd] = [query, key, value, gradOutput].map(toDouble);
        const dd = Object.fromEntries(Object.entries(dict).map(([name, t]) => [name, toDouble(t)]));
        const loss = () => dot(ref.multiHeadAttention(dd, config, qd, kd, vd, options).output, gd);
        assertGradient(got.dQuery, numericGradient(qd, loss), 'dQuery');
        assertGradient(got.dKey, numericGradient(kd, loss), 'dKey');
        assertGradient(got.dValue, numericGradient(vd, loss), 'dValue');
        assert.deepEqual(Object.keys(got.dParameters), Object.keys(dict));
        for (const [name, x] of Object.entries(dd)) assertGradient(got.dParameters[name], numericGradient(x, loss), name);
      } finally {
        mha.dispose();
      }
    }

    test('packed projections with bias, several heads; separate projections without bias', () => {
      checkMha({ embedDim: 6, numHeads: 2 }, [2, 3, 4], {}, 30);
      checkMha({ embedDim: 6, numHeads: 3, kdim: 4, vdim: 5, bias: false }, [2, 3, 2], {}, 31);
    });

    test('key padding and a boolean attnMask act as in forward', () => {
      const keyPaddingMask = new Uint8Array([0, 0, 1, 0, 0, 1, 1, 0]); // [2, 4]
      checkMha({ embedDim: 4, numHeads: 2 }, [2, 3, 4], { keyPaddingMask }, 32);
      const attnMask = new Uint8Array([0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0]); // [3, 4]
      checkMha({ embedDim: 4, numHeads: 1 }, [2, 3, 4], { attnMask }, 33);
    });

    test('self-attention: dQuery + dKey + dValue is the gradient of the one input', () => {
      const rng = mulberry32(34);
      const config = { embedDim: 4, numHeads: 2 };
      const dict = ref.randomStateDict(rng, config);
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      const x = randomTensor(rng, [1, 3, 4]);
      const gradOutput = randomTensor(rng, [1, 3, 4]);
      const got = mha.backward(x, x, x, gradOutput);
      mha.dispose();
      const xd = toDouble(x);
      const dd = Object.fromEntries(Object.entries(dict).map(([name, t]) => [name, toDouble(t)]));
      const want = numericGradient(xd, () => dot(ref.multiHeadAttention(dd, config, xd).output, toDouble(gradOutput)));
      const sum = { data: got.dQuery.data.map((g, i) => g + got.dKey.data[i] + got.dValue.data[i]), shape: x.shape };
      assertGradient(sum, want, 'dQuery + dKey + dValue');
    });

    test('stateDict returns fresh copies of what was loaded; loadStateDict takes it back', () => {
      const rng = mulberry32(35);
      const config = { embedDim: 4, numHeads: 2, kdim: 3 };
      const dict = ref.randomStateDict(rng, config);
      const mha = new attn.MultiHeadAttention(config).loadStateDict(dict);
      const state = mha.stateDict();
      assert.deepEqual(Object.keys(state), mha.parameters.map((p) => p.name));
      for (const [name, t] of Object.entries(dict)) assert.deepEqual(state[name], { data: t.data, shape: t.shape });
      state.q_proj_weight.data.fill(0); // a copy: the module's weights stay
      assert.deepEqual(mha.stateDict().q_proj_weight.data, dict.q_proj_weight.data);
      const other = new attn.MultiHeadAttention(config).loadStateDict(mha.stateDict());
      const x = randomTensor(rng, [1, 2, 4]), memory = randomTensor(rng, [1, 3, 3]), values = randomTensor(rng, [1, 3, 4]);
      assert.deepEqual(other.forward(x, memory, values).output, mha.forward(x, memory, values).output);
      mha.dispose();
      other.dispose();
      assert.throws(() => mha.stateDict(), { name: 'TypeError', message: 'MultiHeadAttention: used after dispose()' });
      assert.throws(() => mha.backward(x, memory, values, x), { name: 'TypeError', message: 'MultiHeadAttention: used after dispose()' });
    });

    test('a gradOutput of the wrong shape is a RangeError naming it', () => {
      const mha = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
      const x = tensor(new Float32Array(24), [2, 3, 4]);
      assert.throws(() => mha.backward(x, x, x, tensor(new Float32Array(6), [2, 3, 1])),
        { name: 'RangeError', message: 'gradOutput: expected shape [2, 3, 4], got [2, 3, 1]' });
      mha.dispose();
    });
  });
}
