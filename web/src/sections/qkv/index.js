// 1. Queries, keys and values: attention as a soft lookup in a key-value store. A query slides
// over six keys; a temperature walks the weights from one-hot (a database lookup) through
// convex combinations to uniform (average pooling).

import { button, controlBar, slider } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { regime, softLookup } from './compute.js';
import { TEXT } from './explanation.js';
import { storePlot, weightsPlot } from './plots.js';

const PRESETS = [
  ['one-hot', 0.01, 'T → 0: all weight on the nearest key, a database lookup'],
  ['convex', 1, 'T = 1: nonnegative weights that sum to 1'],
  ['uniform', 1000, 'T → ∞: every weight 1/6, average pooling'],
];

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

  const compute = () => softLookup(attn, query.value, temperature.value);

  function draw(result) {
    summary.textContent = `output o = Σ αᵢ vᵢ = ${result.output.toFixed(3)} — ${regime(result.weights)}.`;
    store.body.replaceChildren(storePlot(result, widthOf(store.body)));
    weightsCard.body.replaceChildren(weightsPlot(result, widthOf(weightsCard.body)));
  }

  return { render: () => section.meter.run(compute, draw) };
}
