// What the training-step sections of `npm run bench` share (seq2seq.js: d2l's GRU
// encoder-decoder with Bahdanau attention; transformer.js: d2l's Transformer; causal-lm.js: a
// GPT-2-like CausalLM): the batch, the task files that runners in child processes read, those
// runners as servers, ours in this process, the samples taken in turns, the loss check before
// timing, and the table.
//
// Runners in child processes (our native build, PyTorch, ours on several threads) are servers:
// their first line is { loss, ... }, then per input line N they take N training steps and print
// { ms } per step. So every runner's samples are taken in turns: sample s of every runner before
// sample s + 1 of any, a slow spell of the shared machine falling on all alike; medians.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { median } from '../../../web/shared/timing.js';
import { PeerMismatchError, oneLine } from '../shared/check.js';
import { nativeBench } from '../shared/native.js';

export const PYTHON = '/usr/bin/python3'; // Debian's, with python3-torch; a bare python3 may lack it
export { BOS, EOS, PAD, batchOf } from '../../../web/shared/random-batch.js';

const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * The task files the child processes read: build/bench/NAME.json (the header: configuration,
 * batch, srcSteps, tgtSteps, pad, lr, clip, ..., plus the parameter list { name, shape } in the
 * order of the weights) and NAME.bin (int32 src [B, Ts], lengths [B], target input and output
 * [B, Tt], then the float32 weights). Returns [json path, bin path].
 */
export function writeTask(name, header, batch, parameters, weights) {
  mkdirSync('build/bench', { recursive: true });
  const base = `build/bench/${name}`;
  writeFileSync(`${base}.json`, JSON.stringify({ ...header, parameters }));
  const parts = [batch.src.data, batch.lens, batch.tgtIn.data, batch.tgtOut.data, ...parameters.map((p) => weights[p.name].data)];
  writeFileSync(`${base}.bin`, Buffer.concat(parts.map(bytes)));
  return [`${base}.json`, `${base}.bin`];
}

/** writeTask's files read back: { header, batch (as batchOf makes it), weights (a state dict) }. */
export function readTask(jsonPath, binPath) {
  const header = JSON.parse(readFileSync(jsonPath, 'utf8'));
  const raw = readFileSync(binPath);
  const { batch: B, srcSteps: Ts, tgtSteps: Tt } = header;
  let offset = 0;
  const take = (Type, count) => {
    const end = offset + count * 4;
    if (end > raw.byteLength) throw new RangeError(`${binPath}: ${raw.byteLength} bytes, too short for the task in ${jsonPath}`);
    const array = new Type(raw.buffer.slice(raw.byteOffset + offset, raw.byteOffset + end)); // aligned copy
    offset = end;
    return array;
  };
  const batch = {
    src: { data: take(Int32Array, B * Ts), shape: [B, Ts] }, lens: take(Int32Array, B),
    tgtIn: { data: take(Int32Array, B * Tt), shape: [B, Tt] }, tgtOut: { data: take(Int32Array, B * Tt), shape: [B, Tt] },
  };
  const weights = {};
  for (const { name, shape } of header.parameters) weights[name] = { data: take(Float32Array, shape.reduce((a, b) => a * b, 1)), shape };
  if (offset !== raw.byteLength) throw new RangeError(`${binPath}: ${raw.byteLength - offset} bytes more than the parameters in ${jsonPath} list`);
  return { header, batch, weights };
}

