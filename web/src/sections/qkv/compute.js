// The computation behind section 1 (queries, keys and values), apart from its view: the key-value
// store, one query's weights and output, the output for every query on a grid, and which regime
// (lookup, convex combination, pooling) the weights are in. Plain data in and out.

import { linspace, tensor } from '../../../shared/tensors.js';

export const KEYS = [1, 2.5, 4, 5.5, 7, 8.5];
export const VALUES = [3, 7, 2, 5, 8, 4];
export const NAMES = KEYS.map((_, i) => `k${'₁₂₃₄₅₆'[i]}`);
export const CURVE = linspace(0, 10, 201);

const keys = tensor(KEYS, [KEYS.length]);
const values = tensor(VALUES, [VALUES.length]);
const curveQueries = tensor(CURVE, [CURVE.length]);

/**
 * The soft lookup at query q and temperature T: softmax(−(q − k)²/2T) is the Gaussian kernel with
 * σ² = T, so the package's kernelRegression computes it. Returns { q, T, output (at q), weights
 * [KEYS], curve (the output at every query of CURVE) }.
 */
export function softLookup(attn, q, T) {
  const bandwidth = Math.sqrt(T);
  const one = attn.kernelRegression({
    keys, values, queries: tensor([q], [1]), kernel: 'gaussian', bandwidth, weights: true,
  });
  const curve = attn.kernelRegression({ keys, values, queries: curveQueries, kernel: 'gaussian', bandwidth });
  return { q, T, output: one.output.data[0], weights: one.weights.data, curve: curve.output.data };
}

/** The store as rows { k, v, w, name } with each key's weight. */
export const storeRows = (weights) => KEYS.map((k, i) => ({ k, v: VALUES[i], w: weights[i], name: NAMES[i] }));

/** One line naming the regime the weights are in: a lookup, a convex combination or pooling. */
export function regime(weights) {
  const rows = storeRows(weights);
  const best = rows.reduce((a, b) => (b.w > a.w ? b : a));
  const spread = Math.max(...weights) - Math.min(...weights);
  if (best.w > 0.99) return `one-hot: a database lookup that returns ${best.name}'s value ${best.v}`;
  if (spread < 0.02) return 'uniform: average pooling, the mean of the values';
  return `a convex combination, led by ${best.name} (${(100 * best.w).toFixed(0)}%)`;
}
