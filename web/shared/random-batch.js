// Random token batches for timing training steps, as the training sections of the bench and
// the engines page (scripts/bench/) take them: token ids 0, 1 and 2 are padding, bos and eos.
import { uniform } from './random.js';

export const PAD = 0, BOS = 1, EOS = 2;

// A padded batch as d2l makes them: sources of 2..steps tokens ending in eos, targets likewise,
// target input = bos then the target shifted right.
export function batchOf(batch, steps, vocab, seed) {
  const rand = uniform(seed);
  const sequence = () => {
    const n = 2 + Math.floor(rand() * (steps - 1));
    return [...Array.from({ length: n - 1 }, () => 3 + Math.floor(rand() * (vocab - 3))), EOS];
  };
  const src = new Int32Array(batch * steps), lens = new Int32Array(batch);
  const tgtIn = new Int32Array(batch * steps), tgtOut = new Int32Array(batch * steps);
  for (let b = 0; b < batch; b++) {
    const s = sequence(), t = sequence();
    src.set(s, b * steps);
    lens[b] = s.length;
    tgtOut.set(t, b * steps);
    tgtIn.set([BOS, ...t.slice(0, -1)], b * steps);
  }
  const shape = [batch, steps];
  return { src: { data: src, shape }, lens, tgtIn: { data: tgtIn, shape }, tgtOut: { data: tgtOut, shape } };
}
