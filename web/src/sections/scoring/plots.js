// Section 3's pictures, each a pure function of compute.js's results and a width: the 2-D plane
// and the scores per function, the √d histograms, softmax bars and saturation curve, and the
// masked-softmax heatmaps.

import * as Plot from '@observablehq/plot';
import { heatmap } from '../../ui/heatmap.js';
import { KEYS, MASK_BATCH, MASK_KEYS, MASK_QUERIES, MASK_SCORES, SAMPLES, SCORE_FUNCTIONS, std } from './compute.js';

const KEY_NAMES = KEYS.map((_, i) => `k${'₁₂₃₄₅₆'[i]}`);
const SHORT = { dot: 'dot', 'scaled-dot': 'scaled dot', 'neg-sq-dist': '−½‖q−k‖²', additive: 'additive', general: 'general' };
const ACCENT = '#d6452b';
const RAW = 'softmax(qᵀk)';
const SCALED = 'softmax(qᵀk/√d)';

/** The query as an arrow and the keys, dot area ∝ the weights of the `shown` function. */
export function planePlot({ qv, keys, perFunction }, shown, size) {
  const w = perFunction.find((x) => x.fn === shown).weights;
  const keyRows = keys.map(([x, y], i) => ({ x, y, w: w[i], name: KEY_NAMES[i] }));
  return Plot.plot({
    width: size, height: size, marginLeft: 40, marginBottom: 36,
    x: { domain: [-3, 3], label: 'dimension 1 →', grid: true },
    y: { domain: [-3, 3], label: '↑ dimension 2', grid: true },
    r: { domain: [0, 1], range: [1.5, 18] },
    marks: [
      Plot.ruleX([0], { stroke: '#bbb' }),
      Plot.ruleY([0], { stroke: '#bbb' }),
      Plot.dot(keyRows, { x: 'x', y: 'y', r: 'w', fill: '#2a6f97', fillOpacity: 0.85, stroke: 'white' }),
      Plot.dot(keyRows, { x: 'x', y: 'y', r: 2, fill: '#1d2433' }),
      Plot.text(keyRows, { x: 'x', y: 'y', text: (d) => `${d.name} ${d.w.toFixed(2)}`, dy: -20, fontSize: 11 }),
      Plot.arrow([{ x1: 0, y1: 0, x2: qv[0], y2: qv[1] }], { x1: 'x1', y1: 'y1', x2: 'x2', y2: 'y2', stroke: ACCENT, strokeWidth: 2.5 }),
      Plot.text([{ x: qv[0], y: qv[1] }], { x: 'x', y: 'y', text: () => 'q', dx: 8, dy: 8, fill: ACCENT, fontWeight: 700, fontSize: 13 }),
    ],
  });
}

/** One row per scoring function: the scores as numbers over their softmax weights as bars. */
export function scoreBarsPlot({ perFunction }, shown, width) {
  const rows = perFunction.flatMap(({ fn, scores, weights }) =>
    KEY_NAMES.map((name, i) => ({ fn, name, s: scores[i], w: weights[i] })));
  return Plot.plot({
    width, height: 420, marginLeft: 84, marginRight: 8, marginBottom: 30, marginTop: 8,
    fy: { domain: SCORE_FUNCTIONS, label: null, padding: 0.18 },
    x: { domain: KEY_NAMES, label: null, padding: 0.2 },
    y: { domain: [0, 1], axis: null },
    marks: [
      Plot.frame({ stroke: '#eee' }),
      Plot.barY(rows, { fy: 'fn', x: 'name', y: 'w', fill: (d) => (d.fn === shown ? '#2a6f97' : '#8fb3cc') }),
      Plot.text(rows, { fy: 'fn', x: 'name', y: 'w', text: (d) => d.s.toFixed(2), dy: -7, fontSize: 9.5, fill: '#333' }),
      Plot.axisFy({ anchor: 'left', label: null, tickFormat: (fn) => SHORT[fn], fontSize: 11 }),
    ],
  });
}

