// 6. Bahdanau attention: learning to align. A GRU encoder-decoder with additive attention
// (the package's Seq2SeqAttention, d2l's model) trains in a Web Worker
// (bahdanau/train-worker.js) on a generated English -> French corpus or on dates; this module
// owns the controls, the URL state and the plots (bahdanau/plots.js) and draws what the worker
// reports. A model trained by scripts/train-page-model.js ships with the page, so translation
// works before any training.

import { button, checkbox, controlBar, progressBar, select, slider, textField } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { addEval, addProgress, compareLine, freshView, progressLine, startsNewRun, statsLine } from './compute.js';
import { COMPARE_TEXT, TEXT } from './explanation.js';
import { alignmentPlot, bleuPlot, lengthPlot, lossPlot, translationLines } from './plots.js';
import { TASKS, taskNames } from '../../../shared/translation/tasks.js';
import { EPOCHS } from '../../../shared/translation/trainer.js';

// Kept on the section element for the browser tests: the current model's latest figures.
const RUN_DATA = ['firstLoss', 'loss', 'bleu', 'bleuSeconds', 'bleuCurve'];
const count = (dataset, key) => {
  dataset[key] = String(Number(dataset[key] ?? 0) + 1);
};

export function mountBahdanau(root) {
  const state = urlState('bd', { task: 'fra-eng', seed: 0, attention: true, cmp: 5 }, root.id);
  const section = scaffold(root, { number: 5, title: 'Bahdanau attention: learning to align', state });
  const { values } = state;
  if (!TASKS[values.task]) values.task = 'fra-eng';
  root.dataset.trainState = 'loading';

  // --- controls -------------------------------------------------------------------------------
  const send = (message) => worker.postMessage(message);
  const task = select({
    name: 'task', label: 'task', value: values.task,
    options: taskNames.map((name) => [name, TASKS[name].label]),
    onChange: (v) => {
      section.set({ task: v });
      view = freshView(-1, view.compare);
      sentence.value = TASKS[v].examples[0];
      send({ type: 'config', task: v });
    },
  });
  const seed = slider({
    name: 'seed', label: 'seed (initial weights, batch order)', min: 0, max: 99, step: 1, value: values.seed,
    onInput: (v) => {
      section.set({ seed: v });
      send({ type: 'config', seed: v });
    },
  });
  const attention = checkbox({
    name: 'attention', label: 'attention (off: d2l’s plain decoder)', checked: values.attention,
    onChange: (v) => {
      section.set({ attention: v });
      send({ type: 'config', attention: v });
    },
  });
  const startButton = button({ name: 'start', label: 'Train from scratch', onClick: () => send({ type: 'start' }) });
  startButton.element.classList.add('primary');
  const pauseButton = button({
    name: 'pause', label: 'Pause',
    onClick: () => send({ type: root.dataset.trainState === 'running' ? 'pause' : 'resume' }),
  });
  const resetButton = button({ name: 'reset', label: 'Reset to the shipped model', onClick: () => send({ type: 'reset' }) });
  const buttons = document.createElement('div');
  buttons.className = 'control control-buttons';
  buttons.append(startButton.element, pauseButton.element, resetButton.element);

  const { element: progressBox, text: progressText, bar: progress } = progressBar({ id: `${root.id}-progress-text`, max: EPOCHS });

  const stats = document.createElement('p');
  stats.className = 'readout train-stats';
  stats.setAttribute('aria-live', 'polite');

  const lossCard = card('Training loss (mean over each slice of steps)', { name: 'bd-loss' });
  const bleuCard = card('Held-out BLEU against training time', { name: 'bd-bleu' });
  const probeCard = card('Alignment of the probe sentence (not a training pair)', { name: 'bd-probe' });
  const probeLine = document.createElement('p');
  probeLine.className = 'readout probe-line';
  probeCard.figure.insertBefore(probeLine, probeCard.body);

  const sentence = textField({
    name: 'sentence', label: 'your sentence (greedy translation below)', value: TASKS[values.task].examples[0],
    onInput: () => requestTranslation(),
  });
  const translateCard = card('Its alignment', { name: 'bd-translate' });
  const translation = document.createElement('div');
  translation.className = 'translation';
  translation.setAttribute('aria-live', 'polite');

  const compareEpochs = select({
    name: 'compare-epochs', label: 'epochs each', value: String(values.cmp),
    options: [1, 2, 5, 10, 20].map((n) => [String(n), String(n)]),
    onChange: (v) => section.set({ cmp: Number(v) }),
  });
  const compareButton = button({
    name: 'compare', label: 'Train both', onClick: () => {
      compareText.textContent = 'training with and without attention…';
      send({ type: 'compare', epochs: Number(compareEpochs.value) });
    },
  });
  const compareGroup = document.createElement('div');
  compareGroup.className = 'control control-buttons';
  compareGroup.append(compareButton.element);
  const compareText = document.createElement('p');
  compareText.className = 'readout compare-status';
  compareText.textContent = 'Not run yet.';
  const compareCard = card('Held-out BLEU by source length', { name: 'bd-compare', wide: true });

  section.append(
    prose(TEXT),
    controlBar(task, seed, attention, buttons, progressBox),
    stats,
    plotGrid(lossCard, bleuCard, probeCard),
    controlBar(sentence),
    translation,
    plotGrid(translateCard),
    prose(COMPARE_TEXT),
    controlBar(compareEpochs, compareGroup),
    compareText,
    plotGrid(compareCard),
  );

  let view = freshView();
  const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module', name: 'bahdanau-training' });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    stats.textContent = `The training worker failed: ${event.message}`;
    root.dataset.trainState = 'error';
  });
  worker.addEventListener('message', ({ data }) => onMessage(data));
  send({ type: 'init', task: values.task, seed: values.seed, attention: values.attention, modelBase: new URL('models/', document.baseURI).href });

  let translationId = 0;
  function requestTranslation() {
    translationId += 1;
    send({ type: 'translate', id: translationId, texts: [sentence.value] });
  }

  function onMessage(m) {
    if (m.type === 'error') {
      stats.textContent = `Error: ${m.message}`;
      console.warn(m.message);
      return;
    }
    if (startsNewRun(view, m)) {
      view = freshView(m.run, view.compare);
      for (const key of RUN_DATA) delete root.dataset[key];
    }
    if (m.type === 'state') {
      root.dataset.trainState = m.state;
      if (m.shipped !== undefined) view.shipped = m.shipped;
      setButtons(m.state);
      if (m.state === 'idle' || m.state === 'done') requestTranslation();
    } else if (m.type === 'progress' && m.run === view.run) {
      addProgress(view, m);
      count(root.dataset, 'progressUpdates');
      root.dataset.firstLoss ??= String(m.loss);
      root.dataset.loss = String(m.loss);
      schedule('curves');
    } else if (m.type === 'eval' && m.run === view.run) {
      addEval(view, m);
      root.dataset.bleu = String(m.bleu);
      root.dataset.bleuSeconds = String(m.seconds);
      root.dataset.bleuCurve = JSON.stringify(view.bleus.map((b) => [Number(b.seconds.toFixed(2)), Number(b.bleu.toFixed(4)), b.steps]));
      schedule('curves');
    } else if (m.type === 'probe' && m.run === view.run) {
      view.probe = m.result;
      count(root.dataset, 'probeUpdates');
      schedule('probe');
    } else if (m.type === 'translation' && m.id === translationId) {
      view.translation = m.results[0];
      schedule('translation');
    } else if (m.type === 'compare-progress') {
      compareText.textContent = `training with and without attention: epoch ${m.epoch.toFixed(1)} of ${m.epochs}…`;
    } else if (m.type === 'compare') {
      view.compare = m;
      root.dataset.compared = 'true';
      schedule('compare');
    }
    schedule('stats');
  }

  function setButtons(s) {
    const busy = s === 'loading' || s === 'comparing';
    startButton.element.disabled = busy;
    resetButton.element.disabled = busy;
    compareButton.element.disabled = busy;
    pauseButton.element.disabled = !(s === 'running' || s === 'paused');
    pauseButton.element.textContent = s === 'paused' ? 'Resume' : 'Pause';
    pauseButton.element.name = s === 'paused' ? 'resume' : 'pause';
    root.setAttribute('aria-busy', String(s === 'running' || busy));
  }

  const parts = {
    stats: () => {
      progress.value = Math.min(EPOCHS, view.last?.epoch ?? 0);
      progressText.textContent = progressLine(root.dataset.trainState, view);
      stats.textContent = statsLine(view);
    },
    curves: () => {
      lossCard.body.replaceChildren(lossPlot(view.losses, widthOf(lossCard.body, { max: 560 })));
      bleuCard.body.replaceChildren(bleuPlot(view.bleus, widthOf(bleuCard.body, { max: 560 })));
    },
    probe: () => {
      if (!view.probe) return;
      probeLine.textContent = `${view.probe.source.join(' ')}  →  ${view.probe.output.join(' ')}`;
      probeCard.body.replaceChildren(alignmentPlot(view.probe, widthOf(probeCard.body, { max: 520 })));
    },
    translation: () => {
      if (!view.translation) return;
      translation.replaceChildren(...translationLines(view.translation));
      count(root.dataset, 'translations');
      translateCard.body.replaceChildren(alignmentPlot(view.translation, widthOf(translateCard.body, { max: 560 })));
    },
    compare: () => {
      if (!view.compare) return;
      compareText.textContent = compareLine(view.compare);
      compareCard.body.replaceChildren(lengthPlot(view.compare.results, widthOf(compareCard.body, { max: 900 })));
    },
  };
  const schedule = (name) => section.meter.schedule(() => null, parts[name], name);

  return {
    render: () => {
      for (const name of Object.keys(parts)) schedule(name);
    },
  };
}
