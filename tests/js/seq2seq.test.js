// Seq2SeqAttention (d2l's GRU encoder-decoder with Bahdanau attention) in the three builds: against
// d2l's PyTorch model (tests/fixtures/seq2seq, written by scripts/fixtures/seq2seq.py): forward
// logits and attention, loss, every gradient, two clipped Adam steps, greedy translations; a
// learning test (a seeded copy task reaches its accuracy, and the attention of a trained model
// lies on the diagonal); argument errors and the model's state.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as fx from './fixtures.js';
import { mulberry32 } from '../../harness/reference.js';

const cases = fx.loadFixture('seq2seq/seq2seq.json');

// A copy task: src = n tokens in [3, V) then eos; the target is the same sequence.
function copyBatch(rng, batch, steps, vocab) {
  const src = new Int32Array(batch * steps), tgtIn = new Int32Array(batch * steps), tgtOut = new Int32Array(batch * steps);
  const lens = new Int32Array(batch);
  for (let b = 0; b < batch; b++) {
    const n = 3 + Math.floor(rng() * (steps - 3));
    lens[b] = n + 1;
    tgtIn[b * steps] = 1; // bos
    for (let i = 0; i < n; i++) {
      const token = 3 + Math.floor(rng() * (vocab - 3));
      src[b * steps + i] = tgtOut[b * steps + i] = tgtIn[b * steps + i + 1] = token;
    }
    src[b * steps + n] = tgtOut[b * steps + n] = 2; // eos
  }
  const shape = [batch, steps];
  return { src: { data: src, shape }, lens, tgtIn: { data: tgtIn, shape }, tgtOut: { data: tgtOut, shape } };
}