/** A runner in a child process: { name, loss, info (its first line), sample(reps) -> ms, close() }. */
export async function server(name, command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  await new Promise((resolve, reject) => { child.on('error', reject); child.on('spawn', resolve); });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`${name} exited: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return JSON.parse(value);
  };
  const first = await next();
  return {
    name,
    loss: first.loss,
    info: first,
    sample: async (reps) => {
      child.stdin.write(`${reps}\n`);
      return (await next()).ms;
    },
    close: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on('exit', resolve);
      child.stdin.end();
    }),
  };
}

/**
 * PyTorch on the CPU with `threads` threads, as a server: `script` (seq2seq_torch.py,
 * transformer_torch.py, causal_lm_torch.py) reads the task files, and the script's own `options`
 * after them. Its name says the version and the BLAS it was built with (Debian's python3-torch:
 * generic, no MKL or OpenBLAS).
 */
export async function pytorchServer(script, [json, bin], threads = 1, options = []) {
  const label = `PyTorch CPU, ${threads} thread${threads > 1 ? 's' : ''}`;
  const runner = await server(label, PYTHON, [script, json, bin, '--threads', String(threads), ...options]);
  if (runner.info.threads !== threads) throw new Error(`${label}: torch runs ${runner.info.threads} threads`);
  runner.name = `PyTorch ${runner.info.torch} CPU, ${threads} thread${threads > 1 ? 's' : ''} (BLAS: ${runner.info.blas})`;
  return runner;
}

/**
 * One of our models in this process as a runner: its loss on the batch (no dropout unless the
 * model has some), and samples of `reps` training steps with the step options { pad, lr, clip }.
 */
export function ours(name, model, batch, step) {
  const { src, lens, tgtIn, tgtOut } = batch;
  return {
    name,
    model,
    loss: model.lossAndGradients(src, lens, tgtIn, tgtOut, { pad: step.pad }).loss,
    sample: async (reps) => {
      const start = performance.now();
      for (let i = 0; i < reps; i++) model.trainStep(src, lens, tgtIn, tgtOut, step);
      return (performance.now() - start) / reps;
    },
    close: async () => model.dispose(),
  };
}

/**
 * Every runner's loss must equal the first's (relative 1e-4: float32 sums in other orders)
 * before any is timed; `unchecked` runners (dropout on) are left out. Throws PeerMismatchError.
 */
export function checkLosses(label, [first, ...rest]) {
  for (const runner of rest.filter((r) => !r.unchecked)) {
    if (!(Math.abs(runner.loss - first.loss) <= 1e-4 * first.loss)) {
      throw new PeerMismatchError(`${label}: ${runner.name}'s loss ${runner.loss} differs from ${first.name}'s ${first.loss}`);
    }
  }
}

/**
 * After one warm-up step each, every runner gets `reps` steps per sample so that a sample lasts
 * >= sampleMs; then `rounds` samples each, taken in turns. Per runner { ms: median ms per step,
 * best: the fastest sample's }.
 */
export async function inTurns(runners, { rounds, sampleMs }) {
  const reps = [];
  for (const runner of runners) {
    await runner.sample(1);
    reps.push(Math.max(1, Math.ceil(sampleMs / (await runner.sample(1)))));
  }
  const samples = runners.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, runner] of runners.entries()) samples[i].push(await runner.sample(reps[i]));
  }
  return samples.map((s) => ({ ms: median(s), best: Math.min(...s) }));
}

/**
 * Starts the runners `makers` make (each returning a runner or a promise of one, or a falsy value when it is skipped),
 * one after the other; if one throws, those already started are closed before it propagates.
 */
export async function startRunners(makers) {
  const runners = [];
  try {
    for (const make of makers) {
      const runner = await make();
      if (runner) runners.push(runner);
    }
    return runners;
  } catch (error) {
    for (const runner of runners) await runner.close();
    throw error;
  }
}

/** Times `runners` in turns after their losses agree, closing them all whatever happens. */
export async function timeRunners(label, runners, options) {
  try {
    checkLosses(label, runners);
    return await inTurns(runners, options);
  } finally {
    for (const runner of runners) await runner.close();
  }
}

/**
 * The runners outside this process that a section can have: { torch: true or why not, native:
 * the path of our native runner (model_bench) or null }, each failure said in a line.
 */
export function outsideRunners(model, log) {
  const torch = torchAvailable();
  if (torch !== true) log(`PyTorch: skipped (${torch}); install Debian's python3-torch to compare`);
  let native = null;
  try {
    native = nativeBench('model_bench');
  } catch (error) {
    log(`ours: native ${model}: skipped (${oneLine(error)})`);
  }
  return { torch, native };
}

/** true, or why PyTorch cannot be run. */
function torchAvailable() {
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} not found`;
  return probe.status === 0 ? true : `${PYTHON} cannot import torch (${oneLine(probe.stderr.trim().split('\n').at(-1))})`;
}

/**
 * The table of a training-step section: one row per runner, per size its ms and time ÷ the
 * baseline runner's. results: [{ size (label), runner, ms }]; sizes: [{ label }]; heading(size):
 * the size's column title.
 */
export function stepTable(results, sizes, baseline, heading) {
  const names = [...new Set(results.map((r) => r.runner))];
  const rows = names.map((name) => [name, ...sizes.flatMap(({ label }) => {
    const r = results.find((x) => x.size === label && x.runner === name);
    const base = results.find((x) => x.size === label && x.runner === baseline);
    return r && base ? [r.ms.toFixed(2), (r.ms / base.ms).toFixed(2)] : ['—', '—'];
  })]);
  return { header: ['runner', ...sizes.flatMap((size) => [`${heading(size)} ms`, '÷ ours'])], rows };
}
