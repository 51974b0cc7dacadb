// The Transformer section of `npm run bench` (issue 21's targets), d2l 11.7's encoder-decoder
// at d2l's size (batch 128, numHiddens 256, 2 blocks, 4 heads, FFN 64, 10 source and 10 target
// steps, vocabularies of 200, Adam lr 0.001, clip 1) and, alone in --quick, a small one:
//   1. a training step (forward, backward, clip, Adam): our SIMD and scalar wasm builds, our
//      native build, ours on 2 threads (the threaded build, in a child process: wasm-server.js),
//      PyTorch CPU on 1 and 2 threads (d2l's classes from scripts/fixtures/transformer.py, served
//      by transformer_torch.py beside this file). Dropout 0 for all: PyTorch's masks cannot be
//      drawn here, and every runner's loss must equal ours before it is timed. Ours at d2l's
//      dropout 0.2 is an extra, unchecked row;
//   2. our own limit: the step's matrix-product FLOPs (trainingStepFlops) per second against the
//      2x16 GEMM micro-kernel's GFLOP/s, measured in this process (shared/microkernel.js);
//   3. cached decoding: greedy translate() of 20 tokens against 20 forward() calls over the
//      growing prefix, the tokens checked equal;
//   4. the peak wasm heap of training, on a fresh instance.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { oneLine } from '../shared/check.js';
import { cpuName } from '../shared/machine.js';
import { microkernelThroughput, relaxedMicrokernelThroughput } from '../shared/microkernel.js';
import { runAlone } from '../shared/standalone.js';
import {
  BOS, PAD, batchOf, ours, outsideRunners, pytorchServer, server, startRunners, stepTable, timeRunners, writeTask,
} from './training.js';

const STEP = { pad: PAD, lr: 0.001, clip: 1 }; // d2l 11.7's lr, and its trainer's gradient_clip_val
const DROPOUT = 0.2; // d2l 11.7's, for the extra row
const DECODE_LEN = 20;
const SIMD = 'ours: wasm SIMD', THREADS = 'ours: wasm SIMD, 2 threads';
const WASM_SERVER = fileURLToPath(new URL('./wasm-server.js', import.meta.url));
const TORCH_SCRIPT = fileURLToPath(new URL('./transformer_torch.py', import.meta.url));
const MiB = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export const SIZES = [
  { label: "d2l's size", batch: 128, steps: 10, config: { srcVocabSize: 200, tgtVocabSize: 200, numHiddens: 256, ffnNumHiddens: 64, numHeads: 4, numBlks: 2 } },
  { label: 'small', batch: 64, steps: 10, config: { srcVocabSize: 200, tgtVocabSize: 200, numHiddens: 64, ffnNumHiddens: 64, numHeads: 4, numBlks: 2 } },
];

/**
 * The matrix-product FLOPs of one training step (2 per multiply-add), for a batch of B
 * sequences of Ts source and Tt target steps; H = numHiddens, F = ffnNumHiddens, V = tgtVocab.
 * Forward, per layer:
 *   - a projection of N rows by an [out, in] weight: 2·N·in·out (W_q, W_k, W_v, W_o: H x H;
 *     the FFN's dense1 H -> F and dense2 F -> H; the decoder's dense H -> V);
 *   - attention of Tq queries over Tk keys in every sequence, all heads together: scores
 *     2·B·Tq·Tk·H and pooling (weights times values) 2·B·Tq·Tk·H. The decoder's causal scores are
 *     counted in full, as d2l computes them (at T = 10 the scores are ~2% of the step).
 * An encoder block (Ns = B·Ts rows): 4 projections, self-attention Ts x Ts, the FFN.
 * A decoder block (Nt = B·Tt rows): self-attention (4 projections of Nt rows, Tt x Tt), cross-
 * attention (W_q and W_o on Nt rows, W_k and W_v on the encoder's Ns rows, Tt x Ts), the FFN.
 * Backward: every product C = A·B costs twice its forward, dA = dC·Bᵀ and dB = Aᵀ·dC, and both
 * are needed (weights are trained, and every input has a gradient down to the embeddings), so a
 * step is 3x the forward. Not counted: embeddings (gathers), LayerNorm, softmax, ReLU, the loss,
 * clipping and Adam (elementwise), and any product the backward recomputes.
 */
