// The induction-heads experiment of section 7, without a page: the task (random tokens ending in
// a segment and its repeat), the model and optimiser, and Olsson et al.'s (2022) two head scores.
// The page's worker and the Node learning test (tests/js/induction.test.js) both run it.
//
// Why this task: the segment's length varies per sequence, so no fixed offset finds the earlier
// copy; only "attend to the token after an earlier occurrence of the current token" (an
// induction head: a previous-token head in layer 0 composed with a prefix-matching head in
// layer 1) predicts the repeat. With one fixed repeat distance a model copies from i − distance
// by position alone and forms no induction head.

import { uniform } from '../../../shared/random.js';

export const TASK = Object.freeze({
  vocabSize: 64,
  length: 24, // the model's inputs; a sequence is length + 1 tokens (inputs and next tokens)
  minSegment: 4,
  maxSegment: 12,
  batch: 32,
});

// Two layers of attention only (no MLP), two heads each, rotary positions, GPT-2's
// initialisation (std 0.02): the smallest model in which an induction head can form, and the
// settings under which it forms fastest in the calibration (docs/causal-lm.md, "Induction heads").
export const MODEL = Object.freeze({
  vocabSize: TASK.vocabSize,
  hiddenSize: 32,
  numLayers: 2,
  numHeads: 2,
  intermediateSize: 0,
  positions: 'rotary',
  maxPositions: 0,
});

export const OPTIMISER = Object.freeze({ lr: 1e-3, weightDecay: 0.01, clip: 1 });

/** Where the page stops training: well past the phase change (700-1100 steps in calibration). */
export const MAX_STEPS = 3000;

/** Steps between two measurements of a run (held-out losses, head scores). */
export const MEASURE_EVERY = 25;

/** "layer l · head h" of head `index` in [numLayers * heads] order. */
export const headLabel = (index, heads) => `layer ${Math.floor(index / heads)} · head ${index % heads}`;

/** The 64 tokens as the page writes them, one character each. */
export const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/';

/** A fresh model of the experiment, initialised from `seed`. */
export const createModel = (attn, seed) => attn.CausalLM.gpt2({ ...MODEL, seed });

// `count` distinct tokens drawn from next().
function distinctTokens(next, count) {
  const chosen = new Set();
  while (chosen.size < count) chosen.add(Math.floor(next() * TASK.vocabSize));
  return [...chosen];
}

/**
 * A batch of task sequences: tokens [batch, length + 1], each random tokens (drawn with
 * replacement) ending in a segment of minSegment..maxSegment tokens and its repeat; segments[b]
 * is row b's segment length.
 */
export function taskBatch(next, batch = TASK.batch) {
  const steps = TASK.length + 1;
  const data = new Int32Array(batch * steps);
  const segments = [];
  for (let b = 0; b < batch; b++) {
    const span = TASK.maxSegment - TASK.minSegment + 1;
    const segment = TASK.minSegment + Math.floor(next() * span);
    const row = data.subarray(b * steps, (b + 1) * steps);
    for (let t = 0; t < steps - segment; t++) row[t] = Math.floor(next() * TASK.vocabSize);
    row.copyWithin(steps - segment, steps - 2 * segment, steps - segment);
    segments.push(segment);
  }
  return { tokens: { data, shape: [batch, steps] }, segments };
}

/**
 * The targets (positions t >= 1 of a sequence) by kind: `first`, the segment's first occurrence;
 * `repeated`, its repeat after the repeat's first token (each predictable by copying: its
 * previous token occurred before, followed by it).
 */
export function targetKinds(segment) {
  const steps = TASK.length + 1;
  const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);
  return {
    first: range(Math.max(1, steps - 2 * segment), steps - segment),
    repeated: range(steps - segment + 1, steps),
  };
}

/** The sequences whose scores and losses the page plots: a fixed held-out batch. */
export const heldOut = (seed = 12345) => taskBatch(uniform(seed), 64);

/**
 * The held-out losses and accuracy: mean cross-entropy on the first occurrences' and on the
 * repeated tokens, and the share of repeated tokens predicted (argmax) right; headMask, when
 * given, ablates heads.
 */
