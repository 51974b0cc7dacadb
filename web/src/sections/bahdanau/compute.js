// What section 5 shows, folded from the training worker's reports (train-worker.js lists them):
// the current model's loss and BLEU history, its latest figures, the probe's and the visitor's
// translations, the with/without-attention comparison, and the BLEU curve of the last run of
// each kind of model trained on this page. Plain data in and out; the training itself runs in
// the worker (web/shared/translation/trainer.js).

import { EPOCHS, LONG_WORDS, MODELS } from '../../../shared/translation/trainer.js';

const fmt = (x, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '—');

/**
 * A view with no history, for model `run` (-1: none yet) of `kind` on `task` (both undefined
 * until the worker names them); the comparison survives.
 */
export const freshView = (run = -1, compare = null, { kind, task } = {}) => ({
  run, kind, task, losses: [], bleus: [], last: null, probe: null, translation: null, compare, tokensPerSecond: NaN,
});

/**
 * Replaces current.view with a fresh one (freshView's arguments after the comparison). A view
 * that trained on this page leaves its BLEU curve behind in current.pastRuns[task][kind], the last
 * run of its kind there, for the next runs' BLEU chart to show beside theirs.
 */
export function replaceView(current, run, names) {
  const { view } = current;
  if (view.kind && view.task && view.losses.length > 0 && view.bleus.length > 1) {
    current.pastRuns[view.task] = { ...current.pastRuns[view.task], [view.kind]: view.bleus };
  }
  current.view = freshView(run, view.compare, names);
}

/**
 * The curves the BLEU chart shows beside the view's: the last run on this page of each other
 * kind of model, on the same task. [{ kind, label, points: [{ seconds, bleu }] }].
 */
export const pastRunsBeside = ({ view, pastRuns }) => Object.entries(pastRuns[view.task] ?? {})
  .filter(([kind]) => kind !== view.kind)
  .map(([kind, points]) => ({ kind, label: `${MODELS[kind].label}, its last run on this page`, points }));

/** Whether a report belongs to a model other than the view's (a fresh start, a reset, a task). */
export const startsNewRun = (view, m) => m.run !== view.run && ['state', 'probe', 'eval'].includes(m.type);

/** Adds a 'progress' report (the mean loss of a slice of steps) to the view. */
export function addProgress(view, m) {
  view.losses.push({ step: m.steps, loss: m.loss });
  view.tokensPerSecond = m.tokensPerSecond;
  view.last = { ...view.last, steps: m.steps, epoch: m.epoch, seconds: m.seconds, loss: m.loss };
}

/** Adds an 'eval' report (held-out BLEU and exact matches) to the view. */
export function addEval(view, m) {
  view.bleus.push({ seconds: m.seconds, bleu: m.bleu, steps: m.steps });
  view.last = { ...view.last, bleu: m.bleu, exact: m.exact, steps: m.steps, epoch: m.epoch };
}

/** The progress bar's label: the state, epoch, step and training seconds. */
export function progressLine(state, { last }) {
  const { epoch = 0, steps = 0, seconds } = last ?? {};
  return `${state}: epoch ${fmt(epoch, 1)} / ${EPOCHS} · step ${steps}${seconds ? ` · ${seconds.toFixed(1)} s` : ''}`;
}

/** The figures of the model shown: held-out BLEU, exact matches, loss and speed. */
export function statsLine({ shipped, losses, last, tokensPerSecond }) {
  const { bleu, exact, loss } = last ?? {};
  return [
    `${shipped && losses.length === 0 ? 'shipped model' : 'this run'}: held-out BLEU ${fmt(bleu)}`,
    `exact ${Number.isFinite(exact) ? `${(100 * exact).toFixed(0)}%` : '—'}`,
    `loss ${fmt(loss)}`,
    `${Number.isFinite(tokensPerSecond) ? Math.round(tokensPerSecond).toLocaleString('en') : '—'} tokens/s`,
  ].join(' · ');
}

/** Held-out BLEU over the long sources, { with, without }, from the comparison's results. */
export const longSentenceBleu = ([withAttention, without]) => ({ with: withAttention.long, without: without.long });

/** The comparison's outcome in one sentence, from the worker's 'compare' report. */
export function compareLine({ epochs, results: [withAttention, without] }) {
  const long = longSentenceBleu([withAttention, without]);
  return `After ${epochs} epoch${epochs > 1 ? 's' : ''} each (${withAttention.steps} steps): `
    + `held-out BLEU ${fmt(withAttention.bleu)} with attention, ${fmt(without.bleu)} without; `
    + `from ${LONG_WORDS} words on, ${fmt(long.with)} against ${fmt(long.without)}.`;
}
