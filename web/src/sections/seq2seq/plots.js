// A seq2seq section's pictures, each a pure function of what its worker reported: the loss curve,
// held-out BLEU against training time, an alignment heatmap (source tokens across, target
// tokens down), every head of a Transformer, a sentence's source tokens with the unknown ones
// flagged and its translation, and BLEU by source length of the models compared side by side.

import * as Plot from '@observablehq/plot';
import { heatmap } from '../../ui/heatmap.js';
import { EOS, UNK } from '../../../shared/translation/text.js';
import { MODELS } from '../../../shared/translation/trainer.js';

const INK = '#1d2433';
const BLUE = '#2a6f97';
const ORANGE = '#c9733a';
const PURPLE = '#7a5195';

/** A line of text in a card, in place of a plot or under one; `extra`: a class of its own. */
export function plotNote(text, extra = '') {
  const p = document.createElement('p');
  p.className = extra ? `plot-note ${extra}` : 'plot-note';
  p.textContent = text;
  return p;
}

/** Training loss per slice of steps. points: [{ step, loss }]. */
export function lossPlot(points, width) {
  if (points.length === 0) return plotNote('No training yet: the curve starts with “Train from scratch”.');
  return Plot.plot({
    width, height: 220, marginLeft: 44, marginBottom: 36,
    x: { label: 'training step →', domain: [0, Math.max(10, ...points.map((p) => p.step))] },
    y: { label: '↑ loss (cross-entropy, nats per token)', grid: true, zero: true },
    marks: [Plot.line(points, { x: 'step', y: 'loss', stroke: INK, strokeWidth: 1.5 }), Plot.ruleY([0])],
  });
}

const PAST_COLOURS = [PURPLE, '#6b6b6b'];

/**
 * Held-out BLEU over training time: the run on show ({ label, points: [{ seconds, bleu }] }),
 * solid with its measurements as dots, and dashed beside it `past`, the last runs of other
 * models on this page (compute.js, pastRunsBeside), in the same browser on the same machine, so
 * their seconds compare. target: the 0.8 line.
 */
export function bleuPlot(run, past, width, target = 0.8) {
  const series = [{ ...run, colour: BLUE }, ...past.map((p, i) => ({ ...p, colour: PAST_COLOURS[i % PAST_COLOURS.length], dashed: true }))]
    .filter((s) => s.points.length > 1);
  if (series.length === 0) return plotNote('Held-out BLEU is measured about once a second while a run trains.');
  return Plot.plot({
    width, height: 220, marginLeft: 44, marginBottom: 36,
    x: { label: 'training time (s) →', domain: [0, Math.max(10, ...series.flatMap((s) => s.points.map((p) => p.seconds)))] },
    y: { label: '↑ held-out BLEU (k = 2)', domain: [0, 1], grid: true },
    // A legend once another run is drawn: the dashed curve is only told apart by it.
    color: { domain: series.map((s) => s.label), range: series.map((s) => s.colour), legend: series.some((s) => s.dashed) },
    marks: [
      Plot.ruleY([target], { stroke: ORANGE, strokeDasharray: '4 3' }),
      Plot.text([target], { y: (d) => d, frameAnchor: 'left', dx: 4, dy: -7, text: () => `BLEU ${target}`, fill: ORANGE, fontSize: 10, textAnchor: 'start' }),
      ...series.flatMap(({ label, points, dashed }) => [
        Plot.line(points, { x: 'seconds', y: 'bleu', stroke: () => label, strokeWidth: 2, strokeDasharray: dashed ? '6 4' : undefined }),
        dashed ? null : Plot.dot(points, { x: 'seconds', y: 'bleu', fill: () => label, r: 2.5 }),
      ]),
    ],
  });
}

const labelWidth = (tokens) => Math.min(120, 14 + 7 * Math.max(3, ...tokens.map((t) => t.length)));

/**
 * The attention of a translation: rows = output tokens (queries, top to bottom), columns =
 * source tokens (keys). result: Trainer.translateText's entry.
 */
