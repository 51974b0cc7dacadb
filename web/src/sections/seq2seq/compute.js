// What a seq2seq section shows, folded from its training worker's reports (train-worker.js lists
// them): the current model's loss and BLEU history, its latest figures, the probe's and the
// visitor's translations and the comparison of models by source length. Plain data in and out; the
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

/** Held-out BLEU over the long sources, { kind: bleu }, from the comparison's { kind: results }. */
export const longSentenceBleu = (results) => Object.fromEntries(Object.entries(results).map(([kind, r]) => [kind, r.long]));

const epochsEach = (epochs) => `${epochs} epoch${epochs > 1 ? 's' : ''} each`;
const listed = (items) => new Intl.ListFormat('en', { type: 'conjunction' }).format(items);

/** The comparison's status while it trains `kinds`: "training Bahdanau and no attention side by side". */
export const comparingLine = (kinds) => `training ${listed(kinds.map((k) => MODELS[k].shortLabel))} side by side`;

/** The comparison's figures in one line, from the worker's 'compare' report. */
export function compareLine({ epochs, results }) {
  const models = Object.entries(results);
  return `After ${epochsEach(epochs)} (${models[0][1].steps} steps): held-out BLEU from ${LONG_WORDS} words on `
    + `${models.map(([kind, r]) => `${fmt(r.long)} ${MODELS[kind].shortLabel}`).join(', ')}; `
    + `over all lengths ${models.map(([, r]) => fmt(r.bleu)).join(', ')}.`;
}

/**
 * The sentence under the comparison's figure, from the worker's 'compare' report: what the figure
 * draws, and which model leads from LONG_WORDS words on in this run, by how much over each other.
 */
export function compareCaption({ epochs, seed, results }) {
  const models = Object.entries(results);
  const { from, to } = models[0][1].byLength[0];
  const drawn = `Held-out BLEU of each model by source length (in buckets of ${to - from + 1} words), `
    + `after ${epochsEach(epochs)} from seed ${seed} on the same batches.`;
  const ranked = models.filter(([, r]) => Number.isFinite(r.long)).sort(([, a], [, b]) => b.long - a.long);
  if (ranked.length === 0) return `${drawn} No held-out source has ${LONG_WORDS} words or more.`;
  const [[leader, best], ...rest] = ranked;
  const leads = rest.map(([kind, r]) => `by ${fmt(best.long - r.long)} over ${MODELS[kind].shortLabel}`);
  return `${drawn} On held-out sources of ${LONG_WORDS} words or more, ${MODELS[leader].shortLabel} leads${leads.length ? `: ${listed(leads)}` : ''}.`;
}
