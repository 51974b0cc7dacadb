// What the training worker does (train-worker.js maps its messages onto these operations): it
// holds the task's data and the model on show, trains it (training-loop.js, which reports
// progress, held-out BLEU and the probe's alignment as it goes) and runs the comparison of
// models by source length (attention-comparison.js). Every report goes to the page by
// postMessage, tagged with the run.

import { loadAttention } from 'attention-wasm';
import { TRAINING_THREADS } from '../../workers/training-threads.js';
import { prepareTask, taskSpec } from '../../../shared/translation/tasks.js';
import { EPOCHS as TRAIN_EPOCHS, Trainer } from '../../../shared/translation/trainer.js';
import { COMPARE_TASK, trainSideBySide } from './attention-comparison.js';
import { loadShippedModel } from './shipped-model.js';
import { Stopwatch } from './stopwatch.js';
import { restartReportSchedule, trainInSlices } from './training-loop.js';

let attn = null;
let config = { task: 'fra-eng', seed: 0, kind: 'bahdanau', modelBase: '' };
let data = null;
let trainer = null;
let state = 'loading';
let run = 0; // bumped whenever the model is replaced, so the page can drop stale messages
let clock = null; // a Stopwatch of the current model's training time
let comparison = null; // the running comparison's token, null when none runs
let longData = null; // the long-sentence task the comparison trains on, prepared once

const post = (message) => postMessage({ run, ...message });

/** Tells the page that handling a message failed. */
export const reportError = (error) => post({ type: 'error', message: error?.message ?? String(error) });
const setState = (next, extra = {}) => {
  state = next;
  post({ type: 'state', state, task: config.task, kind: config.kind, epochs: TRAIN_EPOCHS, ...extra });
};
const seconds = () => clock?.seconds ?? 0;

function replaceTrainer(next) {
  trainer?.dispose();
  trainer = next;
  run += 1;
  clock = null;
}

// The model the page shows when nothing is training: the shipped one of the chosen kind and
// task, else (a kind that ships none) an untrained one.
async function showShipped() {
  comparison = null;
  data = prepareTask(config.task);
  const shipped = await loadShippedModel(attn, data, config).catch((error) => {
    post({ type: 'error', message: `could not load the shipped model: ${error.message}` });
    return null;
  });
  replaceTrainer(shipped ?? new Trainer(attn, data, { seed: config.seed, kind: config.kind }));
  setState('idle', { shipped: Boolean(shipped), steps: trainer.steps, epoch: trainer.epoch });
  report();
}

function report() {
  post({ type: 'probe', steps: trainer.steps, result: probe() });
  post({ type: 'eval', steps: trainer.steps, seconds: seconds(), epoch: trainer.progress, ...trainer.evaluate() });
}

// The probe's translation with every head (a Transformer's), which the section draws as it trains.
const probe = () => trainer.translateText([taskSpec(config.task).probe], taskSpec(config.task).prepare, { heads: true })[0];

async function train() {
  const myRun = run;
  const stillRunning = () => state === 'running' && run === myRun;
  if (await trainInSlices(trainer, TRAIN_EPOCHS, { stillRunning, seconds, post, probe })) {
    clock.stop();
    setState('done', { steps: trainer.steps });
  }
}

/** Loads the package and shows the task's shipped model. */
export async function init(message) {
  config = { ...config, ...message };
  attn = await loadAttention({ threads: TRAINING_THREADS });
  await showShipped();
}

/** Trains a fresh model (weights from the seed) from scratch. */
export async function start() {
  if (state === 'loading') return;
  comparison = null;
  replaceTrainer(new Trainer(attn, data, { seed: config.seed, kind: config.kind }));
  clock = new Stopwatch();
  clock.start();
  restartReportSchedule();
  setState('running', { steps: 0 });
  post({ type: 'probe', steps: 0, result: probe() });
  post({ type: 'eval', steps: 0, seconds: 0, epoch: 0, ...trainer.evaluate() });
  await train();
}

export function pause() {
  if (state !== 'running') return;
  clock.stop();
  setState('paused', { steps: trainer.steps });
}

export async function resume() {
  if (state !== 'paused' || trainer.epoch >= TRAIN_EPOCHS) return;
  clock ??= new Stopwatch();
  clock.start();
  setState('running', { steps: trainer.steps });
  await train();
}

/** Back to the shipped model of the kind on show. */
export async function reset() {
  if (state === 'loading') return;
  setState('loading');
  await showShipped();
}

/**
 * A new task or model reloads (the model shown becomes the shipped one, or an untrained one of
 * the new kind); a new seed pauses a training run (the next start uses it).
 */
export async function configure(patch) {
  const reload = (patch.task !== undefined && patch.task !== config.task)
    || (patch.kind !== undefined && patch.kind !== config.kind);
  config = { ...config, ...patch };
  if (reload) {
    setState('loading');
    await showShipped();
  } else if (state === 'running') {
    pause();
  }
}

export function translate(id, texts) {
  if (!trainer) return;
  post({ type: 'translation', id, results: trainer.translateText(texts, taskSpec(config.task).prepare) });
}

/**
 * Trains fresh models of `kinds` side by side and reports their BLEU by length. They train
 * on the long-sentence task whatever task is on show: the fixed-vector bottleneck of the model
 * without attention only shows on sentences longer than the short corpus's.
 */
export async function compareModels(epochs, kinds) {
  if (state === 'loading' || comparison) return;
  if (state === 'running') clock.stop();
  const token = {};
  comparison = token;
  const myRun = run;
  const { seed } = config; // a new seed meanwhile waits for the next run
  setState('comparing');
  longData ??= prepareTask(COMPARE_TASK);
  try {
    const results = await trainSideBySide(attn, longData, {
      kinds,
      seed,
      epochs,
      onProgress: (epoch) => post({ type: 'compare-progress', epoch, epochs }),
      // A reset, a new task or a fresh start replaces the model on show and drops the comparison.
      cancelled: () => comparison !== token || run !== myRun,
    });
    if (results) post({ type: 'compare', epochs, seed, results });
  } finally {
    // Finished or failed (not replaced meanwhile): the model on show takes over again.
    if (comparison === token) {
      comparison = null;
      setState(trainer.epoch >= TRAIN_EPOCHS || trainer.steps === 0 ? 'idle' : 'paused', { steps: trainer.steps });
    }
  }
}
