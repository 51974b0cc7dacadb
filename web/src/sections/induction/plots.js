// Section 7's pictures, each a pure function of the worker's report: the held-out loss on first
// and repeated occurrences with the phase change marked, every head's two scores over training,
// every head's attention on the probe (a click ablates the head), and what removing each head
// alone does.

import * as Plot from '@observablehq/plot';
import { heatmap } from '../../ui/heatmap.js';
import { ALPHABET, headLabel } from './task.js';

const INK = '#1d2433';
const BLUE = '#2a6f97';
const ORANGE = '#c9733a';
const HEAD_COLOURS = ['#2a6f97', '#61a5c2', '#c9733a', '#e6a15c'];

function note(text) {
  const p = document.createElement('p');
  p.className = 'plot-note';
  p.textContent = text;
  return p;
}

// The phase change's rule and label, the label on the side of the rule with more room.
const phaseMarks = (phase, lastStep) => {
  if (!phase) return [];
  const left = phase.step > lastStep / 2;
  return [
    Plot.ruleX([phase.step], { stroke: ORANGE, strokeDasharray: '4 3' }),
    Plot.text([phase], {
      x: 'step', frameAnchor: 'top', dx: left ? -4 : 4, dy: 4, textAnchor: left ? 'end' : 'start', fill: ORANGE,
      text: (p) => `phase change: step ${p.step} (${p.seconds.toFixed(1)} s)`,
    }),
  ];
};

/** Held-out loss on the segments' first occurrences and on their repeats, against the step. */
export function lossPlot(history, phase, width) {
  if (history.length < 2) return note('The curves start with “Train from scratch”.');
  const points = history.flatMap((m) => [
    { step: m.step, loss: m.firstLoss, kind: 'first occurrences' },
    { step: m.step, loss: m.repeatedLoss, kind: 'repeated tokens' },
  ]);
  return Plot.plot({
    width, height: 240, marginLeft: 44, marginBottom: 36,
    x: { label: 'training step →' },
    y: { label: '↑ held-out loss (nats per token)', grid: true, zero: true },
    color: { domain: ['first occurrences', 'repeated tokens'], range: [INK, BLUE], legend: true },
    marks: [
      Plot.ruleY([Math.log(ALPHABET.length)], { stroke: '#999', strokeDasharray: '2 3' }),
      Plot.line(points, { x: 'step', y: 'loss', stroke: 'kind', strokeWidth: 1.5 }),
      ...phaseMarks(phase, history.at(-1).step),
    ],
  });
}

/** Every head's previous-token and prefix-matching score against the step, one panel each. */
export function scoresPlot(history, phase, width) {
  if (history.length < 2) return note('The scores start with “Train from scratch”.');
  const heads = history[0].previousToken[0].length;
  const points = history.flatMap((m) => [['previous token', m.previousToken], ['prefix matching', m.prefixMatching]]
    .flatMap(([score, byLayer]) => byLayer.flat().map((value, k) => ({ step: m.step, value, score, head: headLabel(k, heads) }))));
  return Plot.plot({
    width, height: 240, marginLeft: 44, marginBottom: 36,
    fx: { label: null, domain: ['previous token', 'prefix matching'] },
    x: { label: 'training step →', ticks: 4 },
    y: { label: '↑ score (mean attention weight)', domain: [0, 1], grid: true },
    color: { range: HEAD_COLOURS, legend: true },
    marks: [
      Plot.frame({ stroke: '#ddd' }),
      Plot.line(points, { fx: 'score', x: 'step', y: 'value', stroke: 'head', strokeWidth: 1.5 }),
      ...(phase ? [Plot.ruleX([phase.step], { stroke: ORANGE, strokeDasharray: '4 3' })] : []),
    ],
  });
}

/**
 * Every head's attention on the probe's first row (`probe`, its tokens), queries down and keys
 * across, captioned with its two scores; an ablated head (mask[k] = 0) is marked, and clicking
 * a head calls onToggle(k).
 */
