// A seq2seq section: a translation model of MODELS (web/shared/translation/trainer.js) trained in
// a Web Worker of the section's own (train-worker.js) on a generated English -> French corpus or
// on dates, with its loss, held-out BLEU against time (beside the last runs of other models on
// the page: past-runs.js), the probe sentence's alignment and a sentence of the visitor's.
// Sections 5 (Bahdanau, ../bahdanau/) and 6 (the Transformer, ../transformer/) are two
// configurations of this one implementation: their number and title, URL prefix, models,
// explanation and cards. This module owns the URL state and the layout of the controls
// (controls.js) and the cards, and passes what the worker reports through worker-messages.js to
// the parts that redraw (parts.js). Models trained by scripts/train-page-model.js ship with the
// page, so translation works before any training.

import { controlBar, textField } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { whenNear } from '../../ui/when-near.js';
import { watchedWorker } from '../../workers/watched-worker.js';
import { TASKS } from '../../../shared/translation/tasks.js';
import { comparingLine, freshView } from './compute.js';
import { compareBar, showTrainState, trainingBar } from './controls.js';
import { sectionParts } from './parts.js';
import { PAGE_RUNS } from './past-runs.js';
import { foldWorkerMessage, startView } from './worker-messages.js';

const paragraph = (className) => {
  const p = document.createElement('p');
  p.className = className;
  return p;
};

/**
 * The comparison of models by source length (section 5's, attention-comparison.js): its
 * explanation, its bar (epochs each, in the URL as `cmp`), its status line and its card, named
 * `${prefix}-compare`. onCompare(epochs) starts it; `kinds` are the models it trains.
 */
function comparisonBlock({ text, kinds, prefix, values, section, onCompare }) {
  const status = paragraph('readout compare-status');
  status.textContent = 'Not run yet.';
  const bar = compareBar({
    values, section, onCompare: (epochs) => {
      status.textContent = `${comparingLine(kinds)}…`;
      onCompare(epochs);
    },
  });
  const compareCard = card('Held-out BLEU by source length', { name: `${prefix}-compare`, wide: true });
  return { nodes: [prose(text), bar.element, status, plotGrid(compareCard)], button: bar.button, status, compareCard };
}

/**
 * Mounts the section into `root` (whose id is its anchor) as `settings` configure it:
 *   number, title  its heading
 *   prefix         its URL state's prefix and its cards' names (`${prefix}-bleu`)
 *   models         the kinds of MODELS it trains, the first by default (a menu when more than one)
 *   text           its explanation, HTML with TeX
 *   probeTitle     the probe card's title
 *   headsTitle     the title of the card of every head (a Transformer's); none, no such card
 *   beside         { kinds, hint }: the models whose last run on the page the BLEU chart draws
 *                  beside the one on show, and where to train one when there is none yet
 *   comparison     { text, kinds }: the comparison by source length, its explanation (HTML with
 *                  TeX) and the kinds it trains side by side; none, no comparison
 */
export function mountSeq2SeqSection(root, settings) {
  const { number, title, prefix, models, text, probeTitle, headsTitle, beside, comparison } = settings;
  const state = urlState(prefix, {
    task: 'fra-eng', seed: 0, ...(models.length > 1 && { model: models[0] }), ...(comparison && { cmp: 5 }),
  }, root.id);
  const section = scaffold(root, { number, title, state });
  const { values } = state;
  if (!TASKS[values.task]) values.task = 'fra-eng';
  if (!models.includes(values.model)) values.model = models[0];
  root.dataset.trainState = 'loading';
  const current = { view: freshView(), runs: PAGE_RUNS, translationId: 0 };

  const send = (message) => worker.postMessage(message);
  const training = trainingBar({
    id: root.id, models, values, section, send, trainState: () => root.dataset.trainState,
    onTask: (task) => {
      startView(current, root.dataset);
      sentence.value = TASKS[task].examples[0];
    },
  });
  const stats = paragraph('readout train-stats');
  stats.setAttribute('aria-live', 'polite');

  const lossCard = card('Training loss (mean over each slice of steps)', { name: `${prefix}-loss` });
  const bleuCard = card('Held-out BLEU against training time', { name: `${prefix}-bleu` });
  const probeCard = card(probeTitle, { name: `${prefix}-probe` });
  const probeLine = paragraph('readout probe-line');
  probeCard.figure.insertBefore(probeLine, probeCard.body);
  const headsCard = headsTitle ? card(headsTitle, { name: `${prefix}-heads`, wide: true }) : null;

  const sentence = textField({
    name: 'sentence', label: 'your sentence (greedy translation below)', value: TASKS[values.task].examples[0],
    onInput: () => requestTranslation(),
  });
  const translateCard = card('Its alignment', { name: `${prefix}-translate` });
  const translation = document.createElement('div');
  translation.className = 'translation';
  translation.setAttribute('aria-live', 'polite');

  const compare = comparison ? comparisonBlock({
    ...comparison, prefix, values, section, onCompare: (epochs) => send({ type: 'compare', epochs, kinds: comparison.kinds }),
  }) : null;
  const buttons = { ...training.buttons, compare: compare?.button };

  section.append(
    prose(text),
    training.element,
    stats,
    plotGrid(lossCard, bleuCard, probeCard),
    ...(headsCard ? [plotGrid(headsCard)] : []),
    controlBar(sentence),
    translation,
    plotGrid(translateCard),
    ...(compare?.nodes ?? []),
  );

  const worker = watchedWorker(
    () => new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module', name: `${root.id}-training` }),
    {
      onMessage,
      onError: (message) => {
        stats.textContent = `The training worker failed: ${message}`;
        root.dataset.trainState = 'error';
      },
      onRestart: () => console.warn(`${root.id}: the training worker stopped answering while it loaded; started another`),
      // Started when the section is a screen away: a reader of the first sections does not pay
      // for the two training workers (each loads the package and a shipped model, and scores it
      // held out).
      startWhen: (start) => whenNear(root, start),
    },
  );
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
      compare.status.textContent = `${comparingLine(comparison.kinds)}: epoch ${m.epoch.toFixed(1)} of ${m.epochs}…`;
    }
    for (const name of redraw) schedule(name);
    schedule('stats');
  }

  const parts = sectionParts(current, root.dataset, {
    training, stats, lossCard, bleuCard, probeCard, probeLine, translation, translateCard, headsCard,
    compareText: compare?.status, compareCard: compare?.compareCard,
  }, beside);
  const schedule = (name) => section.meter.schedule(() => null, parts[name], name);
  // Another section's run (or this one's) entered the page's log: redraw the curves beside.
  current.runs.onChange(() => schedule('curves'));

  return {
    render: () => {
      for (const name of Object.keys(parts)) schedule(name);
    },
  };
}
