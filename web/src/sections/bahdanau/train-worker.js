// The section's training worker: it owns the package, the task's data and the models, so the
// page never waits on a training step. It trains in slices of ~SLICE_MS and yields between
// them (a MessageChannel hop, not a clamped timer), so pause, translate and reset requests are
// answered within one slice.
//
// page → worker: { type: 'init', task, seed, attention, modelBase }  load + shipped model
//                { type: 'start' }   train from scratch (fresh weights from the seed)
//                { type: 'pause' } | { type: 'resume' } | { type: 'reset' } (back to the shipped model)
//                { type: 'config', task?, seed?, attention? }  stops training; task reloads
//                { type: 'translate', id, texts }
//                { type: 'compare', epochs }  trains with and without attention, side by side
// worker → page: { type: 'state', state, run, task, shipped?, epochs? }
//                { type: 'progress', run, steps, epoch, loss, tokensPerSecond, seconds }
//                { type: 'eval', run, steps, seconds, bleu, exact, byLength }
//                { type: 'probe', run, steps, result }
//                { type: 'translation', id, run, results }
//                { type: 'compare-progress', epoch, epochs } | { type: 'compare', results }
//                { type: 'error', message }

import { loadAttention, readSafetensors } from 'attention-wasm';
import { prepareTask, taskSpec } from '../../../shared/translation/tasks.js';
import { EPOCHS as TRAIN_EPOCHS, Trainer } from '../../../shared/translation/trainer.js';

const SLICE_MS = 120;
const PROBE_EVERY_MS = 400;
const EVAL_EVERY_MS = 1000;

let attn = null;
let config = { task: 'fra-eng', seed: 0, attention: true, modelBase: '' };
let data = null;
let trainer = null;
let state = 'loading';
let run = 0; // bumped whenever the model is replaced, so the page can drop stale messages
let clock = null; // { seconds, since } training time, paused time excluded
let lastProbe = 0;
let lastEval = 0;
let compare = null;

const post = (message) => postMessage({ run, ...message });
const setState = (next, extra = {}) => {
  state = next;
  post({ type: 'state', state, task: config.task, epochs: TRAIN_EPOCHS, ...extra });
};
const seconds = () => (clock ? clock.seconds + (clock.since === null ? 0 : (performance.now() - clock.since) / 1000) : 0);

const yieldNow = (() => {
  const channel = new MessageChannel();
  let pending = null;
  channel.port1.onmessage = () => {
    const resolve = pending;
    pending = null;
    resolve();
  };
  return () => new Promise((resolve) => {
    pending = resolve;
    channel.port2.postMessage(0);
  });
})();

function replaceTrainer(next) {
  trainer?.dispose();
  trainer = next;
  run += 1;
  clock = null;
}

async function loadShipped() {
  const base = `${config.modelBase}bahdanau-${config.task}`;
  try {
    const [weights, meta] = await Promise.all([
      fetch(`${base}.safetensors`).then((r) => (r.ok ? r.arrayBuffer() : null)),
      fetch(`${base}.json`).then((r) => (r.ok ? r.json() : null)),
    ]);
    if (!weights || !meta) return null;
    // The shipped vocabularies must be the ones this page builds, or its token ids mean nothing.
    const same = (a, b) => a.length === b.length && a.every((t, i) => t === b[i]);
    if (!same(meta.srcVocab, data.srcVocab.toJSON()) || !same(meta.tgtVocab, data.tgtVocab.toJSON())) {
      throw new Error(`the shipped model for ${config.task} was trained on other vocabularies: rerun scripts/train-page-model.js`);
    }
    const shipped = new Trainer(attn, data, { seed: meta.seed, attention: true, model: meta.model, training: meta.training });
    shipped.model.loadStateDict(readSafetensors(weights));
    shipped.steps = meta.steps;
    shipped.epoch = meta.epochs;
    return { trainer: shipped, meta };
  } catch (error) {
    post({ type: 'error', message: `could not load the shipped model: ${error.message}` });
    return null;
  }
}

// The model the page shows when nothing is training: the shipped one, else an untrained one.
async function showShipped() {
  compare = null;
  data = prepareTask(config.task);
  const loaded = await loadShipped();
  replaceTrainer(loaded?.trainer ?? new Trainer(attn, data, { seed: config.seed, attention: config.attention }));
  setState('idle', { shipped: Boolean(loaded), steps: trainer.steps, epoch: trainer.epoch });
  report();
}

function report() {
  post({ type: 'probe', steps: trainer.steps, result: probe() });
  post({ type: 'eval', steps: trainer.steps, seconds: seconds(), epoch: trainer.progress, ...trainer.evaluate() });
}

