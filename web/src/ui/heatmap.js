// A heatmap of a row-major matrix (attention weights: queries × keys) built on Plot.cell, or on
// Plot.raster for large matrices. Rows and columns are positions (so repeated tokens stay
// distinct); labels come from rowLabel/colLabel. In cell mode NaN cells (a fully masked row
// under fill = -inf) are drawn grey and say so.

import * as Plot from '@observablehq/plot';

const range = (n) => Array.from({ length: n }, (_, i) => i);
// Above this many cells the matrix is drawn as one raster image (Plot.raster) instead of one
// SVG rect per cell: the 50 × 40 weights of section 2 draw ~10× faster that way.
const RASTER_CELLS = 1200;

/**
 * values: Float32Array or number[] of rows*cols. Options:
 *   rowLabel(i), colLabel(j): tick text; rowOrder, colOrder: display order of indices;
 *   x, y: axis options ({ label }); color: Plot color options (default viridis on [0, 1]);
 *   cellText(v, i, j): text drawn in each cell (or null); highlightRow: outline one row;
 *   masked(i, j): true draws the cell as masked (hatched grey) whatever its value;
 *   width, height, cell: size (a given cell size wins over width/height); marks: extra marks;
 *   raster: draw one image instead of one rect per cell (default: above RASTER_CELLS cells).
 */
export function heatmap({
  values, rows, cols, rowLabel = String, colLabel = String, rowOrder = range(rows),
  colOrder = range(cols), x = {}, y = {}, color = {}, cellText = null, highlightRow = null,
  masked = null, width, height, cell, title, marks = [], margins = {}, legend = false,
  raster = rows * cols > RASTER_CELLS,
}) {
  const colorOptions = { type: 'linear', scheme: 'viridis', domain: [0, 1], ...color };
  const [lo, hi] = colorOptions.domain;
  const mid = (lo + hi) / 2;
  // Sequential schemes that start light (blues, greys, …) need dark text at the low end;
  // viridis and friends start dark.
  const lightLow = /^(blues|greens|greys|oranges|purples|reds|yl|bu|gn|pu|or|rd)/i.test(colorOptions.scheme ?? '');
  const dark = (v) => (v < mid) !== lightLow;
  const marginLeft = margins.left ?? 44;
  const marginBottom = margins.bottom ?? 36;
  const marginTop = margins.top ?? (title ? 24 : 8);
  const marginRight = margins.right ?? 8;
  const plotWidth = cell ? marginLeft + marginRight + cols * cell : width;
  const plotHeight = cell ? marginTop + marginBottom + rows * cell : height;
  // Small cells get no gaps between them, which would otherwise read as a mesh.
  const dense = (plotHeight - marginTop - marginBottom) / rows < 8;
  if (raster && !cellText && !masked) {
    return rasterHeatmap({
      values, cols, rowOrder, colOrder, rowLabel, colLabel, x, y, colorOptions, legend, title,
      highlightRow, marks, width: plotWidth, height: plotHeight, marginLeft, marginBottom, marginTop, marginRight,
    });
  }
  const data = [];
  const nan = [];
  const hidden = [];
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = values[i * cols + j];
      const datum = { i, j, v };
      if (masked?.(i, j)) hidden.push(datum);
      else if (Number.isNaN(v)) nan.push(datum);
      else data.push(datum);
    }
  }
  const textMarks = cellText
    ? [
        Plot.text(data, {
          x: 'j', y: 'i', text: (d) => cellText(d.v, d.i, d.j),
          fill: (d) => (dark(d.v) ? 'white' : 'black'), fontSize: 10,
        }),
      ]
    : [];
  return Plot.plot({
    width: plotWidth,
    height: plotHeight,
    marginLeft, marginBottom, marginTop, marginRight,
    title,
    padding: 0,
    x: { domain: colOrder, tickFormat: colLabel, tickSize: 0, label: null, ...x },
    y: { domain: rowOrder, tickFormat: rowLabel, tickSize: 0, label: null, ...y },
    color: { ...colorOptions, legend },
    style: { fontSize: '11px', overflow: 'visible' },
    marks: [
      Plot.cell(data, { x: 'j', y: 'i', fill: 'v', inset: dense ? 0 : 0.25, shapeRendering: dense ? 'crispEdges' : undefined }),
      Plot.cell(nan, { x: 'j', y: 'i', fill: '#d9d9d9', inset: 0.25 }),
      Plot.text(nan, { x: 'j', y: 'i', text: () => 'NaN', fontSize: 8, fill: '#444' }),
      Plot.cell(hidden, { x: 'j', y: 'i', fill: '#f1f1f1', stroke: '#cfcfcf', inset: 0.75 }),
      Plot.text(hidden, { x: 'j', y: 'i', text: () => '×', fill: '#999', fontSize: 11 }),
      ...textMarks,
      highlightRow == null
        ? null
        : Plot.cell(colOrder.map((j) => ({ i: highlightRow, j })), {
            x: 'j', y: 'i', stroke: '#e4572e', strokeWidth: 1.5, fill: 'none',
          }),
      ...marks,
    ],
  });
}

