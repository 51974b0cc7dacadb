// Section 4's pictures, each a pure function of compute.js's results (with the heads named by
// namedHeads) and a width: the token chips, the shapes through the layer, the heads as heatmaps,
// one head as lines, and a cross-attention heatmap.

import * as Plot from '@observablehq/plot';
import { heatmap } from '../../ui/heatmap.js';

const ACCENT = '#d6452b';
const labelMargin = (tokens) => Math.min(110, 12 + 6.6 * Math.max(...tokens.map((t) => t.length)));

/** The tokens as chips, each with its index. */
export const tokenChips = (tokens) => tokens.map((t, i) => {
  const chip = document.createElement('span');
  chip.textContent = t;
  const index = document.createElement('small');
  index.textContent = String(i);
  chip.append(index);
  return chip;
});

/** The tensor shapes from tokens to output, as boxes joined by arrows. */
export function shapeStages({ d, h, tokens, weightShape, outputShape }) {
  const n = tokens.length;
  const dh = d / h;
  const stages = [
    ['tokens', `n = ${n}`],
    ['X = s(√d·E + P)', `[1, ${n}, ${d}]`],
    ['Q, K, V = X Wᵀ', `3 × [1, ${n}, ${d}]`],
    [`split into ${h} heads`, `[1, ${h}, ${n}, ${dh}]`],
    ['softmax(QKᵀ/√' + dh + ')', `[${weightShape.join(', ')}]`],
    ['weights · V', `[1, ${h}, ${n}, ${dh}]`],
    ['concat', `[1, ${n}, ${d}]`],
    ['· W_Oᵀ → output', `[${outputShape.join(', ')}]`],
  ];
  return stages.flatMap(([name, shape], i) => {
    const box = document.createElement('div');
    box.className = 'stage';
    const b = document.createElement('b');
    b.textContent = name;
    box.append(b, shape);
    if (i === 0) return [box];
    const arrow = document.createElement('span');
    arrow.className = 'arrow';
    arrow.textContent = '→';
    arrow.setAttribute('aria-hidden', 'true');
    return [arrow, box];
  });
}

/** The colour legend every head shares. */
export const weightLegend = () => Plot.legend({ color: { scheme: 'viridis', domain: [0, 1], label: 'attention weight' }, width: 260 });

/** One figure per head: its heatmap (queries × keys) and a caption naming it; as many per row as fit. */
export function headFigures({ tokens, heads }, width) {
  const n = tokens.length;
  const margin = labelMargin(tokens);
  const perRow = Math.max(1, Math.min(4, Math.floor(width / (margin + 16 + n * 11))));
  const cell = Math.max(9, Math.min(18, Math.floor((width / perRow - 18 - margin - 8) / n)));
  // Many heads of a long sentence: images rather than thousands of SVG rects.
  const raster = heads.length * n * n > 3000;
  return heads.map((hd) => {
    const figure = document.createElement('figure');
    figure.dataset.head = hd.id;
    const caption = document.createElement('figcaption');
    const tag = document.createElement('span');
    tag.className = 'head-tag';
    tag.textContent = hd.name;
    caption.append(tag, ` — ${hd.info}`);
    caption.style.maxWidth = `${margin + 8 + n * cell}px`;
    figure.append(heatmap({
      values: hd.weights, rows: n, cols: n, cell, raster,
      rowLabel: (i) => tokens[i], colLabel: (j) => tokens[j],
      x: { tickRotate: -90 }, margins: { left: margin, bottom: margin, top: 6, right: 8 },
    }), caption);
    return figure;
  });
}

/** One head as lines from query tokens (left) to key tokens (right); `only` ≥ 0 keeps one query. */
export function linesPlot({ tokens }, head, only, width) {
  const n = tokens.length;
  const links = [];
  for (let i = 0; i < n; i++) {
    if (only >= 0 && i !== only) continue;
    for (let j = 0; j < n; j++) {
      const w = head.weights[i * n + j];
      if (w > 0.004) links.push({ i, j, w });
    }
  }
  const margin = labelMargin(tokens) + 8;
  const rows = tokens.map((t, i) => ({ t, i }));
  return Plot.plot({
    width: Math.min(width, 640), height: 30 + n * 24,
    marginLeft: margin, marginRight: margin, marginTop: 22, marginBottom: 8,
    x: { domain: [0, 1], axis: null },
    y: { domain: rows.map((d) => d.i), type: 'point', axis: null },
    opacity: { domain: [0, 1], range: [0, 1] },
    marks: [
      Plot.link(links, {
        x1: 0, x2: 1, y1: 'i', y2: 'j', stroke: '#2a6f97',
        strokeOpacity: 'w', strokeWidth: (d) => 0.8 + 3.5 * d.w,
      }),
      Plot.text(rows, {
        x: 0, y: 'i', text: 't', textAnchor: 'end', dx: -8, fontSize: 12,
        fill: (d) => (only === d.i ? ACCENT : '#1d2433'), fontWeight: (d) => (only === d.i ? 700 : 400),
      }),
      Plot.text(rows, { x: 1, y: 'i', text: 't', textAnchor: 'start', dx: 8, fontSize: 12 }),
      Plot.text(['queries'], { x: 0, frameAnchor: 'top', dy: -16, fill: '#666', fontSize: 11 }),
      Plot.text(['keys'], { x: 1, frameAnchor: 'top', dy: -16, fill: '#666', fontSize: 11 }),
      Plot.dot(rows, { x: 0, y: 'i', r: 2.5, fill: '#1d2433' }),
      Plot.dot(rows, { x: 1, y: 'i', r: 2.5, fill: '#1d2433' }),
    ],
  });
}

/** Cross-attention weights [nb, na]: B's tokens down (queries), A's across (keys). */
export function crossHeatmap({ a, b }, weights, width) {
  const margin = labelMargin([...a, ...b]);
  const cell = Math.max(9, Math.min(20, Math.floor((width - margin - 12) / a.length)));
  return heatmap({
    values: weights, rows: b.length, cols: a.length, cell,
    rowLabel: (i) => b[i], colLabel: (j) => a[j],
    x: { tickRotate: -90, label: 'keys: sentence A', labelAnchor: 'right' },
    y: { label: 'queries: B', labelAnchor: 'top' },
    margins: { left: margin, bottom: margin + 14, top: 20, right: 8 },
  });
}