export function trainingStepFlops({ batch: B, srcSteps: Ts, tgtSteps: Tt, config: c }) {
  const { numHiddens: H, ffnNumHiddens: F, numBlks: L, tgtVocabSize: V } = c;
  const Ns = B * Ts, Nt = B * Tt;
  const project = (rows, inputs, outputs) => 2 * rows * inputs * outputs;
  const attend = (Tq, Tk) => 2 * B * Tq * Tk * H + 2 * B * Tq * Tk * H;
  const ffn = (rows) => project(rows, H, F) + project(rows, F, H);
  const encoderBlock = 4 * project(Ns, H, H) + attend(Ts, Ts) + ffn(Ns);
  const decoderBlock = 4 * project(Nt, H, H) + attend(Tt, Tt)
    + 2 * project(Nt, H, H) + 2 * project(Ns, H, H) + attend(Tt, Ts) + ffn(Nt);
  const forward = L * (encoderBlock + decoderBlock) + project(Nt, H, V);
  return 3 * forward;
}

const taskOf = (size) => ({ ...size, srcSteps: size.steps, tgtSteps: size.steps });
const describe = ({ label, batch, steps, config: c }) =>
  `${label} (B ${batch}, H ${c.numHiddens}, FFN ${c.ffnNumHiddens}, ${c.numBlks} blocks, ${c.numHeads} heads, T ${steps})`;

// A runner started only if it can be: a failure to start is a line, not the end of the section.
async function optional(log, name, make) {
  try {
    return await make();
  } catch (error) {
    log(`${name}: skipped (${oneLine(error)})`);
    return null;
  }
}

// 1. The training step: every runner from the same weights and batch, timed in turns.
async function timeTrainingStep({ simd, scalar, size, native, torch, quick, log }) {
  const batch = batchOf(size.batch, size.steps, size.config.srcVocabSize, 7);
  const model = (attn, dropout = 0) => new attn.Transformer({ ...size.config, dropout, seed: 1 });
  const first = ours(SIMD, model(simd), batch, STEP);
  const weights = first.model.stateDict();
  const task = writeTask(`transformer-${size.config.numHiddens}-${size.config.ffnNumHiddens}`, {
    model: 'Transformer', config: { ...size.config, dropout: 0 }, batch: size.batch, srcSteps: size.steps,
    tgtSteps: size.steps, ...STEP,
  }, batch, first.model.parameters, weights);
  const two = availableParallelism() >= 2;
  const runners = await startRunners([
    () => first,
    () => ours('ours: wasm scalar', model(scalar).loadStateDict(weights), batch, STEP),
    () => Object.assign(ours(`${SIMD}, dropout ${DROPOUT} (not loss-checked)`, model(simd, DROPOUT).loadStateDict(weights), batch, STEP),
      { unchecked: true }),
    () => native && server('ours: native (g++ -march=native)', native, ['transformer', ...task]),
    // The parent's Node and flags (Node 20's relaxed-SIMD flag, which Node 24 refuses).
    () => two && optional(log, THREADS, () => server(THREADS, process.execPath, [...process.execArgv, WASM_SERVER, ...task, '2'])),
    () => torch === true && pytorchServer(TORCH_SCRIPT, task, 1),
    () => torch === true && two && optional(log, 'PyTorch CPU, 2 threads', () => pytorchServer(TORCH_SCRIPT, task, 2)),
  ]);
  const timed = await timeRunners(`Transformer ${size.label}`, runners, { rounds: quick ? 5 : 7, sampleMs: 200 });
  return runners.map(({ name }, i) => ({ size: size.label, runner: name, ...timed[i] }));
}

// 2. Our own limit: the micro-kernel compiled as the SIMD build is (relaxed SIMD's FMA or not).
async function microkernel(simd) {
  return simd.relaxedSimd ? relaxedMicrokernelThroughput() : microkernelThroughput();
}

