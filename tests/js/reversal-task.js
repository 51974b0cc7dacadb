// The reversal task of the Transformer's tests (transformer.test.js, transformer-learning.test.js).
// src = n tokens in [3, V) then eos (2); the target is the tokens reversed, then eos.
export function reversalBatch(rng, batch, steps, vocab) {
  const src = new Int32Array(batch * steps), tgtIn = new Int32Array(batch * steps), tgtOut = new Int32Array(batch * steps);
  const lens = new Int32Array(batch);
  for (let b = 0; b < batch; b++) {
    const n = 3 + Math.floor(rng() * (steps - 3));
    lens[b] = n + 1;
    const tokens = Array.from({ length: n }, () => 3 + Math.floor(rng() * (vocab - 3)));
    tokens.forEach((token, i) => { src[b * steps + i] = token; });
    src[b * steps + n] = 2;
    const reversed = [...tokens].reverse();
    tgtIn[b * steps] = 1; // bos
    reversed.forEach((token, i) => { tgtOut[b * steps + i] = tgtIn[b * steps + i + 1] = token; });
    tgtOut[b * steps + n] = 2;
  }
  const shape = [batch, steps];
  return { src: { data: src, shape }, lens, tgtIn: { data: tgtIn, shape }, tgtOut: { data: tgtOut, shape } };
}
