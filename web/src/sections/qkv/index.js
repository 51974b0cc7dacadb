// 1. Queries, keys and values: attention as a soft lookup in a key-value store. A query slides
// over six keys; a temperature walks the weights from one-hot (a database lookup) through
// convex combinations to uniform (average pooling).

import * as Plot from '@observablehq/plot';
import { button, controlBar, slider } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { linspace, tensor } from '../../../shared/tensors.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';

const KEYS = [1, 2.5, 4, 5.5, 7, 8.5];
const VALUES = [3, 7, 2, 5, 8, 4];
const NAMES = KEYS.map((_, i) => `k${'₁₂₃₄₅₆'[i]}`);
const CURVE = linspace(0, 10, 201);
const ACCENT = '#d6452b';

const PRESETS = [
  ['one-hot', 0.01, 'T → 0: all weight on the nearest key, a database lookup'],
  ['convex', 1, 'T = 1: nonnegative weights that sum to 1'],
  ['uniform', 1000, 'T → ∞: every weight 1/6, average pooling'],
];

const TEXT = `
<p>A key-value store $D = \\{(k_1, v_1), \\dots, (k_m, v_m)\\}$ answers a query $q$ whose key it
holds with that key's value. Attention answers <em>every</em> query, by pooling all values with
weights that say how well each key matches:</p>
$$\\operatorname{Attention}(q, D) = \\sum_{i=1}^{m} \\alpha(q, k_i)\\, v_i,$$
$$\\alpha(q, k_i) = \\frac{\\exp\\!\\big(a(q, k_i)/T\\big)}{\\sum_j \\exp\\!\\big(a(q, k_j)/T\\big)}$$
<p>with the score $a(q, k) = -\\tfrac12 (q - k)^2$. The softmax makes the weights nonnegative and sum to 1, so the output is a <strong>convex
combination</strong> of the values. The temperature $T$ walks through the special cases: as
$T \\to 0$ one weight is 1 and the rest 0 — a <strong>database lookup</strong> of the nearest key;
as $T \\to \\infty$ all weights equal $1/m$ — <strong>average pooling</strong>. This
$\\alpha$ is the Gaussian kernel with $\\sigma^2 = T$, so the page computes it with the package's
<code>kernelRegression</code>: section 2 is the same soft lookup.</p>`;

export function mountQkv(root, attn) {
  const state = urlState('qkv', { q: 4.6, T: 1 }, root.id);
  const section = scaffold(root, { number: 1, title: 'Queries, keys and values', state });
  const { values } = state;

  const update = () => section.meter.schedule(compute, draw);
  const query = slider({
    name: 'query', label: 'query q', min: 0, max: 10, step: 0.05, value: values.q,
    format: (v) => v.toFixed(2),
    onInput: (q) => {
      section.set({ q });
      update();
    },
  });
  const temperature = slider({
    name: 'temperature', label: 'temperature T', min: 0.01, max: 1000, log: true, step: 0.01,
    value: values.T, format: (v) => String(v),
    onInput: (T) => {
      section.set({ T });
      update();
    },
  });
  const presets = PRESETS.map(([label, T, title]) =>
    button({
      name: `preset-${label}`, label, title,
      onClick: () => {
        temperature.value = T;
        section.set({ T: temperature.value });
        update();
      },
    }));
  const presetGroup = document.createElement('div');
  presetGroup.className = 'control control-buttons';
  presetGroup.setAttribute('role', 'group');
  presetGroup.setAttribute('aria-label', 'temperature presets');
  presetGroup.append(...presets.map((p) => p.element));

  const store = card('The store: keys (x) with their values (y); the query (dashed) and its output ◆', { name: 'store' });
  const weightsCard = card('Attention weights α(q, kᵢ) — they sum to 1', { name: 'weights' });
  const summary = document.createElement('p');
  summary.className = 'readout';
  summary.setAttribute('aria-live', 'polite');
  section.append(prose(TEXT), controlBar(query, temperature, presetGroup), summary, plotGrid(store, weightsCard));

  const keys = tensor(KEYS, [KEYS.length]);
  const vals = tensor(VALUES, [VALUES.length]);
  const curveQueries = tensor(CURVE, [CURVE.length]);

  function compute() {
    const q = query.value;
    const T = temperature.value;
    const bandwidth = Math.sqrt(T);
    const one = attn.kernelRegression({
      keys, values: vals, queries: tensor([q], [1]), kernel: 'gaussian', bandwidth, weights: true,
    });
    const curve = attn.kernelRegression({ keys, values: vals, queries: curveQueries, kernel: 'gaussian', bandwidth });
    return { q, T, output: one.output.data[0], weights: one.weights.data, curve: curve.output.data };
  }

  function draw({ q, output, weights, curve }) {
    const rows = KEYS.map((k, i) => ({ k, v: VALUES[i], w: weights[i], name: NAMES[i] }));
    const best = rows.reduce((a, b) => (b.w > a.w ? b : a));
    const spread = Math.max(...weights) - Math.min(...weights);
    const regime = best.w > 0.99
      ? `one-hot: a database lookup that returns ${best.name}'s value ${best.v}`
      : spread < 0.02
        ? 'uniform: average pooling, the mean of the values'
        : `a convex combination, led by ${best.name} (${(100 * best.w).toFixed(0)}%)`;
    summary.textContent = `output o = Σ αᵢ vᵢ = ${output.toFixed(3)} — ${regime}.`;

    const width = widthOf(store.body);
    store.body.replaceChildren(Plot.plot({
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
    }));
    weightsCard.body.replaceChildren(Plot.plot({
      width: widthOf(weightsCard.body), height: 280, marginLeft: 44, marginBottom: 40,
      x: { domain: NAMES, label: 'key', padding: 0.25 },
      y: { domain: [0, 1], label: '↑ weight α', grid: true },
      marks: [
        Plot.barY(rows, { x: 'name', y: 'w', fill: '#2a6f97' }),
        Plot.ruleY([1 / KEYS.length], { stroke: '#888', strokeDasharray: '4 3' }),
        Plot.text([1 / KEYS.length], { y: (d) => d, frameAnchor: 'right', text: () => 'uniform 1/6', dy: -8, fill: '#666', fontSize: 10 }),
        Plot.text(rows, { x: 'name', y: 'w', text: (d) => d.w.toFixed(2), dy: -8, fontSize: 11 }),
        Plot.ruleY([0]),
      ],
    }));
  }

  return { render: () => section.meter.run(compute, draw) };
}