// 3. Cached greedy decoding against re-running the model over the prefix at every step.
async function timeDecoding({ simd, size, batch: B, quick }) {
  const model = new simd.Transformer({ ...size.config, seed: 1 });
  try {
    const { src, lens } = batchOf(B, size.steps, size.config.srcVocabSize, 11);
    const V = size.config.tgtVocabSize;
    // forward() over bos and the tokens so far, the last position's argmax appended: 20 calls.
    const rerun = () => {
      const tokens = new Int32Array(B * DECODE_LEN);
      for (let t = 1; t <= DECODE_LEN; t++) {
        const prefix = new Int32Array(B * t);
        for (let b = 0; b < B; b++) {
          prefix[b * t] = BOS;
          prefix.set(tokens.subarray(b * DECODE_LEN, b * DECODE_LEN + t - 1), b * t + 1);
        }
        const { data } = model.forward(src, lens, { data: prefix, shape: [B, t] }).logits;
        for (let b = 0; b < B; b++) {
          const row = data.subarray((b * t + t - 1) * V, (b * t + t) * V);
          let best = 0;
          for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
          tokens[b * DECODE_LEN + t - 1] = best;
        }
      }
      return tokens;
    };
    const expected = rerun();
    // An eos that never comes, so that translate() runs all 20 steps for every row as the
    // re-run does: a token id the re-run never produced (pad and bos excluded).
    const used = new Set(expected);
    const eos = Array.from({ length: V }, (_, v) => v).find((v) => v !== PAD && v !== BOS && !used.has(v));
    if (eos === undefined) throw new Error(`Transformer decoding, ${size.label}, B ${B}: every token id appears in the greedy run; no eos can be left out`);
    const cached = () => model.translate(src, lens, { bos: BOS, eos, maxLen: DECODE_LEN });
    const { tokens, lengths } = cached();
    const row = lengths.findIndex((n) => n !== DECODE_LEN);
    if (row >= 0) throw new Error(`Transformer decoding, ${size.label}: row ${row} stopped after ${lengths[row]} tokens, expected ${DECODE_LEN}`);
    const at = tokens.data.findIndex((token, i) => token !== expected[i]);
    if (at >= 0) {
      throw new Error(`Transformer decoding, ${size.label}, B ${B}: cached translate() gave token ${tokens.data[at]} at row ` +
        `${Math.floor(at / DECODE_LEN)}, step ${at % DECODE_LEN}; re-running the prefix gave ${expected[at]}`);
    }
    const [c, r] = await measureInTurns([{ fn: cached }, { fn: rerun }], { samples: quick ? 5 : 7, sampleMs: 100 });
    return { size: size.label, batch: B, cachedMs: c.ms, rerunMs: r.ms };
  } finally {
    model.dispose();
  }
}

// 4. The peak wasm heap of training (dropout 0.2, as d2l trains) on a fresh instance.
async function peakHeap(loadFresh, size) {
  const { attn, memory } = await loadFresh();
  const initial = memory.buffer.byteLength;
  const model = new attn.Transformer({ ...size.config, dropout: DROPOUT, seed: 1 });
  try {
    const { src, lens, tgtIn, tgtOut } = batchOf(size.batch, size.steps, size.config.srcVocabSize, 7);
    for (let i = 0; i < 3; i++) model.trainStep(src, lens, tgtIn, tgtOut, STEP);
    const floats = model.parameters.reduce((sum, { shape }) => sum + shape.reduce((a, b) => a * b, 1), 0);
    return { size: size.label, initialBytes: initial, peakBytes: memory.buffer.byteLength, parameterBytes: 4 * floats };
  } finally {
    model.dispose();
  }
}