export function alignmentPlot(result, width) {
  const { source, output, attention } = result;
  if (!attention || output.length === 0) {
    return plotNote(attention ? 'The model produced no tokens.' : 'This model has no attention: nothing to show.');
  }
  const srcLabel = (j) => (result.unknown.has(j) ? `${source[j]} (${UNK})` : source[j]);
  // The first column's label, rotated by 45°, reaches left of the plot by ~0.7 of its length.
  const left = Math.max(labelWidth(output), Math.ceil(0.72 * labelWidth([srcLabel(0)])));
  const bottom = labelWidth(source) + 16;
  const cell = Math.max(14, Math.min(34, Math.floor((width - left - 12) / source.length)));
  const plot = heatmap({
    values: attention, rows: output.length, cols: source.length, cell,
    rowLabel: (i) => output[i], colLabel: srcLabel,
    x: { tickRotate: -45, label: 'source tokens (keys) →', labelAnchor: 'right', labelOffset: bottom - 4 },
    y: { label: '↓ output tokens (queries)', labelAnchor: 'top' },
    margins: { left, bottom, top: 22, right: 12 },
    raster: false,
  });
  plot.setAttribute('aria-label', `attention of ${output.length} output tokens over ${source.length} source tokens`);
  return plot;
}

// The two kinds of attention a Transformer's heads card shows: what its rows and columns are.
const HEAD_GROUPS = [
  ['encoder', 'encoder self-attention', 'each source token (row) over the source tokens (columns)'],
  ['cross', 'decoder cross-attention', 'each output token (row) over the source tokens (columns)'],
];
const HEAD_GAP = 12; // px between heatmaps, as .head-grid's gap in style.css
const HEAD_MARGIN = 4;
const CAPTION_PX = 100; // "block 1 · head 1" at 12 px, with room to spare

/**
 * One head's heatmap, `queries` (rows) over `source` (columns), under its caption `label`. The
 * cells are too small for tick labels, so pointing at one (or tapping it) names its two tokens.
 */
function headFigure(values, { label, name, queries, source, cell }) {
  const figure = document.createElement('figure');
  const caption = document.createElement('figcaption');
  caption.textContent = label;
  const cells = Array.from(values, (v, k) => ({ i: Math.floor(k / source.length), j: k % source.length, v }));
  const plot = heatmap({
    values, rows: queries.length, cols: source.length, cell, rowLabel: (i) => queries[i], colLabel: (j) => source[j],
    x: { axis: null }, y: { axis: null }, raster: false,
    margins: { left: HEAD_MARGIN, bottom: HEAD_MARGIN, top: HEAD_MARGIN, right: HEAD_MARGIN },
    marks: [Plot.tip(cells, Plot.pointer({ x: 'j', y: 'i', title: (d) => `${queries[d.i]} → ${source[d.j]}: ${d.v.toFixed(2)}` }))],
  });
  plot.setAttribute('aria-label', `${name}, ${label}: ${queries.length} tokens over ${source.length} source tokens`);
  figure.append(caption, plot);
  return figure;
}

/**
 * Every head of a Transformer on one sentence, each heatmap labelled "block b · head h" (1-based):
 * the encoder's self-attention and the decoder's cross-attention, a group each, a row per block
 * (where the heads fit on it with cells of 10 px, else two a row: a phone). result:
 * Trainer.translateText's entry with { heads: true }.
 */
export function headsPlot(result, width) {
  if (!result.heads) return plotNote('This model has no attention heads.');
  const { source, output } = result;
  const perBlock = result.heads.encoder[0].length;
  // The width each heatmap gets with `perRow` of them a row.
  const slot = (perRow) => (width - (perRow - 1) * HEAD_GAP) / perRow;
  const perRow = slot(perBlock) >= Math.max(CAPTION_PX, 2 * HEAD_MARGIN + 10 * source.length) ? perBlock : 2;
  const cell = Math.max(4, Math.min(20, Math.floor((slot(perRow) - 2 * HEAD_MARGIN) / source.length)));
  const box = document.createElement('div');
  box.className = 'head-groups';
  box.append(...HEAD_GROUPS.map(([key, name, rows]) => {
    const group = document.createElement('section');
    group.className = 'head-group';
    const heading = document.createElement('h4');
    heading.textContent = name;
    const queries = key === 'encoder' ? source : output;
    const grids = result.heads[key].map((block, b) => {
      const grid = document.createElement('div');
      grid.className = 'head-grid';
      grid.append(...block.map((values, h) => headFigure(values, { label: `block ${b + 1} · head ${h + 1}`, name, queries, source, cell })));
      return grid;
    });
    group.append(heading, plotNote(rows), ...grids);
    return group;
  }));
  return box;
}