export function headMaps({ maps, probe, scores, mask, width, onToggle }) {
  const heads = maps[0].shape[1];
  const steps = probe.length;
  const grid = document.createElement('div');
  grid.className = 'head-grid induction-heads';
  const perRow = width >= 4 * 150 ? 4 : 2;
  const cell = Math.max(4, Math.min(12, Math.floor((width / perRow - 24) / steps)));
  maps.forEach((map, layer) => {
    for (let h = 0; h < heads; h++) {
      const k = layer * heads + h;
      const values = map.data.subarray(h * steps * steps, (h + 1) * steps * steps);
      const figure = document.createElement('figure');
      figure.className = mask[k] ? 'head' : 'head ablated';
      figure.dataset.head = String(k);
      const caption = document.createElement('figcaption');
      const prev = scores.previousToken[layer][h];
      const prefix = scores.prefixMatching[layer][h];
      const name = document.createElement('span');
      name.textContent = `${headLabel(k, heads)}${mask[k] ? '' : ' (ablated)'}`;
      const figures = document.createElement('span');
      figures.textContent = `prev ${prev.toFixed(2)} · prefix ${prefix.toFixed(2)}`;
      caption.append(name, figures);
      const cells = Array.from(values, (v, n) => ({ i: Math.floor(n / steps), j: n % steps, v }));
      const plot = heatmap({
        values, rows: steps, cols: steps, cell, raster: false,
        x: { axis: null }, y: { axis: null }, margins: { left: 4, right: 4, top: 4, bottom: 4 },
        marks: [Plot.tip(cells, Plot.pointer({
          x: 'j', y: 'i', title: (d) => `${probe[d.i]} (position ${d.i}) → ${probe[d.j]} (position ${d.j}): ${d.v.toFixed(2)}`,
        }))],
      });
      plot.setAttribute('aria-label', `${headLabel(k, heads)}: the probe over itself`);
      const toggle = document.createElement('button');
      toggle.type = 'button';
      toggle.className = 'control-button head-toggle';
      toggle.name = `ablate-${k}`;
      toggle.textContent = mask[k] ? 'ablate' : 'restore';
      toggle.addEventListener('click', () => onToggle(k));
      figure.append(caption, plot, toggle);
      grid.append(figure);
    }
  });
  return grid;
}

/**
 * What removing heads does (ablation: [{ label, repeatedLoss, prefixMatching }]): the held-out
 * loss on repeated tokens, and the best layer-1 head's prefix-matching score, beside the whole
 * model's (`whole`, the last measurement).
 */
export function ablationPlot(ablation, whole, width) {
  if (!ablation || !whole) return note('Nothing to ablate yet.');
  const rows = [{ label: 'none', repeatedLoss: whole.repeatedLoss, prefixMatching: Math.max(...whole.prefixMatching.at(-1)) }, ...ablation];
  const panelWidth = width < 560 ? width : Math.floor(width / 2) - 8;
  const panel = (key, label, colour, domain) => Plot.plot({
    width: panelWidth, height: 190, marginLeft: 100, marginRight: 36, marginBottom: 36,
    x: { label, grid: true, domain },
    y: { label: 'removed head', domain: rows.map((r) => r.label) },
    marks: [
      Plot.barX(rows, { y: 'label', x: key, fill: (r) => (r.label === 'none' ? '#999' : colour) }),
      Plot.text(rows, { y: 'label', x: key, text: (r) => r[key].toFixed(2), dx: 4, textAnchor: 'start', fontSize: 10 }),
      Plot.ruleX([0]),
    ],
  });
  const box = document.createElement('div');
  box.className = 'ablation-panels';
  box.append(
    panel('repeatedLoss', 'loss on repeated tokens →', ORANGE, [0, Math.max(5, ...rows.map((r) => r.repeatedLoss))]),
    panel('prefixMatching', 'layer-1 prefix matching →', BLUE, [0, 1]),
  );
  return box;
}
