// 2. Nadaraya-Watson kernel regression, d2l's example: f(x) = 2 sin x + x, 40 noisy training
// points on [0, 5). Kernel and bandwidth controls; the kernel shapes, the fit with draggable
// points, the queries × keys weight heatmap (hover a row to see its weights on the points),
// the leave-one-out error over σ, and a classification mode (one-hot labels pooled).

import * as Plot from '@observablehq/plot';
import { button, checkbox, controlBar, select, slider } from '../../ui/controls.js';
import { heatmap, rowAt } from '../../ui/heatmap.js';
import { prose } from '../../ui/math.js';
import { card, pointerData, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import {
  CLASSES, FIT_QUERIES, HEAT_QUERIES, LOO_BANDWIDTHS, N, SHAPE_GRID, X_MAX, classOf, computeRegression, f,
  leaveOneOutSearch, makePoints,
} from './compute.js';

const Y_DOMAIN = [-3.5, 7.5];
const KERNELS = [
  ['gaussian', 'Gaussian'],
  ['boxcar', 'boxcar'],
  ['epanechnikov', 'Epanechnikov'],
  ['constant', 'constant'],
];
const CLASS_COLORS = ['#31446b', '#35b779', '#fde725'];
const ACCENT = '#d6452b';

const TEXT = `
<p>Nadaraya-Watson regression predicts at a query $q$ by averaging the training labels with
kernel weights — attention whose keys are the training inputs $x_i$ and whose values are the
labels $y_i$:</p>
$$\\hat f(q) = \\sum_{i=1}^{n} \\alpha(q, x_i)\\, y_i,$$
$$\\alpha(q, x_i) = \\frac{K\\big((q - x_i)/\\sigma\\big)}{\\sum_{j} K\\big((q - x_j)/\\sigma\\big)} .$$
<p>Gaussian $K(u) = e^{-u^2/2}$, boxcar $K(u) = [\\,|u| \\le 1\\,]$, Epanechnikov
$K(u) = \\max(0, 1 - |u|)$, constant $K = 1$ (every query gets the mean). With the Gaussian kernel
the weights are a softmax, $\\alpha(q, x_i) = \\operatorname{softmax}_i\\big(-(q - x_i)^2 / 2\\sigma^2\\big)$.
The data: $y_i = 2\\sin x_i + x_i + \\varepsilon_i$, $\\varepsilon_i \\sim \\mathcal N(0, 1)$, for
40 points drawn uniformly on $[0, 5)$. <strong>Drag a point</strong> and the fit follows;
hover the heatmap (or the fit) to see one query's weights on the points.</p>`;

const LOO_TEXT = `
<p>Choosing $\\sigma$: leave-one-out cross-validation predicts each label from the other
$n - 1$ points, $\\;\\mathrm{LOO}(\\sigma) = \\frac1n \\sum_i \\lVert y_i - \\hat f_{-i}(x_i) \\rVert^2$.
Too small a $\\sigma$ chases the noise (or, for boxcar, leaves points that no other point
reaches: those $\\sigma$ are off the curve); too large flattens $f$ toward the mean.
<strong>Classification</strong>: replace each $y_i$ by the one-hot vector of its class; the same
weights pool them into class probabilities $p(c \\mid q) = \\sum_i \\alpha(q, x_i)\\,[c_i = c]$.</p>`;

const encodeMoved = (moved) =>
  [...moved].map(([i, p]) => `${i}_${p.x.toFixed(3)}_${p.y.toFixed(3)}`).join('*');

function decodeMoved(text) {
  const moved = new Map();
  for (const part of text.split('*')) {
    const [i, x, y] = part.split('_').map(Number);
    if (Number.isInteger(i) && i >= 0 && i < N && Number.isFinite(x) && Number.isFinite(y)) {
      moved.set(i, { x: Math.min(X_MAX, Math.max(0, x)), y: Math.min(Y_DOMAIN[1], Math.max(Y_DOMAIN[0], y)) });
    }
  }
  return moved;
}

export function mountKernelRegression(root, attn) {
  const state = urlState('kr', { kernel: 'gaussian', sigma: 0.5, seed: 1, cls: false, moved: '' }, root.id);
  const section = scaffold(root, { number: 2, title: 'Nadaraya-Watson kernel regression', state });
  const { values } = state;

  let points = [];
  let moved = decodeMoved(values.moved);
  let dataVersion = 0;
  let loo = null; // { key, errors, best }
  let hover = null; // index into HEAT_QUERIES
  let last = null;
  let fitPlot = null;
  let heatPlot = null;
  let dragging = null;

  const resetPoints = () => {
    points = makePoints(values.seed);
    for (const [i, p] of moved) points[i] = { ...p };
    dataVersion += 1;
  };
  resetPoints();

  const update = () => section.meter.schedule(compute, draw);
  const kernel = select({
    name: 'kernel', label: 'kernel', options: KERNELS, value: values.kernel,
    onChange: (k) => {
      section.set({ kernel: k });
      update();
    },
  });
  const sigma = slider({
    name: 'bandwidth', label: 'bandwidth σ', min: 0.02, max: 5, log: true, step: 0.005,
    value: values.sigma, format: (v) => v.toFixed(3),
    onInput: (s) => {
      section.set({ sigma: s });
      update();
    },
  });
  const resample = button({
    name: 'resample', label: 'resample points', title: 'Draw 40 new training points (next seed)',
    onClick: () => {
      moved = new Map();
      section.set({ seed: (values.seed % 999999) + 1, moved: '' });
      resetPoints();
      update();
    },
  });
  const useBest = button({
    name: 'use-best', label: 'use the LOO-best σ', title: 'Set σ to the bandwidth with the smallest leave-one-out error',
    onClick: () => {
      if (!loo || !Number.isFinite(loo.best)) return;
      sigma.value = loo.best;
      section.set({ sigma: sigma.value });
      update();
    },
  });
  const classify = checkbox({
    name: 'classification', label: 'classification (one-hot labels)', checked: values.cls,
    onChange: (cls) => {
      section.set({ cls });
      classCard.figure.hidden = !cls;
      update();
    },
  });
  const seedReadout = document.createElement('span');
  seedReadout.className = 'control seed-readout';

  const shapes = card('Kernel shapes K((q − x)/σ) at this σ (selected kernel bold)', { name: 'kernels' });
  const fit = card('Fit: truth f (dashed), training points, prediction f̂ (red)', { name: 'fit' });
  fit.body.classList.add('draggable');
  const heat = card('Attention weights α(q, xᵢ): 50 queries × 40 keys (hover a row)', { name: 'heatmap' });
  const looCard = card('Leave-one-out error over σ', { name: 'loo' });
  const classCard = card('Class probabilities p(c | q): one-hot labels pooled by the same weights', { name: 'classes', wide: true });
  classCard.figure.hidden = !values.cls;
  const hoverNote = document.createElement('p');
  hoverNote.className = 'plot-note';
  fit.figure.append(hoverNote);

  section.append(
    prose(TEXT),
    controlBar(kernel, sigma, useBest, resample, seedReadout, classify),
    plotGrid(fit, heat, shapes, looCard, classCard),
    prose(LOO_TEXT),
  );

  // --- computation (all through the package) ---------------------------------------------------

  function compute() {
    const k = kernel.value;
    const s = sigma.value;
    const looKey = `${dataVersion}|${k}|${values.cls}`;
    if (loo?.key !== looKey) loo = { key: looKey, ...leaveOneOutSearch(attn, points, k, values.cls) };
    last = { k, s, ...computeRegression(attn, points, k, s, values.cls), loo };
    return last;
  }

  // --- drawing -----------------------------------------------------------------------------------

  function draw(r) {
    seedReadout.textContent = `seed ${values.seed}${moved.size ? `, ${moved.size} moved` : ''}`;
    drawShapes(r);
    drawFit(r);
    drawHeatmap(r);
    drawLoo(r);
    if (values.cls) drawClasses(r);
  }

  function drawShapes({ k, s, shapeCurves }) {
    const rows = shapeCurves.flatMap(({ name, K }) =>
      K.map((v, i) => ({ u: SHAPE_GRID[i], K: v, kernel: name })));
    shapes.body.replaceChildren(Plot.plot({
      width: widthOf(shapes.body), height: 240, marginLeft: 44, marginBottom: 40,
      x: { label: 'q − x →', domain: [-2.5, 2.5] },
      y: { label: '↑ K', domain: [0, 1.12], grid: true },
      color: { domain: KERNELS.map(([n]) => n), range: ['#2a6f97', '#7a5195', '#ef5675', '#6b6b6b'], legend: true },
      marks: [
        Plot.line(rows, {
          x: 'u', y: 'K', stroke: 'kernel',
          strokeWidth: (d) => (d.kernel === k ? 3 : 1.2),
          strokeDasharray: (d) => ({ gaussian: null, boxcar: '6 3', epanechnikov: '2 2', constant: '1 4' })[d.kernel],
          z: 'kernel',
        }),
        Plot.ruleX([-s, s], { stroke: '#aaa', strokeDasharray: '2 3' }),
        Plot.text([s], { x: (d) => d, frameAnchor: 'top', text: () => '+σ', dy: 2, dx: 10, fill: '#777', fontSize: 10 }),
      ],
    }));
  }

  function drawFit({ fit: fitted, weights, heatOutput }) {
    const grid = Array.from(FIT_QUERIES, (x, i) => ({ x, y: fitted[i], truth: f(x) }));
    const pts = points.map((p, i) => ({ ...p, i, w: hover == null ? null : weights[hover * N + i], c: classOf(p.y) }));
    const q = hover == null ? null : { x: HEAT_QUERIES[hover], y: heatOutput[hover] };
    const maxW = hover == null ? 1 : Math.max(...pts.map((p) => p.w));
    const cls = values.cls;
    fitPlot = Plot.plot({
      width: widthOf(fit.body), height: 300, marginLeft: 44, marginBottom: 40,
      x: { domain: [0, X_MAX], label: 'x →' },
      y: { domain: Y_DOMAIN, label: '↑ y', grid: true },
      r: { domain: [0, maxW], range: [1.5, 10] },
      color: { domain: [0, 1, 2], range: CLASS_COLORS },
      symbol: { domain: [0, 1, 2], range: ['circle', 'square', 'triangle'] },
      marks: [
        cls ? Plot.ruleY([1.5, 3], { stroke: '#bbb', strokeDasharray: '2 3' }) : null,
        Plot.line(grid, { x: 'x', y: 'truth', stroke: '#555', strokeDasharray: '5 4', strokeWidth: 1.5 }),
        Plot.dot(pts, {
          x: 'x', y: 'y',
          r: hover == null ? 4 : 'w',
          fill: cls ? 'c' : '#2a6f97', symbol: cls ? 'c' : 'circle',
          stroke: cls ? '#333' : 'white', strokeWidth: cls ? 0.6 : 1,
          fillOpacity: hover == null ? 0.85 : 0.95,
        }),
        Plot.line(grid, { x: 'x', y: 'y', stroke: ACCENT, strokeWidth: 2.5 }),
        q ? Plot.ruleX([q.x], { stroke: ACCENT, strokeOpacity: 0.6 }) : null,
        q && Number.isFinite(q.y) ? Plot.dot([q], { x: 'x', y: 'y', symbol: 'diamond', r: 6, fill: ACCENT, stroke: 'white' }) : null,
      ],
    });
    fit.body.replaceChildren(fitPlot);
    hoverNote.textContent = q
      ? `query q = ${q.x.toFixed(1)}: dot size ∝ its weight on each point; f̂(q) = ${Number.isFinite(q.y) ? q.y.toFixed(3) : 'NaN (no key within σ)'}`
      : 'Drag a point to move it; hover to inspect a query.';
  }

  function drawHeatmap({ weights }) {
    const order = points.map((p, i) => i).sort((a, b) => points[a].x - points[b].x);
    const rank = new Map(order.map((i, r) => [i, r]));
    let maxW = 0;
    for (const w of weights) if (w > maxW) maxW = w;
    heatPlot = heatmap({
      values: weights, rows: HEAT_QUERIES.length, cols: N,
      rowLabel: (i) => (i % 10 === 0 ? HEAT_QUERIES[i].toFixed(0) : ''),
      colLabel: (j) => (rank.get(j) % 10 === 9 || rank.get(j) === 0 ? String(rank.get(j) + 1) : ''),
      colOrder: order,
      x: { label: 'keys xᵢ, by rank in x →', labelAnchor: 'right' },
      y: { label: '↑ query q', labelAnchor: 'top' },
      color: { scheme: 'viridis', domain: [0, Math.max(maxW, 1e-6)], label: 'weight' },
      width: widthOf(heat.body), height: 300, margins: { left: 44, bottom: 40, top: 22 },
      highlightRow: hover,
    });
    heat.body.replaceChildren(heatPlot);
  }

  function drawLoo({ s, loo: { errors, best } }) {
    const rows = LOO_BANDWIDTHS.map((b, i) => ({ b, e: errors[i] })).filter((d) => Number.isFinite(d.e));
    const bestRow = rows.find((d) => d.b === best) ?? rows.reduce((a, d) => (d.e < a.e ? d : a), rows[0]);
    useBest.element.textContent = Number.isFinite(best) ? `use the LOO-best σ = ${best.toFixed(3)}` : 'no finite LOO error';
    looCard.body.replaceChildren(Plot.plot({
      width: widthOf(looCard.body), height: 240, marginLeft: 50, marginBottom: 40,
      x: { type: 'log', domain: [0.02, 5], label: 'bandwidth σ →' },
      y: { label: values.cls ? '↑ LOO error (Brier, one-hot)' : '↑ LOO mean squared error', grid: true, nice: true, zero: true },
      marks: [
        // An explicit text channel: a log axis would otherwise drop the 0.05, 0.5 and 5 labels.
        Plot.axisX([0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5], { text: String, label: 'bandwidth σ →' }),
        Plot.line(rows, { x: 'b', y: 'e', stroke: '#2a6f97', strokeWidth: 2 }),
        Plot.ruleX([s], { stroke: ACCENT, strokeDasharray: '4 3' }),
        bestRow ? Plot.dot([bestRow], { x: 'b', y: 'e', r: 5, fill: '#2a6f97', stroke: 'white' }) : null,
        bestRow ? Plot.text([bestRow], { x: 'b', y: 'e', text: (d) => `min at σ = ${d.b.toFixed(3)}`, dy: -12, fontSize: 11 }) : null,
      ],
    }));
  }

  function drawClasses({ probs }) {
    const rows = [];
    FIT_QUERIES.forEach((x, i) => {
      CLASSES.forEach((name, c) => rows.push({ x, c, p: probs[i * CLASSES.length + c] }));
    });
    classCard.body.replaceChildren(Plot.plot({
      width: widthOf(classCard.body), height: 200, marginLeft: 44, marginBottom: 40,
      x: { domain: [0, X_MAX], label: 'query q →' },
      y: { domain: [0, 1], label: '↑ p(c | q)', grid: true },
      color: { domain: [0, 1, 2], range: CLASS_COLORS, legend: true, tickFormat: (c) => CLASSES[c] },
      marks: [
        // NaN (no key within σ of the query) leaves a gap rather than an interpolated band.
        Plot.areaY(rows, { x: 'x', y: 'p', fill: 'c', z: 'c', order: [0, 1, 2], stroke: 'white', strokeWidth: 0.5 }),
        Plot.dot(points, { x: 'x', y: () => 1.0, dy: -2, r: 2, fill: '#333' }),
      ],
    }));
  }

  // --- pointer interaction -------------------------------------------------------------------------

  function nearestPoint(event) {
    const { px, py } = pointerData(fitPlot, event);
    const xs = fitPlot.scale('x');
    const ys = fitPlot.scale('y');
    const reach = event.pointerType === 'touch' ? 24 : 14;
    let best = null;
    let bestDist = reach;
    points.forEach((p, i) => {
      const d = Math.hypot(xs.apply(p.x) - px, ys.apply(p.y) - py);
      if (d < bestDist) {
        bestDist = d;
        best = i;
      }
    });
    return best;
  }

  function queryAt(event) {
    const { px } = pointerData(fitPlot, event);
    const x = fitPlot.scale('x').invert(px);
    if (x < 0 || x > X_MAX) return null;
    return Math.min(HEAT_QUERIES.length - 1, Math.max(0, Math.round(x * 10)));
  }

  fit.body.addEventListener('pointerdown', (event) => {
    if (!fitPlot) return;
    const i = nearestPoint(event);
    if (i == null) return;
    event.preventDefault();
    dragging = i;
    fit.body.setPointerCapture(event.pointerId);
  });
  fit.body.addEventListener('pointermove', (event) => {
    if (!fitPlot) return;
    if (dragging == null) {
      const q = queryAt(event);
      if (q !== hover) {
        hover = q;
        update();
      }
      return;
    }
    const { px, py } = pointerData(fitPlot, event);
    const x = Math.min(X_MAX - 1e-3, Math.max(0, fitPlot.scale('x').invert(px)));
    const y = Math.min(Y_DOMAIN[1], Math.max(Y_DOMAIN[0], fitPlot.scale('y').invert(py)));
    points[dragging] = { x, y };
    moved.set(dragging, { x, y });
    dataVersion += 1;
    update();
  });
  const endDrag = () => {
    if (dragging == null) return;
    dragging = null;
    section.set({ moved: encodeMoved(moved) });
  };
  fit.body.addEventListener('pointerup', endDrag);
  fit.body.addEventListener('pointercancel', endDrag);
  fit.body.addEventListener('pointerleave', () => {
    if (dragging == null && hover != null) {
      hover = null;
      update();
    }
  });
  heat.body.addEventListener('pointermove', (event) => {
    if (!heatPlot) return;
    const row = rowAt(heatPlot, event);
    if (row !== hover) {
      hover = row;
      update();
    }
  });
  heat.body.addEventListener('pointerleave', () => {
    hover = null;
    update();
  });

  return { render: () => section.meter.run(compute, draw) };
}
