// The computation behind section 2 (Nadaraya-Watson kernel regression), apart from its view:
// d2l's data and every number the plots show, all through the package. Plain data in and out,
// so that it runs (and is tested) without a page.

import { linspace, logspace, tensor } from '../../../shared/tensors.js';
import { normal, uniform } from '../../../shared/random.js';

export const N = 40;
export const X_MAX = 5;
export const Y_DOMAIN = [-3.5, 7.5];
export const f = (x) => 2 * Math.sin(x) + x;
export const FIT_QUERIES = linspace(0, X_MAX, 201);
// d2l's validation queries: 0, 0.1, …, 4.9 — the heatmap's rows.
export const HEAT_QUERIES = Float32Array.from({ length: 50 }, (_, i) => i / 10);
export const SHAPE_GRID = linspace(-2.5, 2.5, 201);
export const LOO_BANDWIDTHS = logspace(0.02, 5, 48);
export const KERNEL_NAMES = ['gaussian', 'boxcar', 'epanechnikov', 'constant'];
export const CLASSES = ['low (y < 1.5)', 'mid (1.5 ≤ y < 3)', 'high (y ≥ 3)'];
export const classOf = (y) => (y < 1.5 ? 0 : y < 3 ? 1 : 2);

/** d2l's training set: N points x ~ U[0, 5), sorted, y = f(x) + N(0, 1), from `seed`. */
export function makePoints(seed) {
  const rand = uniform(seed);
  const noise = normal(uniform(seed ^ 0x5bd1e995));
  const xs = Array.from({ length: N }, () => X_MAX * rand()).sort((a, b) => a - b);
  return xs.map((x) => ({ x, y: f(x) + noise() }));
}

/** Leave-one-out errors over LOO_BANDWIDTHS: { errors, best }, on y or, with `cls`, the one-hot classes. */
export function leaveOneOutSearch(attn, points, kernel, cls) {
  const keys = tensor(points.map((p) => p.x), [points.length]);
  return attn.leaveOneOut({ keys, values: cls ? oneHot(points) : ys(points), kernel, bandwidths: LOO_BANDWIDTHS });
}

/**
 * Everything the section draws for points [{ x, y }], a kernel and a bandwidth:
 * shapeCurves [{ name, K }] (K(u) on SHAPE_GRID for every kernel), fit (f̂ on FIT_QUERIES),
 * weights [HEAT_QUERIES × N] and heatOutput (f̂ on HEAT_QUERIES), and, with `cls`, probs
 * [FIT_QUERIES × CLASSES] (the one-hot labels pooled by the same weights).
 */
export function computeRegression(attn, points, kernel, bandwidth, cls) {
  const keys = tensor(points.map((p) => p.x), [points.length]);
  const values = ys(points);
  const distances = tensor(SHAPE_GRID.map(Math.abs), [SHAPE_GRID.length]);
  const shapeCurves = KERNEL_NAMES.map((name) => ({
    name, K: Array.from(attn.kernelValues({ distances, kernel: name, bandwidth }).data),
  }));
  const at = (queries, extra = {}) => attn.kernelRegression({ keys, values, queries: tensor(queries, [queries.length]), kernel, bandwidth, ...extra });
  const fit = at(FIT_QUERIES).output.data;
  const heat = at(HEAT_QUERIES, { weights: true });
  const probs = cls ? at(FIT_QUERIES, { values: oneHot(points) }).output.data : null;
  return { shapeCurves, fit, heatOutput: heat.output.data, weights: heat.weights.data, probs };
}

/** Points moved by hand, Map(index → { x, y }), as URL text: "i_x_y*i_x_y". */
export const encodeMoved = (moved) =>
  [...moved].map(([i, p]) => `${i}_${p.x.toFixed(3)}_${p.y.toFixed(3)}`).join('*');

/** encodeMoved's text back to a Map, dropping malformed entries and clamping to the plot. */
export function decodeMoved(text) {
  const moved = new Map();
  for (const part of text.split('*')) {
    const [i, x, y] = part.split('_').map(Number);
    if (Number.isInteger(i) && i >= 0 && i < N && Number.isFinite(x) && Number.isFinite(y)) {
      moved.set(i, { x: Math.min(X_MAX, Math.max(0, x)), y: Math.min(Y_DOMAIN[1], Math.max(Y_DOMAIN[0], y)) });
    }
  }
  return moved;
}

const ys = (points) => tensor(points.map((p) => p.y), [points.length]);

const oneHot = (points) =>
  tensor(points.flatMap((p) => CLASSES.map((_, c) => (classOf(p.y) === c ? 1 : 0))), [points.length, CLASSES.length]);
