// Section 1's pictures, each a pure function of softLookup's result and a width: the store with
// the query and its output, and the weights as bars.

import * as Plot from '@observablehq/plot';
import { CURVE, KEYS, NAMES, storeRows } from './compute.js';

const ACCENT = '#d6452b';

/** The keys (x) with their values (y), dot size ∝ weight; the query, its output, and the output curve. */
export function storePlot({ q, output, weights, curve }, width) {
  const rows = storeRows(weights);
  return Plot.plot({
    width, height: 280, marginLeft: 44, marginBottom: 40,
    x: { domain: [0, 10], label: 'key / query position →' },
    y: { domain: [0, 9.5], label: '↑ value', grid: true },
    r: { domain: [0, 1], range: [2, 13] },
    marks: [
      Plot.line(Array.from(CURVE, (x, i) => ({ x, o: curve[i] })), {
        x: 'x', y: 'o', stroke: '#888', strokeWidth: 1.5,
      }),
      Plot.ruleX(rows, { x: 'k', y1: 0, y2: 'v', stroke: '#c8c8c8' }),
      Plot.dot(rows, { x: 'k', y: 'v', r: 'w', fill: '#2a6f97', stroke: 'white' }),
      Plot.text(rows, { x: 'k', y: 'v', text: (d) => `${d.name}=${d.v}`, dy: -16, fontSize: 11 }),
      Plot.ruleX([q], { stroke: ACCENT, strokeDasharray: '4 3' }),
      Plot.dot([{ q, output }], { x: 'q', y: 'output', symbol: 'diamond', r: 7, fill: ACCENT, stroke: 'white' }),
      Plot.text([{ q, output }], { x: 'q', y: 'output', text: () => `o = ${output.toFixed(2)}`, dx: 10, textAnchor: 'start', fill: ACCENT, fontWeight: 600 }),
      Plot.text(['grey: output o(q) for every query at this T'], { frameAnchor: 'top-left', dx: 4, dy: 2, fill: '#666', fontSize: 10 }),
    ],
  });
}

/** The weights α(q, kᵢ) as bars, with the uniform 1/6 line. */
export function weightsPlot({ weights }, width) {
  const rows = storeRows(weights);
  return Plot.plot({
    width, height: 280, marginLeft: 44, marginBottom: 40,
    x: { domain: NAMES, label: 'key', padding: 0.25 },
    y: { domain: [0, 1], label: '↑ weight α', grid: true },
    marks: [
      Plot.barY(rows, { x: 'name', y: 'w', fill: '#2a6f97' }),
      Plot.ruleY([1 / KEYS.length], { stroke: '#888', strokeDasharray: '4 3' }),
      Plot.text([1 / KEYS.length], { y: (d) => d, frameAnchor: 'right', text: () => 'uniform 1/6', dy: -8, fill: '#666', fontSize: 10 }),
      Plot.text(rows, { x: 'name', y: 'w', text: (d) => d.w.toFixed(2), dy: -8, fontSize: 11 }),
      Plot.ruleY([0]),
    ],
  });
}