/** A histogram of scores inside `domain`, bins of binWidth, with their std. */
export function histogramPlot(data, { domain, binWidth, color }, width) {
  const thresholds = [];
  for (let t = domain[0]; t <= domain[1] + 1e-9; t += binWidth) thresholds.push(t);
  return Plot.plot({
    width, height: 200, marginLeft: 44, marginBottom: 36,
    x: { domain, label: 'score →' },
    y: { label: '↑ count', grid: true },
    marks: [
      Plot.rectY(Array.from(data).filter((v) => v >= domain[0] && v <= domain[1]),
        Plot.binX({ y: 'count' }, { x: (v) => v, thresholds, fill: color })),
      Plot.ruleY([0]),
      Plot.text([`std ${std(data).toFixed(2)}`], { frameAnchor: 'top-right', dy: 4, dx: -4, fontSize: 11 }),
    ],
  });
}

/** One query's SAMPLES weights, unscaled above scaled. */
export function softmaxBarsPlot({ rawSoft, scaledSoft }, width) {
  const soft = [];
  for (let j = 0; j < SAMPLES; j++) soft.push({ j, w: rawSoft[j], kind: RAW }, { j, w: scaledSoft[j], kind: SCALED });
  return Plot.plot({
    width, height: 220, marginLeft: 44, marginBottom: 36, marginRight: 8,
    fy: { label: null, domain: [RAW, SCALED], axis: null, padding: 0.25 },
    x: { label: 'key →', ticks: [], domain: Array.from({ length: SAMPLES }, (_, j) => j), padding: 0.1 },
    y: { domain: [0, 1], label: '↑ weight', ticks: [0, 0.5, 1] },
    marks: [
      Plot.barY(soft, { fy: 'kind', x: 'j', y: 'w', fill: (d) => (d.kind === RAW ? '#7a5195' : '#2a6f97') }),
      Plot.ruleY([0]),
      Plot.text([RAW, SCALED], { fy: (t) => t, text: (t) => t, frameAnchor: 'top-right', dy: 2, fontSize: 11 }),
    ],
  });
}

/** The mean largest weight per query against d, unscaled and scaled; the current d marked. */
export function saturationPlot({ d, curve }, width) {
  const lines = curve.flatMap(({ d: dd, raw: a, scaled: b }) => [
    { d: dd, m: a, kind: 'unscaled' }, { d: dd, m: b, kind: 'scaled by 1/√d' }]);
  return Plot.plot({
    width, height: 220, marginLeft: 44, marginBottom: 36,
    x: { type: 'log', base: 2, domain: [1, 1024], label: 'd →', tickFormat: String, ticks: [1, 4, 16, 64, 256, 1024] },
    y: { domain: [0, 1], label: '↑ mean max weight', grid: true },
    color: { domain: ['unscaled', 'scaled by 1/√d'], range: ['#7a5195', '#2a6f97'], legend: true },
    marks: [
      Plot.ruleY([1 / SAMPLES], { stroke: '#aaa', strokeDasharray: '2 3' }),
      Plot.line(lines, { x: 'd', y: 'm', stroke: 'kind', strokeWidth: 2, marker: 'dot', strokeDasharray: (x) => (x.kind === 'unscaled' ? '5 3' : null), z: 'kind' }),
      Plot.ruleX([d], { stroke: ACCENT, strokeDasharray: '4 3' }),
    ],
  });
}

const batchOf = (i) => Math.floor(i / MASK_QUERIES);
const maskCommon = (width) => ({
  rows: MASK_BATCH * MASK_QUERIES, cols: MASK_KEYS, width, height: 190,
  rowLabel: (i) => `b${batchOf(i) + 1} q${(i % MASK_QUERIES) + 1}`, colLabel: (j) => `k${j + 1}`,
  margins: { left: 54, bottom: 30, top: 8 }, x: { label: null }, y: { label: null },
});

/** The example's scores, the keys past each batch row's valid length crossed out. */
export const maskScoresPlot = ({ lens }, width) => heatmap({
  ...maskCommon(width), values: MASK_SCORES.data, cellText: (v) => v.toFixed(2),
  masked: (i, j) => j >= lens[batchOf(i)],
  color: { scheme: 'blues', domain: [0, 1] },
});

/** maskedSoftmax's weights. */
export const maskWeightsPlot = ({ masked }, width) => heatmap({
  ...maskCommon(width), values: masked, cellText: (v) => (v === 0 ? '0' : v.toFixed(2)),
  color: { scheme: 'viridis', domain: [0, 1] },
});
