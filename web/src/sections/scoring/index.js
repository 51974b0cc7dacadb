// 3. Scoring functions: the five scores side by side on a 2-D query and six keys (and the
// Gaussian-kernel identity of the negative squared distance), the 1/√d argument live, and d2l's
// masked softmax with adjustable valid lengths.

import * as Plot from '@observablehq/plot';
import { checkbox, controlBar, select, slider } from '../../ui/controls.js';
import { heatmap } from '../../ui/heatmap.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import {
  HIDDEN, KEYS, MASK_BATCH, MASK_KEYS, MASK_QUERIES, MASK_SCORES, SAMPLES, maskedExample, mean, planeScores,
  rowMaxMean,
  sqrtDExperiment,
} from './compute.js';

const FUNCTIONS = [
  ['dot', 'dot  qᵀk'],
  ['scaled-dot', 'scaled dot  qᵀk/√d'],
  ['neg-sq-dist', 'neg. sq. distance  −½‖q−k‖²'],
  ['additive', 'additive  w_vᵀ tanh(W_q q + W_k k)'],
  ['general', 'general  qᵀWk'],
];
const SHORT = { dot: 'dot', 'scaled-dot': 'scaled dot', 'neg-sq-dist': '−½‖q−k‖²', additive: 'additive', general: 'general' };
const small = (x) => (x < 1e-3 ? x.toExponential(1) : x.toFixed(3));
const KEY_NAMES = KEYS.map((_, i) => `k${'₁₂₃₄₅₆'[i]}`);
const ACCENT = '#d6452b';

const SCORE_TEXT = `
<p>A scoring function $a(q, k)$ rates how well a key matches a query; a softmax turns the scores
into weights. The common ones:</p>
<ul class="formula-list">
<li>dot: $\\;q^\\top k$</li>
<li>scaled dot: $\\;q^\\top k / \\sqrt d$</li>
<li>negative squared distance: $\\;-\\tfrac12 \\lVert q - k \\rVert^2$</li>
<li>additive (Bahdanau): $\\;w_v^\\top \\tanh(W_q q + W_k k)$</li>
<li>general (Luong): $\\;q^\\top W k$</li>
</ul>
<p>The negative squared distance expands to
$-\\tfrac12 \\lVert q - k_i \\rVert^2 = q^\\top k_i - \\tfrac12 \\lVert k_i \\rVert^2 - \\tfrac12 \\lVert q \\rVert^2$.
The last term is the same for every key, and a softmax ignores anything added to all of its
inputs, so it cancels; when all keys have the same length the middle term cancels too, and
what remains is the dot product (tick <em>keys of equal length</em> and compare the bars).
And $\\operatorname{softmax}_i(-\\tfrac12 \\lVert q - k_i \\rVert^2)$ is exactly the Gaussian kernel's
weights of section 2 with $\\sigma = 1$: the readout below compares the two, both computed by the
package. Here $d = 2$; the additive score has a hidden layer of ${HIDDEN} with seeded weights,
and the general score's $W$ rotates the key by $\\varphi$.</p>`;

const SQRT_D_TEXT = `
<h3>Why divide by $\\sqrt d$</h3>
<p>If $q$ and $k$ have independent entries with mean 0 and variance 1, then
$q^\\top k = \\sum_{j=1}^{d} q_j k_j$ has mean 0 and variance $d$: its spread grows like
$\\sqrt d$. Large scores saturate the softmax into a near one-hot whose gradients vanish.
Dividing by $\\sqrt d$ keeps the variance at 1 whatever the width. Below: ${SAMPLES} random
queries against ${SAMPLES} random keys (${SAMPLES * SAMPLES} scores) from the package's
<code>score</code> with <code>'dot'</code> and <code>'scaled-dot'</code>, then its softmax.</p>`;

const MASK_TEXT = `
<h3>Masked softmax</h3>
<p>Sequences in a batch are padded to one length; a valid length $l_b$ says how many keys of
batch row $b$ are real. The scores of the padding keys ($j > l_b$) are replaced by a large
negative number ($-10^6$ in d2l) before the softmax, so their weights are 0 and the pooled
output $\\sum_{j=1}^{n} \\alpha_j v_j$ becomes $\\sum_{j=1}^{l_b} \\alpha_j v_j$. With $l_b = 0$ every
key is masked: a fill of $-10^6$ gives a uniform row (d2l), $-\\infty$ gives NaN (PyTorch).
d2l's example: scores of shape $2 \\times 2 \\times 10$ (batch × queries × keys), uniform in
$[0, 1)$, valid lengths per batch row.</p>`;

