// 5. Bahdanau attention and the Transformer: learning to align. A GRU encoder-decoder with
// additive attention (the package's Seq2SeqAttention, d2l's model), or another model of the menu
// (d2l's Transformer, a decoder without attention), trains in a Web Worker (train-worker.js) on a
// generated English -> French corpus or on dates; this module owns the URL state and the layout
// of the controls (controls.js) and the plots, and passes what the worker reports through
// worker-messages.js to the parts that redraw (parts.js). Models trained by
// scripts/train-page-model.js ship with the page (Bahdanau's and the Transformer), so
// translation works before any training.

import { controlBar, textField } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { TASKS } from '../../../shared/translation/tasks.js';
import { MODELS } from '../../../shared/translation/trainer.js';
import { freshView } from './compute.js';
import { compareBar, showTrainState, trainingBar } from './controls.js';
import { COMPARE_TEXT, TEXT } from './explanation.js';
import { sectionParts } from './parts.js';
import { foldWorkerMessage, startView } from './worker-messages.js';

const paragraph = (className) => {
  const p = document.createElement('p');
  p.className = className;
  return p;
};

export function mountBahdanau(root) {
  const state = urlState('bd', { task: 'fra-eng', model: 'bahdanau', seed: 0, cmp: 5 }, root.id);
  const section = scaffold(root, { number: 5, title: 'Bahdanau attention and the Transformer: learning to align', state });
  const { values } = state;
  if (!TASKS[values.task]) values.task = 'fra-eng';
  if (!MODELS[values.model]) values.model = 'bahdanau';
  root.dataset.trainState = 'loading';
  const current = { view: freshView(), pastRuns: {}, translationId: 0 };

  const send = (message) => worker.postMessage(message);
  const training = trainingBar({
    id: root.id, values, section, send, trainState: () => root.dataset.trainState,
    onTask: (task) => {
      startView(current, root.dataset);
      sentence.value = TASKS[task].examples[0];
    },
  });
  const stats = paragraph('readout train-stats');
  stats.setAttribute('aria-live', 'polite');

  const lossCard = card('Training loss (mean over each slice of steps)', { name: 'bd-loss' });
  const bleuCard = card('Held-out BLEU against training time', { name: 'bd-bleu' });
  const probeCard = card('Alignment of the probe sentence (not a training pair)', { name: 'bd-probe' });
  const probeLine = paragraph('readout probe-line');
  probeCard.figure.insertBefore(probeLine, probeCard.body);
  const headsCard = card('The Transformer’s heads on the probe sentence, every block', { name: 'bd-heads', wide: true });

  const sentence = textField({
    name: 'sentence', label: 'your sentence (greedy translation below)', value: TASKS[values.task].examples[0],
    onInput: () => requestTranslation(),
  });
  const translateCard = card('Its alignment', { name: 'bd-translate' });

  const translation = document.createElement('div');
  translation.className = 'translation';
  translation.setAttribute('aria-live', 'polite');

  const comparison = compareBar({
    values, section, onCompare: (epochs) => {
      compareText.textContent = 'training with and without attention…';
      send({ type: 'compare', epochs });
    },
  });
  const compareText = paragraph('readout compare-status');
  compareText.textContent = 'Not run yet.';
  const compareCard = card('Held-out BLEU by source length', { name: 'bd-compare', wide: true });
  const buttons = { ...training.buttons, compare: comparison.button };

  section.append(
    prose(TEXT),
    training.element,
    stats,
    plotGrid(lossCard, bleuCard, probeCard),
    plotGrid(headsCard),
    controlBar(sentence),
    translation,
    plotGrid(translateCard),
    prose(COMPARE_TEXT),
    comparison.element,
    compareText,
    plotGrid(compareCard),
  );

  const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module', name: 'bahdanau-training' });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    stats.textContent = `The training worker failed: ${event.message}`;
    root.dataset.trainState = 'error';
  });
  worker.addEventListener('message', ({ data }) => onMessage(data));
  send({ type: 'init', task: values.task, seed: values.seed, kind: values.model, modelBase: new URL('models/', document.baseURI).href });

  function requestTranslation() {
    current.translationId += 1;
    send({ type: 'translate', id: current.translationId, texts: [sentence.value] });
  }

  function onMessage(m) {
    if (m.type === 'error') {
      stats.textContent = `Error: ${m.message}`;
      console.warn(m.message);
      return;
    }
    const redraw = foldWorkerMessage(current, m, root.dataset);
    if (m.type === 'state') {
      showTrainState(root, m.state, buttons);
      if (m.state === 'idle' || m.state === 'done') requestTranslation();
    } else if (m.type === 'compare-progress') {
      compareText.textContent = `training with and without attention: epoch ${m.epoch.toFixed(1)} of ${m.epochs}…`;
    }
    for (const name of redraw) schedule(name);
    schedule('stats');
  }

  const parts = sectionParts(current, root.dataset, {
    training, stats, lossCard, bleuCard, probeCard, probeLine, translation, translateCard, headsCard, compareText, compareCard,
  });
  const schedule = (name) => section.meter.schedule(() => null, parts[name], name);

  return {
    render: () => {
      for (const name of Object.keys(parts)) schedule(name);
    },
  };
}
