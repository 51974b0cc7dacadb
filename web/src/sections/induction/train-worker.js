// Section 7's worker: it owns the package and the model on show (the shipped one, trained by
// scripts/train-induction-model.js, or one trained here from scratch), trains in slices of
// SLICE_MS so pause and ablation requests are answered within one, measures every
// MEASURE_EVERY steps, and reports after a slice (at most every REPORT_MS).
//
// page → worker: { type: 'init', modelBase }  load the package and the shipped model
//                { type: 'start', seed }  train a fresh model from scratch
//                { type: 'pause' } | { type: 'resume' } | { type: 'reset' } (the shipped model)
//                { type: 'mask', mask }  the heads the visitor ablated, [numLayers * numHeads] 0/1
//                { type: 'generate', id, prompt, maxNewTokens, temperature, topK, seed }
// worker → page: { type: 'heartbeat' }  every second while init loads (workers/heartbeat.js)
//                { type: 'report', state, source, seed, steps, seconds, history, phase, maps,
//                  masked, ablation }  (see report())
//                { type: 'generation', id, tokens }
//                { type: 'error', message }

import { loadAttention, readSafetensors } from 'attention-wasm';
import { TRAINING_THREADS } from '../../workers/training-threads.js';
import { heartbeatWhile } from '../../workers/heartbeat.js';
import { yieldToMessages } from '../../workers/yield-to-messages.js';
import {
  InductionRun, MAX_STEPS, MEASURE_EVERY, evaluate, headLabel, headScores, phaseChange,
} from './task.js';

const SLICE_MS = 150;
const REPORT_MS = 400;

let attn = null;
let shipped = null; // { run, seconds } of the shipped model
let current = null; // the run on show: { run, seconds, source }
let state = 'loading';
let mask = null; // the visitor's ablation, null for none
let lastReport = 0;

const post = (message) => postMessage(message);

// What removing heads does: each head alone, then all of layer 0 (two previous-token heads in
// layer 0 can stand in for each other); for each, the loss on repeated tokens and the best
// last-layer head's prefix-matching score without it.
function ablation(run) {
  const { numLayers, numHeads } = run.model.config;
  const removals = [
    ...Array.from({ length: numLayers * numHeads }, (_, head) => ({ heads: [head], label: headLabel(head, numHeads) })),
    { heads: Array.from({ length: numHeads }, (_, h) => h), label: 'all of layer 0' },
  ];
  return removals.map(({ heads, label }) => {
    const removed = new Float32Array(numLayers * numHeads).fill(1);
    for (const head of heads) removed[head] = 0;
    const { prefixMatching } = headScores(run.model, run.probe, removed);
    const { repeatedLoss } = evaluate(run.model, run.heldOut, removed);
    return { label, repeatedLoss, prefixMatching: Math.max(...prefixMatching[numLayers - 1]) };
  });
}

// The run on show as the page draws it: its measurements, the phase change, the probe's maps
// and the held-out figures under the visitor's mask, and each head's ablation.
function report() {
  const { run, seconds, source } = current;
  const probe = headScores(run.model, run.probe, mask);
  post({
    type: 'report', state, source, seed: run.seed, steps: run.steps, seconds, history: run.history,
    phase: phaseChange(run.history), maps: probe.maps,
    masked: mask && { ...evaluate(run.model, run.heldOut, mask), previousToken: probe.previousToken, prefixMatching: probe.prefixMatching },
    ablation: ablation(run),
  });
}

async function loadShipped(modelBase) {
  const base = `${modelBase}induction`;
  const [weights, meta] = await Promise.all([
    fetch(`${base}.safetensors`).then((r) => (r.ok ? r.arrayBuffer() : null)),
    fetch(`${base}.json`).then((r) => (r.ok ? r.json() : null)),
  ]);
  if (!weights || !meta) return null;
  const run = new InductionRun(attn, meta.seed);
  run.model.loadStateDict(readSafetensors(weights));
  run.steps = meta.steps;
  run.history = meta.history;
  return { run, seconds: meta.seconds, source: 'shipped' };
}

async function init({ modelBase }) {
  attn = await loadAttention({ threads: TRAINING_THREADS });
  shipped = await loadShipped(modelBase);
  current = shipped;
  state = 'idle';
  if (current) report();
  else post({ type: 'report', state, source: 'none', history: [] });
}

// Trains the run on show in slices until it is paused, replaced, or reaches MAX_STEPS.
async function train() {
  const training = current;
  state = 'training';
  while (state === 'training' && current === training) {
    const t0 = performance.now();
    const { run } = training;
    while (performance.now() - t0 < SLICE_MS && run.steps < MAX_STEPS) {
      run.step();
      // By step, not by time, so a seed's curves are the same in every run.
      if (run.steps % MEASURE_EVERY === 0) run.measure(training.seconds + (performance.now() - t0) / 1000);
    }
    training.seconds += (performance.now() - t0) / 1000;
    const done = run.steps >= MAX_STEPS;
    if (done || performance.now() - lastReport > REPORT_MS) {
      lastReport = performance.now();
      if (done) state = 'done';
      report();
    }
    await yieldToMessages();
  }
}

function replace(next) {
  if (current && current !== shipped) current.run.model.dispose();
  current = next;
}

const HANDLERS = {
  // The page replaces a worker that falls silent while it loads (watched-worker.js).
  init: (m) => heartbeatWhile(init(m)),
  start: ({ seed }) => {
    replace({ run: new InductionRun(attn, seed), seconds: 0, source: 'trained' });
    current.run.measure(0);
    lastReport = 0;
    return train();
  },
  pause: () => {
    if (state !== 'training') return;
    state = 'paused';
    report();
  },
  resume: () => (state === 'paused' ? train() : undefined),
  reset: () => {
    if (!shipped) return;
    replace(shipped);
    state = 'idle';
    report();
  },
  mask: (m) => {
    mask = m.mask.includes(0) ? Float32Array.from(m.mask) : null;
    if (current && state !== 'training') report();
  },
  // Generation without the heads the visitor ablated.
  generate: ({ id, prompt, maxNewTokens, temperature, topK, seed }) => {
    if (!current) return;
    const { tokens } = current.run.model.generate(
      { data: Int32Array.from(prompt), shape: [1, prompt.length] },
      { maxNewTokens, temperature, topK, seed, ...(mask && { headMask: mask }) },
    );
    post({ type: 'generation', id, tokens: Array.from(tokens.data) });
  },
};

addEventListener('message', async ({ data: message }) => {
  try {
    await HANDLERS[message.type]?.(message);
  } catch (error) {
    post({ type: 'error', message: error?.message ?? String(error) });
  }
});
