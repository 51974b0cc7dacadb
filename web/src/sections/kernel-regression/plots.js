// Section 2's pictures, each a pure function of the section's data and a width. `data` is
// computeRegression's result with the kernel `k`, bandwidth `s`, the training `points`, the
// hovered heatmap row `hover` (or null), `cls` (classification mode) and `loo` ({ errors, best }).

import * as Plot from '@observablehq/plot';
import { heatmap } from '../../ui/heatmap.js';
import {
  CLASSES, FIT_QUERIES, HEAT_QUERIES, KERNEL_NAMES, LOO_BANDWIDTHS, N, SHAPE_GRID, X_MAX, Y_DOMAIN, classOf, f,
} from './compute.js';

const CLASS_COLORS = ['#31446b', '#35b779', '#fde725'];
const ACCENT = '#d6452b';

/** Every kernel K((q − x)/σ) at this σ, the selected one bold. */
export function shapesPlot({ k, s, shapeCurves }, width) {
  const rows = shapeCurves.flatMap(({ name, K }) =>
    K.map((v, i) => ({ u: SHAPE_GRID[i], K: v, kernel: name })));
  return Plot.plot({
    width, height: 240, marginLeft: 44, marginBottom: 40,
    x: { label: 'q − x →', domain: [-2.5, 2.5] },
    y: { label: '↑ K', domain: [0, 1.12], grid: true },
    color: { domain: KERNEL_NAMES, range: ['#2a6f97', '#7a5195', '#ef5675', '#6b6b6b'], legend: true },
    marks: [
      Plot.line(rows, {
        x: 'u', y: 'K', stroke: 'kernel',
        strokeWidth: (d) => (d.kernel === k ? 3 : 1.2),
        strokeDasharray: (d) => ({ gaussian: null, boxcar: '6 3', epanechnikov: '2 2', constant: '1 4' })[d.kernel],
        z: 'kernel',
      }),
      Plot.ruleX([-s, s], { stroke: '#aaa', strokeDasharray: '2 3' }),
      Plot.text([s], { x: (d) => d, frameAnchor: 'top', text: () => '+σ', dy: 2, dx: 10, fill: '#777', fontSize: 10 }),
    ],
  });
}

/** The hovered query { x, y } (its prediction), or null. */
export const hoveredQuery = ({ hover, heatOutput }) => (hover == null ? null : { x: HEAT_QUERIES[hover], y: heatOutput[hover] });

/** The truth, the training points (sized by the hovered query's weights), the prediction. */
export function fitPlot(data, width) {
  const { fit, weights, points, hover, cls } = data;
  const grid = Array.from(FIT_QUERIES, (x, i) => ({ x, y: fit[i], truth: f(x) }));
  const pts = points.map((p, i) => ({ ...p, i, w: hover == null ? null : weights[hover * N + i], c: classOf(p.y) }));
  const q = hoveredQuery(data);
  const maxW = hover == null ? 1 : Math.max(...pts.map((p) => p.w));
  return Plot.plot({
    width, height: 300, marginLeft: 44, marginBottom: 40,
    x: { domain: [0, X_MAX], label: 'x →' },
    y: { domain: Y_DOMAIN, label: '↑ y', grid: true },
    r: { domain: [0, maxW], range: [1.5, 10] },
    color: { domain: [0, 1, 2], range: CLASS_COLORS },
    symbol: { domain: [0, 1, 2], range: ['circle', 'square', 'triangle'] },
    marks: [
      cls ? Plot.ruleY([1.5, 3], { stroke: '#bbb', strokeDasharray: '2 3' }) : null,
      Plot.line(grid, { x: 'x', y: 'truth', stroke: '#555', strokeDasharray: '5 4', strokeWidth: 1.5 }),
      Plot.dot(pts, {
        x: 'x', y: 'y',
        r: hover == null ? 4 : 'w',
        fill: cls ? 'c' : '#2a6f97', symbol: cls ? 'c' : 'circle',
        stroke: cls ? '#333' : 'white', strokeWidth: cls ? 0.6 : 1,
        fillOpacity: hover == null ? 0.85 : 0.95,
      }),
      Plot.line(grid, { x: 'x', y: 'y', stroke: ACCENT, strokeWidth: 2.5 }),
      q ? Plot.ruleX([q.x], { stroke: ACCENT, strokeOpacity: 0.6 }) : null,
      q && Number.isFinite(q.y) ? Plot.dot([q], { x: 'x', y: 'y', symbol: 'diamond', r: 6, fill: ACCENT, stroke: 'white' }) : null,
    ],
  });
}

