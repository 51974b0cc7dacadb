// The Transformer (d2l 11.7) learns, in the three builds: a seeded reversal task reaches 95% of
// held-out tokens, and the cross-attention of the trained model lies on the anti-diagonal. A file
// of its own: at about half a minute over the three builds it is the suite's longest, and test
// files run side by side (scripts/test-js.sh).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { mulberry32 } from './reference.js';
import { reversalBatch } from './reversal-task.js';

for (const attn of backends) {
  describe(`Transformer learns (${labelOf(attn)})`, () => {
    test('reversal: 95% of held-out tokens right, cross-attention on the anti-diagonal', () => {
      const rng = mulberry32(7);
      const vocab = 10, steps = 6;
      const m = new attn.Transformer({ srcVocabSize: vocab, tgtVocabSize: vocab, numHiddens: 32, ffnNumHiddens: 64, numHeads: 4, numBlks: 2, seed: 3 });
      for (let step = 0; step < 800; step++) {
        const b = reversalBatch(rng, 32, steps, vocab);
        m.trainStep(b.src, b.lens, b.tgtIn, b.tgtOut, { pad: 0, lr: 0.005, clip: 1 });
      }
      const held = reversalBatch(mulberry32(99), 64, steps, vocab);
      const { tokens, attention } = m.translate(held.src, held.lens, { bos: 1, eos: 2, maxLen: steps });
      m.dispose();
      let right = 0, total = 0;
      const [, heads] = attention.decoderCross[0].shape;
      const onAntiDiagonal = new Array(heads).fill(0);
      let rows = 0;
      for (let b = 0; b < 64; b++) {
        const n = held.lens[b] - 1;
        for (let t = 0; t < held.lens[b]; t++) {
          total++;
          if (tokens.data[b * steps + t] === held.tgtOut.data[b * steps + t]) right++;
          if (t === n) continue; // eos attends wherever it likes
          rows++;
          // Output token t is source token n - 1 - t: count the heads of the last block whose
          // largest weight is there.
          const map = attention.decoderCross.at(-1).data;
          for (let h = 0; h < heads; h++) {
            const row = map.slice(((b * heads + h) * steps + t) * steps, ((b * heads + h) * steps + t + 1) * steps);
            if (row.indexOf(Math.max(...row)) === n - 1 - t) onAntiDiagonal[h]++;
          }
        }
      }
      const accuracy = right / total;
      assert.ok(accuracy >= 0.95, `accuracy ${accuracy.toFixed(3)}`);
      const best = Math.max(...onAntiDiagonal) / rows;
      assert.ok(best >= 0.7, `the best head peaks on the anti-diagonal in ${best.toFixed(3)} of the rows`);
      console.log(`reversal: accuracy ${accuracy.toFixed(3)}, best head on the anti-diagonal in ${best.toFixed(3)} of the rows`);
    });
  });
}
