// What the section keeps of each message of the training worker (train-worker.js lists them):
// it folds the message into the view (compute.js) and keeps the current model's latest figures
// on the section element's dataset for the browser tests. Returns the parts of the section to
// redraw; the caller does what touches the controls.

import { addEval, addProgress, longSentenceBleu, replaceView, startsNewRun } from './compute.js';

// The current model's figures, dropped when another model's reports begin.
const RUN_DATA = ['firstLoss', 'loss', 'bleu', 'bleuSeconds', 'bleuCurve'];
/** Counts one more update of `key` on the dataset (the browser tests wait for these). */
export const bumpCount = (dataset, key) => {
  dataset[key] = String(Number(dataset[key] ?? 0) + 1);
};

/** A BLEU curve's point as the dataset keeps it: [seconds, bleu, steps]. */
export const curvePoint = (b) => [Number(b.seconds.toFixed(2)), Number(b.bleu.toFixed(4)), b.steps];

/** Starts a fresh view (compute.js, replaceView) and drops the old one's figures from `dataset`. */
export function startView(current, dataset, run = -1, names = {}) {
  replaceView(current, run, names);
  for (const key of RUN_DATA) delete dataset[key];
}

/**
 * Folds message `m` into `current` ({ view, runs: the page's run log (past-runs.js),
 * translationId: the latest translation asked for }) and `dataset`; the names of the parts to
 * redraw, besides the stats line. A measured run enters the log, which redraws the charts that
 * draw it beside their own.
 */
export function foldWorkerMessage(current, m, dataset) {
  // A new run's first report is its state, which names its kind and task.
  if (startsNewRun(current.view, m)) startView(current, dataset, m.run, { kind: m.kind, task: m.task });
  const { view } = current;
  if (m.type === 'state') {
    dataset.trainState = m.state;
    if (m.shipped !== undefined) view.shipped = m.shipped;
  } else if (m.type === 'progress' && m.run === view.run) {
    addProgress(view, m);
    bumpCount(dataset, 'progressUpdates');
    dataset.firstLoss ??= String(m.loss);
    dataset.loss = String(m.loss);
    return ['curves'];
  } else if (m.type === 'eval' && m.run === view.run) {
    addEval(view, m);
    current.runs.record(view);
    dataset.bleu = String(m.bleu);
    dataset.bleuSeconds = String(m.seconds);
    dataset.bleuCurve = JSON.stringify(view.bleus.map(curvePoint));
    return ['curves'];
  } else if (m.type === 'probe' && m.run === view.run) {
    view.probe = m.result;
    bumpCount(dataset, 'probeUpdates');
    return ['probe'];
  } else if (m.type === 'translation' && m.id === current.translationId) {
    view.translation = m.results[0];
    return ['translation'];
  } else if (m.type === 'compare') {
    view.compare = m;
    dataset.compared = 'true';
    dataset.compareLong = JSON.stringify(longSentenceBleu(m.results));
    return ['compare'];
  }
  return [];
}
