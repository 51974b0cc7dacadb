// What a seq2seq section shows, folded from its training worker's reports (train-worker.js lists
// them): the current model's loss and BLEU history, its latest figures, the probe's and the
// visitor's translations and the with/without-attention comparison. Plain data in and out; the
// training itself runs in the worker (web/shared/translation/trainer.js), and the curves of
// other runs drawn beside this one are in past-runs.js.

import { EPOCHS, LONG_WORDS, MODELS } from '../../../shared/translation/trainer.js';

const fmt = (x, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '—');

/**
 * A view with no history, for model `run` (-1: none yet) of `kind` on `task` (both undefined
 * until the worker names them); the comparison survives.
 */
export const freshView = (run = -1, compare = null, { kind, task } = {}) => ({
  run, kind, task, losses: [], bleus: [], last: null, probe: null, translation: null, compare, tokensPerSecond: NaN,
});

/** Replaces current.view with a fresh one (freshView's arguments after the comparison). */
export function replaceView(current, run, names) {
  current.view = freshView(run, current.view.compare, names);
}

/**
 * The line under the BLEU chart when some of the runs it draws beside the view's are missing:
 * `kinds` (keys of MODELS) have no run on this page for the task yet, and `hint` says where to
 * train one. Null when none is missing.
 */
export const missingRunsLine = (kinds, hint) => (kinds.length === 0 ? null
  : `No run of ${kinds.map((k) => `“${MODELS[k].label}”`).join(' or ')} on this page for this task yet: ${hint}.`);

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