/** The source tokens as chips; words the vocabulary lacks are marked, not dropped. */
export function sourceChips(result) {
  const box = document.createElement('div');
  box.className = 'tokens';
  box.setAttribute('aria-label', 'source tokens');
  box.append(...result.source.map((token, j) => {
    const chip = document.createElement('span');
    chip.textContent = token;
    if (result.unknown.has(j)) {
      chip.className = 'unknown';
      chip.title = `“${token}” is not in the training vocabulary: the model reads it as ${UNK}`;
      const tag = document.createElement('small');
      tag.textContent = UNK;
      chip.append(tag);
    } else if (token === EOS) {
      chip.className = 'special';
    }
    return chip;
  }));
  return box;
}

/** A translation: its source chips, a note on unknown words, and the output line. */
export function translationLines(result) {
  const { unknown } = result;
  const note = plotNote(unknown.size
    ? `${unknown.size} word${unknown.size > 1 ? 's' : ''} outside the vocabulary (marked): the model reads ${unknown.size > 1 ? 'them' : 'it'} as <unk>.`
    : 'Every word is in the vocabulary.');
  const out = document.createElement('p');
  out.className = 'readout translation-output';
  out.textContent = `→ ${result.output.filter((w) => w !== EOS).join(' ') || '(nothing)'}`;
  return [sourceChips(result), note, out];
}

// How each model of the comparison is drawn: colour, dash and symbol, told apart in greyscale too.
const COMPARE_STYLES = {
  bahdanau: [BLUE, null, 'circle'],
  transformer: [PURPLE, '2 3', 'triangle'],
  plain: [ORANGE, '6 4', 'square'],
};

/**
 * Held-out BLEU by source length, a line per model (Bahdanau et al.'s figure), named in a legend
 * above the plot (labels at the lines' ends would collide on a phone where the lines meet).
 * results: { kind: { byLength: [{ from, count, bleu }] } }, the worker's 'compare' report's.
 */
export function lengthPlot(results, width) {
  const models = Object.entries(results).map(([kind, r]) => {
    const [colour, dash, symbol] = COMPARE_STYLES[kind];
    const label = MODELS[kind].shortLabel;
    return { label, colour, dash, symbol, rows: r.byLength.map((b) => ({ ...b, model: label })) };
  });
  const rows = models.flatMap((m) => m.rows);
  const domain = models.map((m) => m.label);
  return Plot.plot({
    width, height: 260, marginLeft: 44, marginRight: 16, marginBottom: 38,
    x: { label: 'source sentence length (words, incl. punctuation) →', ticks: [...new Set(rows.map((r) => r.from))], tickFormat: 'd' },
    y: { label: '↑ held-out BLEU', domain: [0, 1], grid: true },
    color: { domain, range: models.map((m) => m.colour) },
    symbol: { domain, range: models.map((m) => m.symbol), legend: true },
    marks: [
      ...models.map(({ rows: points, dash }) => Plot.line(points, { x: 'from', y: 'bleu', stroke: 'model', strokeWidth: 2, strokeDasharray: dash })),
      Plot.dot(rows, { x: 'from', y: 'bleu', fill: 'model', symbol: 'model', r: 4, stroke: 'white' }),
      Plot.tip(rows, Plot.pointer({ x: 'from', y: 'bleu', title: (r) => `${r.model}\nlength ${r.from}: BLEU ${r.bleu.toFixed(3)} (${r.count} sentences)` })),
    ],
  });
}
