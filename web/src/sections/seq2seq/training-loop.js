// The training loop of the model on show: the worker trains for a slice of ~SLICE_MS, reports,
// then yields to its messages, so pause, translate and reset requests are answered within one
// slice. After each slice: its progress; at most every PROBE_EVERY_MS the probe's alignment and
// every EVAL_EVERY_MS held-out BLEU (both also at the end), so reporting stays a small share of
// the training time.

import { yieldToMessages } from '../../workers/yield-to-messages.js';

export const SLICE_MS = 120;
const PROBE_EVERY_MS = 400;
const EVAL_EVERY_MS = 1000;

// Kept across pauses: a resumed run reports on the same schedule.
let lastProbe = 0;
let lastEval = 0;

/** A fresh run, whose start reported both: the probe after the first slice, BLEU a second later. */
export function restartReportSchedule() {
  lastProbe = 0;
  lastEval = performance.now();
}

/**
 * Trains `trainer` for one slice (steps until SLICE_MS have passed or it reaches `epochs`): the
 * slice's mean loss per step and its tokens per second.
 */
export function trainSlice(trainer, epochs) {
  const t0 = performance.now();
  let loss = 0;
  let tokens = 0;
  let steps = 0;
  while (performance.now() - t0 < SLICE_MS && trainer.epoch < epochs) {
    const step = trainer.trainStep();
    loss += step.loss;
    tokens += step.tokens;
    steps += 1;
  }
  const elapsed = (performance.now() - t0) / 1000;
  return { loss: loss / steps, tokensPerSecond: tokens / elapsed };
}

/**
 * Trains in slices while stillRunning() (checked before each slice) until `epochs`, posting the
 * reports with post(); seconds() is the run's training time, probe() the probe's translation.
 * True when it reached `epochs`, false when stopped.
 */
export async function trainInSlices(trainer, epochs, { stillRunning, seconds, post, probe }) {
  while (stillRunning()) {
    const { loss, tokensPerSecond } = trainSlice(trainer, epochs);
    const now = seconds();
    post({ type: 'progress', steps: trainer.steps, epoch: trainer.progress, loss, tokensPerSecond, seconds: now });
    const finished = trainer.epoch >= epochs;
    if (finished || performance.now() - lastProbe > PROBE_EVERY_MS) {
      lastProbe = performance.now();
      post({ type: 'probe', steps: trainer.steps, result: probe() });
    }
    if (finished || performance.now() - lastEval > EVAL_EVERY_MS) {
      lastEval = performance.now();
      post({ type: 'eval', steps: trainer.steps, seconds: now, epoch: trainer.progress, ...trainer.evaluate() });
    }
    if (finished) return true;
    await yieldToMessages();
  }
  return false;
}