// The same picture from Plot.raster: linear x and y over [0, cols] and [0, rows], one pixel per
// cell (pixelated), ticks at the cell centres labelled as the band axes would be.
function rasterHeatmap({
  values, cols, rowOrder, colOrder, rowLabel, colLabel, x, y, colorOptions, legend, title,
  highlightRow, marks, width, height, marginLeft, marginBottom, marginTop, marginRight,
}) {
  const R = rowOrder.length;
  const C = colOrder.length;
  const grid = new Float64Array(R * C);
  rowOrder.forEach((i, r) => colOrder.forEach((j, c) => {
    grid[r * C + c] = values[i * cols + j];
  }));
  const centres = (n) => Array.from({ length: n }, (_, k) => k + 0.5);
  const r = highlightRow == null ? -1 : rowOrder.indexOf(highlightRow);
  const plot = Plot.plot({
    width, height, marginLeft, marginBottom, marginTop, marginRight, title,
    x: { domain: [0, C], ticks: centres(C), tickFormat: (t) => colLabel(colOrder[Math.floor(t)]), tickSize: 0, label: null, ...x },
    y: { domain: [0, R], reverse: true, ticks: centres(R), tickFormat: (t) => rowLabel(rowOrder[Math.floor(t)]), tickSize: 0, label: null, ...y },
    color: { ...colorOptions, legend },
    style: { fontSize: '11px', overflow: 'visible' },
    marks: [
      Plot.raster(grid, { width: C, height: R, x1: 0, x2: C, y1: 0, y2: R, imageRendering: 'pixelated' }),
      r < 0 ? null : Plot.rect([r], { x1: 0, x2: C, y1: (d) => d, y2: (d) => d + 1, stroke: '#e4572e', strokeWidth: 1.5, fill: 'none' }),
      ...marks,
    ],
  });
  plot.dataset.rowOrder = rowOrder.join(',');
  return plot;
}

/**
 * Which row (index into rowOrder) a pointer event falls on, for a plot made by heatmap():
 * reads the band scale Plot exposes. Returns null outside the cells.
 */
export function rowAt(plot, event) {
  const svg = plot.tagName === 'svg' ? plot : plot.querySelector('svg');
  const scale = plot.scale('y');
  if (!svg || !scale) return null;
  const box = svg.getBoundingClientRect();
  const zoom = box.height / svg.height.baseVal.value;
  const py = (event.clientY - box.top) / zoom;
  const xs = plot.scale('x');
  const px = (event.clientX - box.left) / zoom;
  const [x0, x1] = xs.range;
  if (px < Math.min(x0, x1) || px > Math.max(x0, x1)) return null;
  if (!scale.bandwidth) {
    // A raster heatmap: y is linear over [0, rows]; its ticks list the cell centres.
    const r = Math.floor(scale.invert(py));
    return r >= 0 && r < Math.max(...scale.domain) ? plot.dataset.rowOrder.split(',').map(Number)[r] : null;
  }
  for (const i of scale.domain) {
    const top = scale.apply(i);
    if (py >= top && py < top + scale.bandwidth) return i;
  }
  return null;
}