const std = (a) => {
  const m = mean(a);
  return Math.sqrt(a.reduce((s, x) => s + (x - m) ** 2, 0) / a.length);
};
const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

export function mountScoring(root, attn) {
  const state = urlState('sc', {
    theta: 35, r: 1.5, phi: 60, eq: false, show: 'scaled-dot', d: 6, len1: 2, len2: 6, fill: '-1e6',
  }, root.id);
  const section = scaffold(root, { number: 3, title: 'Scoring functions', state });
  const { values } = state;
  // Three independent parts; a control recomputes and redraws only its own.
  const parts = {
    scores: [() => computeScores(), (r) => drawScores(r)],
    sqrtD: [() => computeSqrtD(), (r) => drawSqrtD(r)],
    mask: [() => computeMask(), (r) => drawMask(r)],
  };
  const bind = (key, part) => (v) => {
    section.set({ [key]: v });
    section.meter.schedule(...parts[part], part);
  };

  // --- controls --------------------------------------------------------------------------------
  const theta = slider({ name: 'query-angle', label: 'query angle θ', min: -180, max: 180, step: 1, value: values.theta, format: (v) => `${v}°`, onInput: bind('theta', 'scores') });
  const length = slider({ name: 'query-length', label: 'query length ‖q‖', min: 0, max: 3, step: 0.05, value: values.r, format: (v) => v.toFixed(2), onInput: bind('r', 'scores') });
  const phi = slider({ name: 'general-angle', label: 'general: W rotates by φ', min: -180, max: 180, step: 1, value: values.phi, format: (v) => `${v}°`, onInput: bind('phi', 'scores') });
  const equal = checkbox({ name: 'equal-keys', label: 'keys of equal length', checked: values.eq, onChange: bind('eq', 'scores') });
  const shown = select({ name: 'shown-score', label: 'dot size in the plane shows', options: FUNCTIONS, value: values.show, onChange: bind('show', 'scores') });
  const dExp = slider({ name: 'dimension', label: 'dimension d', min: 0, max: 10, step: 1, value: values.d, format: (v) => String(2 ** v), onInput: bind('d', 'sqrtD') });
  const len1 = slider({ name: 'valid-length-1', label: 'valid length, batch 1', min: 0, max: MASK_KEYS, step: 1, value: values.len1, onInput: bind('len1', 'mask') });
  const len2 = slider({ name: 'valid-length-2', label: 'valid length, batch 2', min: 0, max: MASK_KEYS, step: 1, value: values.len2, onInput: bind('len2', 'mask') });
  const fill = select({ name: 'fill', label: 'fill for masked scores', options: [['-1e6', '−10⁶ (d2l)'], ['-inf', '−∞ (PyTorch)']], value: values.fill, onChange: bind('fill', 'mask') });

  const plane = card('Query (arrow) and keys; dot area ∝ weight', { name: 'plane' });
  const bars = card('Scores a(q, kᵢ) (numbers) and their softmax weights (bar height, 0 to 1)', { name: 'score-bars' });
  const identity = document.createElement('p');
  identity.className = 'readout';
  const histRaw = card('qᵀk, unscaled', { name: 'hist-raw' });
  const histScaled = card('qᵀk / √d', { name: 'hist-scaled' });
  const softmaxBars = card('Softmax of one query’s 64 scores', { name: 'softmax-d' });
  const saturation = card('Mean largest weight per query, as d grows', { name: 'saturation' });
  const dReadout = document.createElement('p');
  dReadout.className = 'readout';
  const maskScores = card('Scores x (× = masked by the valid length)', { name: 'mask-scores' });
  const maskWeights = card('maskedSoftmax(x, validLens)', { name: 'mask-weights' });

  section.append(
    prose(SCORE_TEXT),
    controlBar(theta, length, phi, equal, shown),
    identity,
    plotGrid(plane, bars),
    prose(SQRT_D_TEXT),
    controlBar(dExp),
    dReadout,
    plotGrid(histRaw, histScaled, softmaxBars, saturation),
    prose(MASK_TEXT),
    controlBar(len1, len2, fill),
    plotGrid(maskScores, maskWeights),
  );

  // --- computation (compute.js) ------------------------------------------------------------------
  const sqrtD = sqrtDExperiment(attn);
  const computeScores = () => planeScores(attn, { theta: theta.value, r: length.value, phi: phi.value, equalKeys: equal.value });
  const computeSqrtD = () => ({ ...sqrtD.at(2 ** dExp.value), curve: sqrtD.curve() });
  const computeMask = () => maskedExample(attn, [len1.value, len2.value], fill.value);

  // --- drawing --------------------------------------------------------------------------------------

  function drawScores({ qv, keys, perFunction, gaussian }) {
    const byFn = Object.fromEntries(perFunction.map((x) => [x.fn, x]));
    const neg = byFn['neg-sq-dist'].weights;
    const dot = byFn.dot.weights;
    identity.textContent = `softmax(−½‖q − kᵢ‖²) vs the Gaussian kernel's weights (σ = 1): max |Δ| = ${small(maxAbsDiff(neg, gaussian))}. `
      + `softmax(qᵀkᵢ) vs softmax(−½‖q − kᵢ‖²): max |Δ| = ${small(maxAbsDiff(neg, dot))}`
      + (equal.value ? ' — equal key lengths: the ‖kᵢ‖² term cancels.' : ' — the keys differ in length, so ½‖kᵢ‖² does not cancel.');

    const w = byFn[shown.value].weights;
    const keyRows = keys.map(([x, y], i) => ({ x, y, w: w[i], name: KEY_NAMES[i] }));
    const size = Math.min(widthOf(plane.body), 420);
    plane.body.replaceChildren(Plot.plot({
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
    }));

    const rows = perFunction.flatMap(({ fn, scores, weights }) =>
      KEY_NAMES.map((name, i) => ({ fn, name, s: scores[i], w: weights[i] })));
    bars.body.replaceChildren(Plot.plot({
      width: widthOf(bars.body), height: 420, marginLeft: 84, marginRight: 8, marginBottom: 30, marginTop: 8,
      fy: { domain: FUNCTIONS.map(([fn]) => fn), label: null, padding: 0.18 },
      x: { domain: KEY_NAMES, label: null, padding: 0.2 },
      y: { domain: [0, 1], axis: null },
      marks: [
        Plot.frame({ stroke: '#eee' }),
        Plot.barY(rows, { fy: 'fn', x: 'name', y: 'w', fill: (d) => (d.fn === shown.value ? '#2a6f97' : '#8fb3cc') }),
        Plot.text(rows, { fy: 'fn', x: 'name', y: 'w', text: (d) => d.s.toFixed(2), dy: -7, fontSize: 9.5, fill: '#333' }),
        Plot.axisFy({ anchor: 'left', label: null, tickFormat: (fn) => SHORT[fn], fontSize: 11 }),
      ],
    }));
  }

  function drawSqrtD({ d, raw, scaled, rawSoft, scaledSoft, curve }) {
    const rawStd = std(raw);
    const scaledStd = std(scaled);
    const rawMax = rowMaxMean(rawSoft, SAMPLES);
    const scaledMax = rowMaxMean(scaledSoft, SAMPLES);
    dReadout.textContent = `d = ${d}: std of qᵀk = ${rawStd.toFixed(2)} (√d = ${Math.sqrt(d).toFixed(2)}); `
      + `std of qᵀk/√d = ${scaledStd.toFixed(2)}. Mean largest softmax weight: ${rawMax.toFixed(2)} unscaled, ${scaledMax.toFixed(2)} scaled.`;
    const histogram = (container, data, domain, binWidth, color) => {
      const thresholds = [];
      for (let t = domain[0]; t <= domain[1] + 1e-9; t += binWidth) thresholds.push(t);
      container.replaceChildren(Plot.plot({
        width: widthOf(container), height: 200, marginLeft: 44, marginBottom: 36,
        x: { domain, label: 'score →' },
        y: { label: '↑ count', grid: true },
        marks: [
          Plot.rectY(Array.from(data).filter((v) => v >= domain[0] && v <= domain[1]),
            Plot.binX({ y: 'count' }, { x: (v) => v, thresholds, fill: color })),
          Plot.ruleY([0]),
          Plot.text([`std ${std(data).toFixed(2)}`], { frameAnchor: 'top-right', dy: 4, dx: -4, fontSize: 11 }),
        ],
      }));
    };
    histogram(histRaw.body, raw, [-100, 100], 2.5, '#7a5195');
    histogram(histScaled.body, scaled, [-5, 5], 0.25, '#2a6f97');

    const soft = [];
    for (let j = 0; j < SAMPLES; j++) {
      soft.push({ j, w: rawSoft[j], kind: 'softmax(qᵀk)' }, { j, w: scaledSoft[j], kind: 'softmax(qᵀk/√d)' });
    }
    softmaxBars.body.replaceChildren(Plot.plot({
      width: widthOf(softmaxBars.body), height: 220, marginLeft: 44, marginBottom: 36, marginRight: 8,
      fy: { label: null, domain: ['softmax(qᵀk)', 'softmax(qᵀk/√d)'], axis: null, padding: 0.25 },
      x: { label: 'key →', ticks: [], domain: Array.from({ length: SAMPLES }, (_, j) => j), padding: 0.1 },
      y: { domain: [0, 1], label: '↑ weight', ticks: [0, 0.5, 1] },
      marks: [
        Plot.barY(soft, { fy: 'kind', x: 'j', y: 'w', fill: (d) => (d.kind === 'softmax(qᵀk)' ? '#7a5195' : '#2a6f97') }),
        Plot.ruleY([0]),
        Plot.text(['softmax(qᵀk)', 'softmax(qᵀk/√d)'], { fy: (t) => t, text: (t) => t, frameAnchor: 'top-right', dy: 2, fontSize: 11 }),
      ],
    }));

    const lines = curve.flatMap(({ d: dd, raw: a, scaled: b }) => [
      { d: dd, m: a, kind: 'unscaled' }, { d: dd, m: b, kind: 'scaled by 1/√d' }]);
    saturation.body.replaceChildren(Plot.plot({
      width: widthOf(saturation.body), height: 220, marginLeft: 44, marginBottom: 36,
      x: { type: 'log', base: 2, domain: [1, 1024], label: 'd →', tickFormat: String, ticks: [1, 4, 16, 64, 256, 1024] },
      y: { domain: [0, 1], label: '↑ mean max weight', grid: true },
      color: { domain: ['unscaled', 'scaled by 1/√d'], range: ['#7a5195', '#2a6f97'], legend: true },
      marks: [
        Plot.ruleY([1 / SAMPLES], { stroke: '#aaa', strokeDasharray: '2 3' }),
        Plot.line(lines, { x: 'd', y: 'm', stroke: 'kind', strokeWidth: 2, marker: 'dot', strokeDasharray: (x) => (x.kind === 'unscaled' ? '5 3' : null), z: 'kind' }),
        Plot.ruleX([d], { stroke: ACCENT, strokeDasharray: '4 3' }),
      ],
    }));
  }

  function drawMask({ lens, masked }) {
    const rows = MASK_BATCH * MASK_QUERIES;
    const batchOf = (i) => Math.floor(i / MASK_QUERIES);
    const rowLabel = (i) => `b${batchOf(i) + 1} q${(i % MASK_QUERIES) + 1}`;
    const colLabel = (j) => `k${j + 1}`;
    const common = {
      rows, cols: MASK_KEYS, rowLabel, colLabel, width: widthOf(maskScores.body), height: 190,
      margins: { left: 54, bottom: 30, top: 8 },
      cellText: (v) => v.toFixed(2),
      x: { label: null }, y: { label: null },
    };
    maskScores.body.replaceChildren(heatmap({
      ...common, values: MASK_SCORES.data,
      masked: (i, j) => j >= lens[batchOf(i)],
      color: { scheme: 'blues', domain: [0, 1] },
    }));
    maskWeights.body.replaceChildren(heatmap({
      ...common, width: widthOf(maskWeights.body), values: masked,
      color: { scheme: 'viridis', domain: [0, 1] },
      cellText: (v) => (v === 0 ? '0' : v.toFixed(2)),
    }));
  }

  const all = Object.values(parts);
  return {
    render: () => section.meter.run(
      () => all.map(([compute]) => compute()),
      (results) => all.forEach(([, draw], i) => draw(results[i])),
    ),
  };
}
