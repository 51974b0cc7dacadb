// The backward passes against PyTorch autograd (issue 10), in the three builds: the fixtures in
// tests/fixtures/gradients, written by scripts/fixtures/gradients.py in float64 from float32
// inputs. Tolerance, the rule: |got - want| <= 2e-4 * max|want| per tensor.
//
// The forward outputs of the same fixtures are checked by forward-pytorch.test.js.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as fx from './fixtures.js';

const sdpa = fx.loadFixture('gradients/sdpa.json');
const additive = fx.loadFixture('gradients/additive.json');
const mha = fx.loadFixture('gradients/mha.json');

// Each expected gradient under its key, compared with the same key of the result.
function assertGradients(got, expected, keys) {
  for (const key of keys) fx.assertFixtureClose(got[key], expected[key], expected, key);
}

function sum(...tensors) {
  const data = new Float32Array(tensors[0].data.length);
  for (const t of tensors) {
    assert.deepEqual(t.shape, tensors[0].shape);
    t.data.forEach((x, i) => { data[i] += x; });
  }
  return { data, shape: tensors[0].shape };
}

for (const attn of backends) {
  describe(`PyTorch fixtures, backward (${labelOf(attn)})`, () => {
    for (const { name, inputs, options, expected } of sdpa) {
      test(`scaledDotProductAttentionBackward: ${name}`, () => {
        const [q, k, v, gradOutput] = [inputs.q, inputs.k, inputs.v, inputs.gradOutput].map(fx.floatTensor);
        const grads = attn.scaledDotProductAttentionBackward(q, k, v, gradOutput, fx.sdpaOptions(options));
        assertGradients(grads, expected, ['dq', 'dk', 'dv']);
      });
    }

    for (const { name, inputs, options, expected } of additive) {
      test(`additiveAttentionBackward: ${name}`, () => {
        const [q, k, v, gradOutput] = [inputs.q, inputs.k, inputs.v, inputs.gradOutput].map(fx.floatTensor);
        const grads = attn.additiveAttentionBackward(q, k, v, gradOutput, fx.additiveOptions(options));
        assertGradients(grads, expected, ['dq', 'dk', 'dv', 'dWq', 'dWk', 'dwv']);
      });
    }

    for (const { name, inputs, options, expected } of mha) {
      test(`MultiHeadAttention.backward: ${name}`, () => {
        const module = fx.multiHeadAttention(attn, inputs);
        try {
          const [query, gradOutput] = [inputs.query, inputs.gradOutput].map(fx.floatTensor);
          // Self-attention passes one tensor three times, as a user does: backward(x, x, x).
          const key = expected.dSelf ? query : fx.floatTensor(inputs.key);
          const value = expected.dSelf ? query : fx.floatTensor(inputs.value);
          const grads = module.backward(query, key, value, gradOutput, fx.multiHeadOptions(options));
          assertGradients(grads, expected, ['dQuery', 'dKey', 'dValue']);
          if (expected.dSelf) {
            // Self-attention: one tensor fed three times; its gradient is the sum of the three.
            fx.assertFixtureClose(sum(grads.dQuery, grads.dKey, grads.dValue), expected.dSelf, expected, 'dSelf');
          }
          // Exactly the state-dict names, each with PyTorch's gradient.
          assert.deepEqual(Object.keys(grads.dParameters).sort(), Object.keys(expected.dParameters).sort());
          for (const [param, want] of Object.entries(expected.dParameters)) {
            fx.assertFixtureClose(grads.dParameters[param], want, expected, `dParameters['${param}']`);
          }
        } finally {
          module.dispose();
        }
      });
    }
  });
}