const probe = () => trainer.translateText([taskSpec(config.task).probe], taskSpec(config.task).prepare)[0];

async function train() {
  const myRun = run;
  while (state === 'running' && run === myRun) {
    const t0 = performance.now();
    let loss = 0;
    let tokens = 0;
    let steps = 0;
    while (performance.now() - t0 < SLICE_MS && trainer.epoch < TRAIN_EPOCHS) {
      const step = trainer.trainStep();
      loss += step.loss;
      tokens += step.tokens;
      steps += 1;
    }
    const elapsed = (performance.now() - t0) / 1000;
    const now = seconds();
    post({ type: 'progress', steps: trainer.steps, epoch: trainer.progress, loss: loss / steps, tokensPerSecond: tokens / elapsed, seconds: now });
    const finished = trainer.epoch >= TRAIN_EPOCHS;
    if (finished || performance.now() - lastProbe > PROBE_EVERY_MS) {
      lastProbe = performance.now();
      post({ type: 'probe', steps: trainer.steps, result: probe() });
    }
    if (finished || performance.now() - lastEval > EVAL_EVERY_MS) {
      lastEval = performance.now();
      post({ type: 'eval', steps: trainer.steps, seconds: now, epoch: trainer.progress, ...trainer.evaluate() });
    }
    if (finished) {
      clock.seconds = seconds();
      clock.since = null;
      setState('done', { steps: trainer.steps });
      return;
    }
    await yieldNow();
  }
}

function startFresh() {
  replaceTrainer(new Trainer(attn, data, { seed: config.seed, attention: config.attention }));
  clock = { seconds: 0, since: performance.now() };
  lastProbe = 0;
  lastEval = performance.now();
  setState('running', { steps: 0 });
  post({ type: 'probe', steps: 0, result: probe() });
  post({ type: 'eval', steps: 0, seconds: 0, epoch: 0, ...trainer.evaluate() });
  return train();
}

// With vs without attention: two fresh models, one step each in turn, same seed and batches.
async function runCompare(epochs) {
  const pair = [true, false].map((attention) => new Trainer(attn, data, { seed: config.seed, attention }));
  compare = pair;
  setState('comparing');
  const myRun = run;
  while (pair[0].epoch < epochs) {
    const t0 = performance.now();
    while (performance.now() - t0 < SLICE_MS && pair[0].epoch < epochs) for (const t of pair) t.trainStep();
    post({ type: 'compare-progress', epoch: pair[0].progress, epochs });
    await yieldNow();
    if (compare !== pair || run !== myRun) {
      pair.forEach((t) => t.dispose());
      return;
    }
  }
  const results = pair.map((t) => ({ attention: t.attention, steps: t.steps, ...t.evaluate() }));
  pair.forEach((t) => t.dispose());
  compare = null;
  post({ type: 'compare', epochs, results });
  setState(trainer.epoch >= TRAIN_EPOCHS || trainer.steps === 0 ? 'idle' : 'paused', { steps: trainer.steps });
}

async function handle(message) {
  switch (message.type) {
    case 'init':
      config = { ...config, ...message };
      attn = await loadAttention();
      await showShipped();
      break;
    case 'start':
      if (state === 'loading') return;
      compare = null;
      await startFresh();
      break;
    case 'pause':
      if (state !== 'running') return;
      clock.seconds = seconds();
      clock.since = null;
      setState('paused', { steps: trainer.steps });
      break;
    case 'resume':
      if (state !== 'paused' || trainer.epoch >= TRAIN_EPOCHS) return;
      clock ??= { seconds: 0, since: null };
      clock.since = performance.now();
      setState('running', { steps: trainer.steps });
      await train();
      break;
    case 'reset':
      if (state === 'loading') return;
      setState('loading');
      await showShipped();
      break;
    case 'config': {
      const { type, ...patch } = message;
      const taskChanged = patch.task !== undefined && patch.task !== config.task;
      config = { ...config, ...patch };
      if (taskChanged) {
        setState('loading');
        await showShipped();
      } else if (state === 'running') {
        clock.seconds = seconds();
        clock.since = null;
        setState('paused', { steps: trainer.steps });
      }
      break;
    }
    case 'translate':
      if (!trainer) return;
      post({ type: 'translation', id: message.id, results: trainer.translateText(message.texts, taskSpec(config.task).prepare) });
      break;
    case 'compare':
      if (state === 'loading' || compare) return;
      if (state === 'running') {
        clock.seconds = seconds();
        clock.since = null;
      }
      await runCompare(message.epochs);
      break;
    default:
  }
}

addEventListener('message', ({ data: message }) => {
  handle(message).catch((error) => post({ type: 'error', message: error?.message ?? String(error) }));
});
