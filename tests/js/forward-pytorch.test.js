// The forward outputs of the PyTorch gradient fixtures (tests/fixtures/gradients, written by
// scripts/fixtures/gradients.py) against the API, in the three builds: the fixtures describe
// what our functions compute (options, masks, state-dict names) before any backward reads them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as fx from './fixtures.js';

const sdpa = fx.loadFixture('gradients/sdpa.json');
const additive = fx.loadFixture('gradients/additive.json');
const mha = fx.loadFixture('gradients/mha.json');

for (const attn of backends) {
  describe(`PyTorch fixtures, forward (${labelOf(attn)})`, () => {
    for (const { name, inputs, options, expected } of sdpa) {
      test(`scaledDotProductAttention: ${name}`, () => {
        const { output } = attn.scaledDotProductAttention(
          fx.floatTensor(inputs.q), fx.floatTensor(inputs.k), fx.floatTensor(inputs.v), fx.sdpaOptions(options));
        fx.assertFixtureClose(output, expected.output, expected, 'output');
      });
    }

    for (const { name, inputs, options, expected } of additive) {
      test(`additiveAttention: ${name}`, () => {
        const { output } = attn.additiveAttention(
          fx.floatTensor(inputs.q), fx.floatTensor(inputs.k), fx.floatTensor(inputs.v), fx.additiveOptions(options));
        fx.assertFixtureClose(output, expected.output, expected, 'output');
      });
    }

    for (const { name, inputs, options, expected } of mha) {
      test(`MultiHeadAttention.forward: ${name}`, () => {
        const module = fx.multiHeadAttention(attn, inputs);
        try {
          // The fixture holds exactly the parameters this configuration has.
          assert.deepEqual(module.parameters.map((p) => p.name).sort(), Object.keys(inputs.stateDict).sort());
          const { output } = module.forward(
            fx.floatTensor(inputs.query), fx.floatTensor(inputs.key), fx.floatTensor(inputs.value),
            { ...fx.multiHeadOptions(options), needWeights: false });
          fx.assertFixtureClose(output, expected.output, expected, 'output');
        } finally {
          module.dispose();
        }
      });
    }
  });
}
