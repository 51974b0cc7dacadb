// The last run of each kind of model trained on this page, per task: the BLEU curves that the
// page's seq2seq sections draw, dashed, beside the run on show (Bahdanau's beside the
// Transformer's, say). Each section trains in a worker of its own, so the log lives on the page,
// one for all of them; a run enters it as it trains, so a paused or finished run in one section
// shows in another at once.

import { MODELS } from '../../../shared/translation/trainer.js';

/** A log of runs: { record(view), beside(view, kinds), missing(view, kinds), onChange(listener) }. */
export function runLog() {
  const runs = {}; // task -> kind -> [{ seconds, bleu, steps }]
  const listeners = new Set();
  const others = ({ kind }, kinds) => kinds.filter((k) => k !== kind);
  return {
    /**
     * Keeps the view's BLEU curve as the last run of its kind on its task, once it trained here:
     * a shipped model (no loss measured here) or a run's first measurement is no curve.
     */
    record(view) {
      if (!view.kind || !view.task || view.losses.length === 0 || view.bleus.length < 2) return;
      runs[view.task] = { ...runs[view.task], [view.kind]: [...view.bleus] };
      for (const listener of listeners) listener();
    },
    /**
     * The curves drawn beside `view`: the last run on its task of each of `kinds` but its own
     * kind. [{ kind, label, points: [{ seconds, bleu, steps }] }].
     */
    beside(view, kinds) {
      return others(view, kinds).filter((kind) => runs[view.task]?.[kind])
        .map((kind) => ({ kind, label: `${MODELS[kind].label}, its last run on this page`, points: runs[view.task][kind] }));
    },
    /** The kinds of `kinds` (not the view's own) with no run on the view's task yet. */
    missing(view, kinds) {
      return others(view, kinds).filter((kind) => !runs[view.task]?.[kind]);
    },
    /** Calls listener() whenever a run is recorded. */
    onChange(listener) {
      listeners.add(listener);
    },
  };
}

/** The page's log, which every seq2seq section reads and writes. */
export const PAGE_RUNS = runLog();
