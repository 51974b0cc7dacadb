// 3. Scoring functions: the five scores side by side on a 2-D query and six keys (and the
// Gaussian-kernel identity of the negative squared distance), the 1/√d argument live, and d2l's
// masked softmax with adjustable valid lengths.

import { checkbox, controlBar, select, slider } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { MASK_KEYS, maskedExample, planeIdentities, planeScores, sqrtDExperiment, sqrtDSummary } from './compute.js';
import { MASK_TEXT, SCORE_TEXT, SQRT_D_TEXT } from './explanation.js';
import {
  histogramPlot, maskScoresPlot, maskWeightsPlot, planePlot, saturationPlot, scoreBarsPlot, softmaxBarsPlot,
} from './plots.js';

const FUNCTIONS = [
  ['dot', 'dot  qᵀk'],
  ['scaled-dot', 'scaled dot  qᵀk/√d'],
  ['neg-sq-dist', 'neg. sq. distance  −½‖q−k‖²'],
  ['additive', 'additive  w_vᵀ tanh(W_q q + W_k k)'],
  ['general', 'general  qᵀWk'],
];
const FILLS = [['-1e6', '−10⁶ (d2l)'], ['-inf', '−∞ (PyTorch)']];

const readout = () => {
  const p = document.createElement('p');
  p.className = 'readout';
  return p;
};

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

  const theta = slider({ name: 'query-angle', label: 'query angle θ', min: -180, max: 180, step: 1, value: values.theta, format: (v) => `${v}°`, onInput: bind('theta', 'scores') });
  const length = slider({ name: 'query-length', label: 'query length ‖q‖', min: 0, max: 3, step: 0.05, value: values.r, format: (v) => v.toFixed(2), onInput: bind('r', 'scores') });
  const phi = slider({ name: 'general-angle', label: 'general: W rotates by φ', min: -180, max: 180, step: 1, value: values.phi, format: (v) => `${v}°`, onInput: bind('phi', 'scores') });
  const equal = checkbox({ name: 'equal-keys', label: 'keys of equal length', checked: values.eq, onChange: bind('eq', 'scores') });
  const shown = select({ name: 'shown-score', label: 'dot size in the plane shows', options: FUNCTIONS, value: values.show, onChange: bind('show', 'scores') });
  const dExp = slider({ name: 'dimension', label: 'dimension d', min: 0, max: 10, step: 1, value: values.d, format: (v) => String(2 ** v), onInput: bind('d', 'sqrtD') });
  const len1 = slider({ name: 'valid-length-1', label: 'valid length, batch 1', min: 0, max: MASK_KEYS, step: 1, value: values.len1, onInput: bind('len1', 'mask') });
  const len2 = slider({ name: 'valid-length-2', label: 'valid length, batch 2', min: 0, max: MASK_KEYS, step: 1, value: values.len2, onInput: bind('len2', 'mask') });
  const fill = select({ name: 'fill', label: 'fill for masked scores', options: FILLS, value: values.fill, onChange: bind('fill', 'mask') });

  const plane = card('Query (arrow) and keys; dot area ∝ weight', { name: 'plane' });
  const bars = card('Scores a(q, kᵢ) (numbers) and their softmax weights (bar height, 0 to 1)', { name: 'score-bars' });
  const identity = readout();
  const histRaw = card('qᵀk, unscaled', { name: 'hist-raw' });
  const histScaled = card('qᵀk / √d', { name: 'hist-scaled' });
  const softmaxBars = card('Softmax of one query’s 64 scores', { name: 'softmax-d' });
  const saturation = card('Mean largest weight per query, as d grows', { name: 'saturation' });
  const dReadout = readout();
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

  const sqrtD = sqrtDExperiment(attn);
  const computeScores = () => planeScores(attn, { theta: theta.value, r: length.value, phi: phi.value, equalKeys: equal.value });
  const computeSqrtD = () => ({ ...sqrtD.at(2 ** dExp.value), curve: sqrtD.curve() });
  const computeMask = () => maskedExample(attn, [len1.value, len2.value], fill.value);

  function drawScores(r) {
    identity.textContent = planeIdentities(r, equal.value);
    plane.body.replaceChildren(planePlot(r, shown.value, Math.min(widthOf(plane.body), 420)));
    bars.body.replaceChildren(scoreBarsPlot(r, shown.value, widthOf(bars.body)));
  }

  function drawSqrtD(r) {
    dReadout.textContent = sqrtDSummary(r);
    histRaw.body.replaceChildren(histogramPlot(r.raw, { domain: [-100, 100], binWidth: 2.5, color: '#7a5195' }, widthOf(histRaw.body)));
    histScaled.body.replaceChildren(histogramPlot(r.scaled, { domain: [-5, 5], binWidth: 0.25, color: '#2a6f97' }, widthOf(histScaled.body)));
    softmaxBars.body.replaceChildren(softmaxBarsPlot(r, widthOf(softmaxBars.body)));
    saturation.body.replaceChildren(saturationPlot(r, widthOf(saturation.body)));
  }

  function drawMask(r) {
    maskScores.body.replaceChildren(maskScoresPlot(r, widthOf(maskScores.body)));
    maskWeights.body.replaceChildren(maskWeightsPlot(r, widthOf(maskWeights.body)));
  }

  const all = Object.values(parts);
  return {
    render: () => section.meter.run(
      () => all.map(([compute]) => compute()),
      (results) => all.forEach(([, draw], i) => draw(results[i])),
    ),
  };
}