async function run({ quick, log, builds, loadFresh }) {
  const { simd, scalar } = await builds();
  const sizes = quick ? SIZES.filter((s) => s.label === 'small') : SIZES;
  const { torch, native } = outsideRunners('Transformer', log);
  const steps = [], limits = [], decoding = [], peaks = [], goals = [], notes = [];
  for (const size of sizes) {
    steps.push(...await timeTrainingStep({ simd, scalar, size, native, torch, quick, log }));
    const find = (test) => steps.find((r) => r.size === size.label && test(r.runner));
    const simdRow = find((name) => name === SIMD), threadsRow = find((name) => name === THREADS);
    const torch1 = find((name) => /^PyTorch .*, 1 thread /.test(name)), torch2 = find((name) => /^PyTorch .*, 2 threads /.test(name));
    goals.push(measured('transformerVsPyTorch', `${size.label}, 1 thread`, torch1 && torch1.ms / simdRow.ms, torch1
      ? `ours SIMD ${simdRow.ms.toFixed(2)} ms, PyTorch ${torch1.ms.toFixed(2)} ms` : `PyTorch not measured (${torch})`));
    goals.push(measured('transformerVsPyTorch', `${size.label}, 2 threads`, threadsRow && torch2 && torch2.ms / threadsRow.ms, threadsRow && torch2
      ? `ours ${threadsRow.ms.toFixed(2)} ms, PyTorch ${torch2.ms.toFixed(2)} ms`
      : `${[!threadsRow && 'ours', !torch2 && 'PyTorch'].filter(Boolean).join(' and ')} did not run`));

    try {
      const kernel = await microkernel(simd);
      const flops = trainingStepFlops(taskOf(size));
      const gflops = flops / simdRow.best / 1e6; // the fastest sample, as the micro-kernel's figure is
      limits.push({ size: size.label, flops, gflops, microkernel: kernel.gflops });
      goals.push(measured('transformerPerMicrokernel', size.label, gflops / kernel.gflops, `${(flops / 1e9).toFixed(2)} GFLOP of products per step, ` +
        `ours SIMD ${gflops.toFixed(1)} GFLOP/s (fastest sample), the micro-kernel ${kernel.gflops.toFixed(1)} GFLOP/s (this process)`));
    } catch (error) {
      goals.push(measured('transformerPerMicrokernel', size.label, null, `the micro-kernel did not run (${oneLine(error)})`));
    }

    for (const B of [1, size.batch]) {
      const d = await timeDecoding({ simd, size, batch: B, quick });
      decoding.push(d);
      goals.push(measured('transformerCachedDecoding', `${size.label}, B ${B}`, d.rerunMs / d.cachedMs,
        `cached translate() ${d.cachedMs.toFixed(2)} ms, re-running forward() over the prefix (encoder included) ${d.rerunMs.toFixed(2)} ms`));
    }

    const peak = await peakHeap(loadFresh, size);
    peaks.push(peak);
    notes.push(`Transformer training, ${size.label}, dropout ${DROPOUT}: peak wasm heap ${MiB(peak.peakBytes)} (fresh instance, initial ` +
      `${MiB(peak.initialBytes)}; the parameters alone ${MiB(peak.parameterBytes)})`);
  }

  const stepsTable = stepTable(steps, sizes, SIMD, describe);
  const tables = [
    {
      title: `Transformer (d2l 11.7): ms per training step (forward, backward, clip, Adam) at dropout 0 for every runner, ` +
        `so that the losses can be checked equal before timing (PyTorch's dropout masks cannot be reproduced); d2l's ` +
        `dropout ${DROPOUT} in the extra row that names it. Medians of samples in turns, on ${cpuName()}; ÷ ours = time ÷ ` +
        `our SIMD build's on 1 thread`,
      ...stepsTable,
    },
    {
      title: `Transformer greedy decoding of ${DECODE_LEN} tokens (an eos that never comes): translate() with its KV caches ` +
        `against ${DECODE_LEN} forward() calls over the growing prefix, each of which runs the encoder again and copies out ` +
        `every attention map; our SIMD build, 1 thread, ms per translation (medians)`,
      header: ['size', 'batch', 'cached ms', 're-run ms', 're-run ÷ cached'],
      rows: decoding.map((d) => [d.size, d.batch, d.cachedMs.toFixed(2), d.rerunMs.toFixed(2), (d.rerunMs / d.cachedMs).toFixed(2)]),
    },
  ];
  return { results: { steps, limits, decoding, peaks }, tables, notes, goals };
}

const section = { name: 'transformer', run };
export default section;

await runAlone(import.meta, section);
