// 2. Nadaraya-Watson kernel regression, d2l's example: f(x) = 2 sin x + x, 40 noisy training
// points on [0, 5). Kernel and bandwidth controls; the kernel shapes, the fit with draggable
// points, the queries × keys weight heatmap (hover a row to see its weights on the points),
// the leave-one-out error over σ, and a classification mode (one-hot labels pooled).

import { button, checkbox, controlBar, select, slider } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { computeRegression, decodeMoved, encodeMoved, leaveOneOutSearch, makePoints } from './compute.js';
import { LOO_TEXT, TEXT } from './explanation.js';
import { classesPlot, fitPlot, hoveredQuery, looPlot, shapesPlot, weightsHeatmap } from './plots.js';
import { followPointer } from './pointer.js';

const KERNELS = [
  ['gaussian', 'Gaussian'],
  ['boxcar', 'boxcar'],
  ['epanechnikov', 'Epanechnikov'],
  ['constant', 'constant'],
];

export function mountKernelRegression(root, attn) {
  const state = urlState('kr', { kernel: 'gaussian', sigma: 0.5, seed: 1, cls: false, moved: '' }, root.id);
  const section = scaffold(root, { number: 2, title: 'Nadaraya-Watson kernel regression', state });
  const { values } = state;

  let points = [];
  let moved = decodeMoved(values.moved);
  let dataVersion = 0;
  let loo = null; // { key, errors, best }
  let hover = null; // index into HEAT_QUERIES
  const plots = { fit: null, heat: null }; // the ones drawn now: the pointer reads their scales

  const resetPoints = () => {
    points = makePoints(values.seed);
    for (const [i, p] of moved) points[i] = { ...p };
    dataVersion += 1;
  };
  resetPoints();

  const update = () => section.meter.schedule(compute, draw);
  const bind = (key) => (value) => {
    section.set({ [key]: value });
    update();
  };
  const kernel = select({ name: 'kernel', label: 'kernel', options: KERNELS, value: values.kernel, onChange: bind('kernel') });
  const sigma = slider({
    name: 'bandwidth', label: 'bandwidth σ', min: 0.02, max: 5, log: true, step: 0.005,
    value: values.sigma, format: (v) => v.toFixed(3), onInput: bind('sigma'),
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
      bind('sigma')(sigma.value);
    },
  });
  const classify = checkbox({
    name: 'classification', label: 'classification (one-hot labels)', checked: values.cls,
    onChange: (cls) => {
      classCard.figure.hidden = !cls;
      bind('cls')(cls);
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

  function compute() {
    const k = kernel.value;
    const s = sigma.value;
    const looKey = `${dataVersion}|${k}|${values.cls}`;
    if (loo?.key !== looKey) loo = { key: looKey, ...leaveOneOutSearch(attn, points, k, values.cls) };
    return { k, s, ...computeRegression(attn, points, k, s, values.cls), loo };
  }

  function draw(result) {
    const data = { ...result, points, hover, cls: values.cls };
    seedReadout.textContent = `seed ${values.seed}${moved.size ? `, ${moved.size} moved` : ''}`;
    shapes.body.replaceChildren(shapesPlot(data, widthOf(shapes.body)));
    plots.fit = fitPlot(data, widthOf(fit.body));
    fit.body.replaceChildren(plots.fit);
    const q = hoveredQuery(data);
    hoverNote.textContent = q
      ? `query q = ${q.x.toFixed(1)}: dot size ∝ its weight on each point; f̂(q) = ${Number.isFinite(q.y) ? q.y.toFixed(3) : 'NaN (no key within σ)'}`
      : 'Drag a point to move it; hover to inspect a query.';
    plots.heat = weightsHeatmap(data, widthOf(heat.body));
    heat.body.replaceChildren(plots.heat);
    const { best } = result.loo;
    useBest.element.textContent = Number.isFinite(best) ? `use the LOO-best σ = ${best.toFixed(3)}` : 'no finite LOO error';
    looCard.body.replaceChildren(looPlot(data, widthOf(looCard.body)));
    if (values.cls) classCard.body.replaceChildren(classesPlot(data, widthOf(classCard.body)));
  }

  followPointer({
    fit: fit.body, heat: heat.body, plots: () => plots, points: () => points,
    onHover: (row) => {
      hover = row;
      update();
    },
    onDrag: (i, p) => {
      points[i] = p;
      moved.set(i, p);
      dataVersion += 1;
      update();
    },
    onDrop: () => section.set({ moved: encodeMoved(moved) }),
  });

  return { render: () => section.meter.run(compute, draw) };
}
