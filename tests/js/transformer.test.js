// Transformer (d2l 11.7) in the three builds: against d2l's PyTorch model (tests/fixtures/transformer,
// written by scripts/fixtures/transformer.py): forward logits and every attention map, loss,
// every gradient, two clipped Adam steps, cached greedy translation; argument errors and the
// model's state. Its learning test is transformer-learning.test.js.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as fx from './fixtures.js';
import { mulberry32 } from '../../harness/reference.js';
import { reversalBatch } from './reversal-task.js';

const cases = fx.loadFixture('transformer/transformer.json');

function assertMapsClose(got, want, label) {
  assert.equal(got.length, want.length, `${label}: blocks`);
  want.forEach((tensor, i) => fx.assertFixtureClose(got[i], tensor, tensor, `${label} block ${i}`));
}

for (const attn of backends) {
  describe(`Transformer against d2l's PyTorch model (${labelOf(attn)})`, () => {
    for (const { name, inputs, options, expected } of cases) {
      test(`${name}: forward, attention maps, loss and gradients`, () => {
        const m = fx.encoderDecoderModel(attn.Transformer, inputs);
        const [src, lens, tgtIn, tgtOut] = fx.encoderDecoderBatch(inputs);
        const out = m.forward(src, lens, tgtIn);
        fx.assertFixtureClose(out.logits, expected.logits, expected, 'logits');
        for (const kind of ['encoder', 'decoderSelf', 'decoderCross']) {
          assertMapsClose(out.attention[kind], expected.attention[kind], kind);
        }
        const { loss, gradients } = m.lossAndGradients(src, lens, tgtIn, tgtOut, { pad: options.pad });
        assert.ok(Math.abs(loss - expected.loss) <= 2e-4 * Math.abs(expected.loss), `loss ${loss} vs ${expected.loss}`);
        fx.assertNamedClose(gradients, expected.gradients, expected, 'gradient');
        m.dispose();
      });

      test(`${name}: cached greedy translation, then two clipped Adam steps`, () => {
        const m = fx.encoderDecoderModel(attn.Transformer, inputs);
        const [src, lens, tgtIn, tgtOut] = fx.encoderDecoderBatch(inputs);
        const translation = m.translate(src, lens, { bos: options.bos, eos: options.eos, maxLen: options.maxLen });
        fx.assertGreedyTokens(translation, expected, options);
        // Rows after eos are 0 in ours, predicted on in the fixture: compare the rows before.
        translation.attention.decoderCross.forEach((got, i) => {
          const wantMap = expected.translationAttention.decoderCross[i];
          const [B, h, T, Ts] = wantMap.shape;
          const peak = Math.max(...wantMap.data.map(Math.abs));
          for (let b = 0; b < B; b++) {
            for (let x = 0; x < h * T * Ts; x++) {
              const t = Math.floor(x / Ts) % T, index = b * h * T * Ts + x;
              const w = t < translation.lengths[b] ? wantMap.data[index] : 0;
              assert.ok(Math.abs(got.data[index] - w) <= 2e-4 * peak, `cross block ${i} [${b}, ${x}]: ${got.data[index]} vs ${w}`);
            }
          }
        });
        fx.assertTwoAdamSteps(m, [src, lens, tgtIn, tgtOut], { options, expected });
        m.dispose();
      });
    }
  });

  describe(`Transformer arguments and state (${labelOf(attn)})`, () => {
    const config = { srcVocabSize: 7, tgtVocabSize: 8, numHiddens: 8, ffnNumHiddens: 12, numHeads: 2, numBlks: 2, seed: 1 };
    const b = reversalBatch(mulberry32(1), 3, 5, 7);

    test('config: defaults, and errors that name the field', () => {
      const m = new attn.Transformer(config);
      assert.deepEqual({ ...m.config }, { ...config, dropout: 0 });
      assert.equal(m.parameters[1].name, 'encoder.blks.block0.attention.W_q.weight');
      assert.equal(m.parameters.at(-1).name, 'decoder.dense.bias');
      m.dispose();
      assert.throws(() => new attn.Transformer({ ...config, numHeads: 3 }), { name: 'RangeError', message: 'numHeads: expected a divisor of numHiddens 8, got 3' });
      assert.throws(() => new attn.Transformer({ ...config, ffnNumHiddens: 0 }), { name: 'RangeError', message: /^ffnNumHiddens:/ });
      assert.throws(() => new attn.Transformer({ ...config, dropout: 1 }), { name: 'RangeError', message: /^dropout:/ });
      assert.throws(() => new attn.Transformer({ ...config, numBlks: 1.5 }), { name: 'RangeError', message: /^numBlks:/ });
      assert.throws(() => new attn.Transformer({ ...config, numHiddens: undefined }), { name: 'TypeError', message: /^numHiddens:/ });
    });

    test('token ids and lengths out of range are RangeErrors naming the argument', () => {
      const m = new attn.Transformer(config);
      const bad = { data: b.tgtIn.data.map((t) => (t === 1 ? 8 : t)), shape: b.tgtIn.shape };
      assert.throws(() => m.forward(b.src, b.lens, bad), { name: 'RangeError', message: /^tgtInput: expected token ids in \[0, 8\)/ });
      assert.throws(() => m.forward(b.src, Int32Array.of(1, 2, 9), b.tgtIn), { name: 'RangeError', message: /^srcValidLens: expected lengths in \[0, 5\]/ });
      assert.throws(() => m.translate(b.src, b.lens, { bos: 1, eos: 9, maxLen: 3 }), { name: 'RangeError', message: /^eos:/ });
      assert.throws(() => m.translate(b.src, b.lens, { bos: 1, eos: 2, maxLen: 0 }), { name: 'RangeError', message: /^maxLen:/ });
      assert.throws(() => m.trainStep(b.src, b.lens, b.tgtIn, b.tgtOut, { pad: 0, lr: -1 }), { name: 'RangeError', message: /^lr:/ });
      const out = m.forward(b.src, b.lens, b.tgtIn); // still usable after the errors
      assert.deepEqual(out.attention.decoderSelf[1].shape, [3, 2, 5, 5]);
      m.dispose();
    });

    test('loadStateDict is all or nothing; stateDict round-trips; use after dispose is a TypeError', () => {
      const m = new attn.Transformer(config);
      const before = m.forward(b.src, b.lens, b.tgtIn).logits;
      const other = new attn.Transformer({ ...config, seed: 2 });
      const state = other.stateDict();
      const broken = { ...state, 'decoder.blks.block1.addnorm3.ln.bias': { data: new Float32Array(3), shape: [3] } };
      assert.throws(() => m.loadStateDict(broken), { name: 'RangeError', message: /^dict\['decoder\.blks\.block1\.addnorm3\.ln\.bias'\]: expected shape \[8\]/ });
      assert.deepEqual(m.forward(b.src, b.lens, b.tgtIn).logits, before, 'a failed load changes nothing');
      m.loadStateDict(state);
      assert.deepEqual(m.stateDict(), state);
      assert.deepEqual(m.forward(b.src, b.lens, b.tgtIn), other.forward(b.src, b.lens, b.tgtIn));
      // Through safetensors both ways, as a d2l state dict saved by PyTorch would come.
      const roundTrip = new attn.Transformer(config).loadStateDict(attn.readSafetensors(attn.writeSafetensors(state)));
      assert.deepEqual(roundTrip.stateDict(), state);
      roundTrip.dispose();
      other.dispose();
      m.dispose();
      assert.throws(() => m.translate(b.src, b.lens, { bos: 1, eos: 2, maxLen: 3 }), { name: 'TypeError', message: 'Transformer: used after dispose()' });
    });
  });
}