export function evaluate(model, { tokens, segments }, headMask) {
  const [batch, steps] = tokens.shape;
  const inputs = new Int32Array(batch * (steps - 1));
  for (let b = 0; b < batch; b++) inputs.set(tokens.data.subarray(b * steps, (b + 1) * steps - 1), b * (steps - 1));
  const { logits } = model.forward({ data: inputs, shape: [batch, steps - 1] }, headMask ? { headMask } : {});
  const vocab = logits.shape[2];
  const sums = { first: 0, repeated: 0 };
  const counts = { first: 0, repeated: 0 };
  let right = 0;
  for (let b = 0; b < batch; b++) {
    const kinds = targetKinds(segments[b]);
    for (const kind of ['first', 'repeated']) {
      for (const t of kinds[kind]) {
        const row = logits.data.subarray((b * (steps - 1) + t - 1) * vocab, (b * (steps - 1) + t) * vocab);
        const target = tokens.data[b * steps + t];
        let max = -Infinity;
        let best = 0;
        for (let v = 0; v < vocab; v++) if (row[v] > max) [max, best] = [row[v], v];
        let sum = 0;
        for (let v = 0; v < vocab; v++) sum += Math.exp(row[v] - max);
        sums[kind] += Math.log(sum) + max - row[target];
        counts[kind] += 1;
        if (kind === 'repeated' && best === target) right += 1;
      }
    }
  }
  return {
    firstLoss: sums.first / counts.first,
    repeatedLoss: sums.repeated / counts.repeated,
    repeatedAccuracy: right / counts.repeated,
  };
}

/** Olsson et al.'s probe: `batch` rows of `half` distinct random tokens, repeated once. */
export function probeBatch(seed = 777, batch = 16, half = TASK.length / 2) {
  const next = uniform(seed);
  const data = new Int32Array(batch * 2 * half);
  for (let b = 0; b < batch; b++) {
    const tokens = distinctTokens(next, half);
    data.set(tokens, b * 2 * half);
    data.set(tokens, b * 2 * half + half);
  }
  return { data, shape: [batch, 2 * half] };
}

/**
 * Every head's two scores on a probe (probeBatch): previousToken, its mean weight from query i
 * on key i − 1 (i >= 1); prefixMatching, its mean weight from a query in the repeat on the key
 * after the query's earlier occurrence (i − half + 1). Each is [numLayers][numHeads]; maps, the
 * attention maps of the forward, for the page to draw. headMask, when given, ablates heads.
 */
export function headScores(model, probe, headMask) {
  const { attention } = model.forward(probe, headMask ? { attention: true, headMask } : { attention: true });
  const [batch, steps] = probe.shape;
  const half = steps / 2;
  const score = (map, h, pairs) => {
    let sum = 0;
    let count = 0;
    for (let b = 0; b < batch; b++) {
      const base = ((b * map.shape[1] + h) * steps) * steps;
      for (const [i, j] of pairs) {
        sum += map.data[base + i * steps + j];
        count += 1;
      }
    }
    return sum / count;
  };
  const previous = Array.from({ length: steps - 1 }, (_, k) => [k + 1, k]);
  const prefix = Array.from({ length: half }, (_, k) => [half + k, k + 1]);
  const heads = attention[0].shape[1];
  const each = (pairs) => attention.map((map) => Array.from({ length: heads }, (_, h) => score(map, h, pairs)));
  return { previousToken: each(previous), prefixMatching: each(prefix), maps: attention };
}

/**
 * The first measurement of `history` ([{ step, seconds, firstLoss, repeatedLoss }]) at which
 * the repeated tokens' loss is at most half the first occurrences': the model copies from the
 * earlier occurrence (before it, both are near ln 64, as unpredictable as each other). null
 * until then.
 */
export const phaseChange = (history) => history.find((m) => m.repeatedLoss <= m.firstLoss / 2) ?? null;

/**
 * One training run of the experiment: a model from `seed`, its own stream of task batches, and
 * the measurements so far (measure()).
 */
export class InductionRun {
  constructor(attn, seed) {
    this.seed = seed;
    this.model = createModel(attn, seed);
    this.next = uniform(seed * 7919 + 1);
    this.steps = 0;
    this.history = [];
    this.heldOut = heldOut();
    this.probe = probeBatch();
  }

  /** One AdamW step on a fresh batch; returns its loss. */
  step() {
    this.steps += 1;
    return this.model.trainStep(taskBatch(this.next).tokens, OPTIMISER);
  }

  /**
   * The held-out losses and accuracy and every head's scores now (`seconds` of training so
   * far), appended to history; `maps` (the probe's attention) is returned, not kept.
   */
  measure(seconds) {
    const { maps, ...scores } = headScores(this.model, this.probe);
    const measurement = { step: this.steps, seconds, ...evaluate(this.model, this.heldOut), ...scores };
    this.history.push(measurement);
    return { measurement, maps };
  }
}