for (const attn of backends) {
  describe(`Seq2SeqAttention against d2l's PyTorch model (${labelOf(attn)})`, () => {
    for (const { name, inputs, options, expected } of cases) {
      test(`${name}: forward, loss and gradients`, () => {
        const m = fx.encoderDecoderModel(attn.Seq2SeqAttention, inputs);
        const [src, lens, tgtIn, tgtOut] = fx.encoderDecoderBatch(inputs);
        const out = m.forward(src, lens, tgtIn);
        fx.assertFixtureClose(out.logits, expected.logits, expected, 'logits');
        if (expected.attention) fx.assertFixtureClose(out.attention, expected.attention, expected, 'attention');
        else assert.equal(out.attention, null);
        const { loss, gradients } = m.lossAndGradients(src, lens, tgtIn, tgtOut, { pad: options.pad });
        assert.ok(Math.abs(loss - expected.loss) <= 2e-4 * Math.abs(expected.loss), `loss ${loss} vs ${expected.loss}`);
        fx.assertNamedClose(gradients, expected.gradients, expected, 'gradient');
        m.dispose();
      });

      test(`${name}: two clipped Adam steps, then greedy translation`, () => {
        const m = fx.encoderDecoderModel(attn.Seq2SeqAttention, inputs);
        const [src, lens, tgtIn, tgtOut] = fx.encoderDecoderBatch(inputs);
        const translation = m.translate(src, lens, { bos: options.bos, eos: options.eos, maxLen: options.maxLen });
        fx.assertGreedyTokens(translation, expected, options);
        fx.assertTwoAdamSteps(m, [src, lens, tgtIn, tgtOut], { options, expected });
        m.dispose();
      });
    }
  });

  describe(`Seq2SeqAttention learns (${labelOf(attn)})`, () => {
    test('a copy task: 95% of held-out tokens right after a few hundred steps, attention on the diagonal', () => {
      const rng = mulberry32(5);
      const vocab = 12, steps = 7;
      const m = new attn.Seq2SeqAttention({ srcVocabSize: vocab, tgtVocabSize: vocab, embedSize: 16, numHiddens: 32, numLayers: 1, seed: 3 });
      const trainSteps = attn.backend === 'wasm-simd' ? 400 : 250;
      for (let step = 0; step < trainSteps; step++) {
        const b = copyBatch(rng, 32, steps, vocab);
        m.trainStep(b.src, b.lens, b.tgtIn, b.tgtOut, { pad: 0, lr: 0.01, clip: 1 });
      }
      const held = copyBatch(mulberry32(99), 64, steps, vocab);
      const { tokens, attention } = m.translate(held.src, held.lens, { bos: 1, eos: 2, maxLen: steps });
      let right = 0, total = 0, diagonal = 0, rows = 0;
      for (let b = 0; b < 64; b++) {
        for (let t = 0; t < held.lens[b]; t++) {
          total++;
          if (tokens.data[b * steps + t] === held.tgtOut.data[b * steps + t]) right++;
          // Output token t copies source token t: the attention's largest weight is there.
          const row = attention.data.slice((b * steps + t) * steps, (b * steps + t + 1) * steps);
          rows++;
          if (row.indexOf(Math.max(...row)) === t) diagonal++;
        }
      }
      m.dispose();
      const accuracy = right / total;
      assert.ok(accuracy >= (attn.backend === 'wasm-simd' ? 0.95 : 0.8), `accuracy ${accuracy.toFixed(3)}`);
      assert.ok(diagonal / rows >= 0.7, `attention peaks on the diagonal in ${(diagonal / rows).toFixed(3)} of the rows`);
    });
  });

  describe(`Seq2SeqAttention arguments and state (${labelOf(attn)})`, () => {
    const config = { srcVocabSize: 7, tgtVocabSize: 8, embedSize: 4, numHiddens: 6, numLayers: 2, seed: 1 };
    const b = copyBatch(mulberry32(1), 3, 5, 7);

    test('config: defaults, and errors that name the field', () => {
      const m = new attn.Seq2SeqAttention(config);
      assert.deepEqual({ ...m.config }, { ...config, dropout: 0, attention: true });
      assert.equal(m.parameters[0].name, 'encoder.embedding.weight');
      m.dispose();
      assert.throws(() => new attn.Seq2SeqAttention({ ...config, numHiddens: 0 }), { name: 'RangeError', message: /^numHiddens:/ });
      assert.throws(() => new attn.Seq2SeqAttention({ ...config, dropout: 1 }), { name: 'RangeError', message: /^dropout:/ });
      assert.throws(() => new attn.Seq2SeqAttention({ ...config, srcVocabSize: '7' }), { name: 'TypeError', message: /^srcVocabSize:/ });
    });

    test('token ids and lengths out of range are RangeErrors naming the argument', () => {
      const m = new attn.Seq2SeqAttention(config);
      const bad = { data: b.tgtIn.data.map((t) => (t === 1 ? 8 : t)), shape: b.tgtIn.shape };
      assert.throws(() => m.forward(b.src, b.lens, bad), { name: 'RangeError', message: /^tgtInput: expected token ids in \[0, 8\)/ });
      assert.throws(() => m.forward(b.src, Int32Array.of(1, 2, 9), b.tgtIn), { name: 'RangeError', message: /^srcValidLens: expected lengths in \[0, 5\]/ });
      assert.throws(() => m.forward(b.src, b.lens, { data: new Float32Array(15), shape: [3, 5] }), { name: 'TypeError', message: /^tgtInput\.data: expected Int32Array/ });
      assert.throws(() => m.translate(b.src, b.lens, { bos: 1, eos: 2, maxLen: 0 }), { name: 'RangeError', message: /^maxLen:/ });
      assert.throws(() => m.lossAndGradients(b.src, b.lens, b.tgtIn, { data: new Int32Array(15), shape: [3, 5] }, { pad: 0 }),
        { name: 'RangeError', message: /^tgtOutput: expected at least one label other than pad/ });
      m.dispose();
    });

    test('loadStateDict is all or nothing; stateDict round-trips; use after dispose is a TypeError', () => {
      const m = new attn.Seq2SeqAttention(config);
      const before = m.forward(b.src, b.lens, b.tgtIn).logits;
      const other = new attn.Seq2SeqAttention({ ...config, seed: 2 }).stateDict();
      const broken = { ...other, 'decoder.dense.bias': { data: new Float32Array(3), shape: [3] } };
      assert.throws(() => m.loadStateDict(broken), { name: 'RangeError', message: /^dict\['decoder\.dense\.bias'\]: expected shape \[8\]/ });
      assert.deepEqual(m.forward(b.src, b.lens, b.tgtIn).logits, before, 'a failed load changes nothing');
      m.loadStateDict(other);
      assert.notDeepEqual(m.forward(b.src, b.lens, b.tgtIn).logits, before);
      assert.deepEqual(m.stateDict(), other);
      m.dispose();
      assert.throws(() => m.translate(b.src, b.lens, { bos: 1, eos: 2, maxLen: 3 }), { name: 'TypeError', message: 'Seq2SeqAttention: used after dispose()' });
    });

    test("d2l's 'encoder.rnn.rnn.*' spelling (its d2l.GRU wrapper) loads as 'encoder.rnn.*'", () => {
      for (const attention of [true, false]) {
        const m = new attn.Seq2SeqAttention({ ...config, attention });
        const other = new attn.Seq2SeqAttention({ ...config, attention, seed: 2 });
        const want = other.stateDict();
        const d2l = Object.fromEntries(Object.entries(want).map(([name, t]) => [name.replace(/^(encoder|decoder)\.rnn\./, '$1.rnn.rnn.'), t]));
        assert.ok(Object.keys(d2l).includes('encoder.rnn.rnn.weight_ih_l1'));
        m.loadStateDict(d2l);
        assert.deepEqual(m.stateDict(), want);
        assert.deepEqual(m.forward(b.src, b.lens, b.tgtIn), other.forward(b.src, b.lens, b.tgtIn));
        const twice = { ...want, 'encoder.rnn.rnn.bias_hh_l0': want['encoder.rnn.bias_hh_l0'] };
        assert.throws(() => m.loadStateDict(twice), { name: 'RangeError', message: /^dict: 'encoder\.rnn\.bias_hh_l0' given twice/ });
        m.dispose();
        other.dispose();
      }
    });

    test('without attention: the plain decoder, and no attention weights', () => {
      const m = new attn.Seq2SeqAttention({ ...config, attention: false });
      assert.ok(!m.parameters.some((p) => p.name.includes('attention')));
      const out = m.forward(b.src, b.lens, b.tgtIn);
      assert.deepEqual(out.logits.shape, [3, 5, 8]);
      assert.equal(out.attention, null);
      assert.equal(m.translate(b.src, b.lens, { bos: 1, eos: 2, maxLen: 4 }).attention, null);
      m.dispose();
    });
  });
}
