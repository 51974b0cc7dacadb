// Minibatches of buildArrays' output, as d2l's get_tensorloader serves them (a DataLoader with
// shuffle on for training, drop_last off: the last batch may be smaller). Shuffling is seeded
// (Fisher-Yates over the page's mulberry32) so a seed replays the same run.

import { uniform } from '../random.js';

/** A seeded permutation of 0 … n-1 (Fisher-Yates). */
export function permutation(n, seed) {
  const rand = uniform(seed);
  const order = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

const gatherRows = ({ data, shape: [, width] }, rows) => {
  const out = new Int32Array(rows.length * width);
  rows.forEach((r, i) => out.set(data.subarray(r * width, (r + 1) * width), i * width));
  return { data: out, shape: [rows.length, width] };
};

/**
 * The rows `rows` (indices) of buildArrays' output as one batch:
 * { src, tgtInput, tgtOutput: { data: Int32Array, shape: [B, numSteps] }, srcValidLens: Int32Array [B], rows }.
 */
export function takeRows(arrays, rows) {
  const n = arrays.srcValidLens.length;
  for (const r of rows) {
    if (!Number.isInteger(r) || r < 0 || r >= n) throw new RangeError(`rows: expected integers in [0, ${n}), given ${r}`);
  }
  return {
    src: gatherRows(arrays.src, rows),
    srcValidLens: Int32Array.from(rows, (r) => arrays.srcValidLens[r]),
    tgtInput: gatherRows(arrays.tgtInput, rows),
    tgtOutput: gatherRows(arrays.tgtOutput, rows),
    rows: Int32Array.from(rows),
  };
}

/**
 * One epoch of batches of `batchSize` rows (the last one smaller when batchSize does not divide
 * the row count), in order or shuffled by `seed` (use a new seed per epoch, e.g. seed + epoch).
 */
export function* batches(arrays, { batchSize, shuffle = false, seed = 0 } = {}) {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`batchSize: expected a positive integer, given ${batchSize}`);
  }
  const n = arrays.srcValidLens.length;
  const order = shuffle ? permutation(n, seed) : Int32Array.from({ length: n }, (_, i) => i);
  for (let start = 0; start < n; start += batchSize) yield takeRows(arrays, Array.from(order.subarray(start, start + batchSize)));
}