/** The weights [HEAT_QUERIES × N], keys in the order of x, the hovered row outlined. */
export function weightsHeatmap({ weights, points, hover }, width) {
  const order = points.map((p, i) => i).sort((a, b) => points[a].x - points[b].x);
  const rank = new Map(order.map((i, r) => [i, r]));
  let maxW = 0;
  for (const w of weights) if (w > maxW) maxW = w;
  return heatmap({
    values: weights, rows: HEAT_QUERIES.length, cols: N,
    rowLabel: (i) => (i % 10 === 0 ? HEAT_QUERIES[i].toFixed(0) : ''),
    colLabel: (j) => (rank.get(j) % 10 === 9 || rank.get(j) === 0 ? String(rank.get(j) + 1) : ''),
    colOrder: order,
    x: { label: 'keys xᵢ, by rank in x →', labelAnchor: 'right' },
    y: { label: '↑ query q', labelAnchor: 'top' },
    color: { scheme: 'viridis', domain: [0, Math.max(maxW, 1e-6)], label: 'weight' },
    width, height: 300, margins: { left: 44, bottom: 40, top: 22 },
    highlightRow: hover,
  });
}

/** The leave-one-out error over σ (finite values only), the current σ and the best one. */
export function looPlot({ s, cls, loo: { errors, best } }, width) {
  const rows = LOO_BANDWIDTHS.map((b, i) => ({ b, e: errors[i] })).filter((d) => Number.isFinite(d.e));
  const bestRow = rows.find((d) => d.b === best) ?? rows.reduce((a, d) => (d.e < a.e ? d : a), rows[0]);
  return Plot.plot({
    width, height: 240, marginLeft: 50, marginBottom: 40,
    x: { type: 'log', domain: [0.02, 5], label: 'bandwidth σ →' },
    y: { label: cls ? '↑ LOO error (Brier, one-hot)' : '↑ LOO mean squared error', grid: true, nice: true, zero: true },
    marks: [
      // An explicit text channel: a log axis would otherwise drop the 0.05, 0.5 and 5 labels.
      Plot.axisX([0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5], { text: String, label: 'bandwidth σ →' }),
      Plot.line(rows, { x: 'b', y: 'e', stroke: '#2a6f97', strokeWidth: 2 }),
      Plot.ruleX([s], { stroke: ACCENT, strokeDasharray: '4 3' }),
      bestRow ? Plot.dot([bestRow], { x: 'b', y: 'e', r: 5, fill: '#2a6f97', stroke: 'white' }) : null,
      bestRow ? Plot.text([bestRow], { x: 'b', y: 'e', text: (d) => `min at σ = ${d.b.toFixed(3)}`, dy: -12, fontSize: 11 }) : null,
    ],
  });
}

/** Class probabilities p(c | q) over the fit's queries, stacked. */
export function classesPlot({ probs, points }, width) {
  const rows = [];
  FIT_QUERIES.forEach((x, i) => {
    CLASSES.forEach((name, c) => rows.push({ x, c, p: probs[i * CLASSES.length + c] }));
  });
  return Plot.plot({
    width, height: 200, marginLeft: 44, marginBottom: 40,
    x: { domain: [0, X_MAX], label: 'query q →' },
    y: { domain: [0, 1], label: '↑ p(c | q)', grid: true },
    color: { domain: [0, 1, 2], range: CLASS_COLORS, legend: true, tickFormat: (c) => CLASSES[c] },
    marks: [
      // NaN (no key within σ of the query) leaves a gap rather than an interpolated band.
      Plot.areaY(rows, { x: 'x', y: 'p', fill: 'c', z: 'c', order: [0, 1, 2], stroke: 'white', strokeWidth: 0.5 }),
      Plot.dot(points, { x: 'x', y: () => 1.0, dy: -2, r: 2, fill: '#333' }),
    ],
  });
}
