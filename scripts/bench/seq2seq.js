// The Seq2Seq section of `npm run bench`: one training step (forward, backward, gradient
// clipping, Adam) of d2l's GRU encoder-decoder with Bahdanau attention, at d2l's configuration
// (batch 128, embed 256, hidden 256, 2 layers, 9 steps, vocabularies of 200) and at a small one
// (batch 64, embed 32, hidden 64, 2 layers, 10 steps): our SIMD and scalar wasm builds, our
// native build, and PyTorch on the CPU with one thread (d2l's model, scripts/bench/seq2seq_torch.py)
// when /usr/bin/python3 can import torch. Every runner starts from the same weights and batch,
// and its loss there must equal ours before it is timed. Dropout is 0 for all of them (d2l
// trains with 0.2; its masks would make the losses differ).
//
// Native and PyTorch run as servers in child processes (one line in: N steps; one line out: ms
// per step), so that all runners' samples are taken in turns: sample s of every runner before
// sample s + 1 of any, a slow spell of the shared machine falling on all alike; medians.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { uniform } from '../../web/shared/random.js';
import { nativeBench } from './native.js';
import { PeerMismatchError, oneLine } from './peers.js';
import { median } from './timing.js';

const PYTHON = '/usr/bin/python3';
const GOAL = 3; // PyTorch's time per step over our SIMD build's
const PAD = 0, BOS = 1, EOS = 2;
const STEP = { lr: 0.005, clip: 1 }; // d2l's lr and gradient_clip_val

export const SIZES = [
  { label: "d2l's size", batch: 128, steps: 9, config: { srcVocabSize: 200, tgtVocabSize: 200, embedSize: 256, numHiddens: 256, numLayers: 2 } },
  { label: 'small', batch: 64, steps: 10, config: { srcVocabSize: 200, tgtVocabSize: 200, embedSize: 32, numHiddens: 64, numLayers: 2 } },
];

// A padded batch as d2l makes them: sources of 2..steps tokens ending in eos, targets likewise,
// target input = bos then the target shifted right.
export function batchOf(batch, steps, vocab, seed) {
  const rand = uniform(seed);
  const sequence = () => {
    const n = 2 + Math.floor(rand() * (steps - 1));
    return [...Array.from({ length: n - 1 }, () => 3 + Math.floor(rand() * (vocab - 3))), EOS];
  };
  const src = new Int32Array(batch * steps), lens = new Int32Array(batch);
  const tgtIn = new Int32Array(batch * steps), tgtOut = new Int32Array(batch * steps);
  for (let b = 0; b < batch; b++) {
    const s = sequence(), t = sequence();
    src.set(s, b * steps);
    lens[b] = s.length;
    tgtOut.set(t, b * steps);
    tgtIn.set([BOS, ...t.slice(0, -1)], b * steps);
  }
  const shape = [batch, steps];
  return { src: { data: src, shape }, lens, tgtIn: { data: tgtIn, shape }, tgtOut: { data: tgtOut, shape } };
}

// The task files the child processes read: configuration and parameter list (JSON), batch and
// weights (binary: int32 src, lengths, target input, target output, then float32 weights).
function writeTask(size, batch, parameters, weights) {
  mkdirSync('build/bench', { recursive: true });
  const base = `build/bench/seq2seq-${size.config.embedSize}-${size.config.numHiddens}`;
  writeFileSync(`${base}.json`, JSON.stringify({
    config: { ...size.config, dropout: 0, attention: true }, batch: size.batch, srcSteps: size.steps,
    tgtSteps: size.steps, pad: PAD, ...STEP, parameters,
  }));
  const parts = [batch.src.data, batch.lens, batch.tgtIn.data, batch.tgtOut.data, ...parameters.map(({ name }) => weights[name].data)];
  writeFileSync(`${base}.bin`, Buffer.concat(parts.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))));
  return [`${base}.json`, `${base}.bin`];
}

// A runner in a child process: its first line is { loss }, then one { ms } per request.
async function server(name, command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const spawned = new Promise((resolve, reject) => { child.on('error', reject); child.on('spawn', resolve); });
  await spawned;
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

function ours(name, attn, size, batch, weights) {
  const model = new attn.Seq2SeqAttention({ ...size.config, seed: 1 });
  if (weights) model.loadStateDict(weights);
  const { src, lens, tgtIn, tgtOut } = batch;
  const loss = model.lossAndGradients(src, lens, tgtIn, tgtOut, { pad: PAD }).loss; // dropout 0: the plain loss
  return {
    name,
    loss,
    model,
    sample: async (reps) => {
      const start = performance.now();
      for (let i = 0; i < reps; i++) model.trainStep(src, lens, tgtIn, tgtOut, { pad: PAD, ...STEP });
      return (performance.now() - start) / reps;
    },
    close: async () => model.dispose(),
  };
}

// After one warm-up step each, every runner gets `reps` steps per sample so that a sample lasts
// >= sampleMs; then `rounds` samples each, taken in turns. Medians of ms per step.
async function inTurns(runners, { rounds, sampleMs }) {
  const reps = [];
  for (const runner of runners) {
    await runner.sample(1);
    reps.push(Math.max(1, Math.ceil(sampleMs / (await runner.sample(1)))));
  }
  const samples = runners.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, runner] of runners.entries()) samples[i].push(await runner.sample(reps[i]));
  }
  return samples.map((s) => median(s));
}

function cpuName() {
  const match = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
  return match ? match[1].trim() : 'unknown CPU';
}

function torchAvailable() {
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} not found`;
  return probe.status === 0 ? true : `${PYTHON} cannot import torch (${oneLine(probe.stderr.trim().split('\n').at(-1))})`;
}

/**
 * Runs the section with our loaded { simd, scalar } modules. Returns { results, summary, table }:
 * results [{ size, runner, ms }], summary lines, and table { title, header, rows } to print.
 */
export async function runSeq2SeqSection({ simd, scalar, quick, log = console.log }) {
  const sizes = quick ? SIZES.filter((s) => s.label === 'small') : SIZES;
  const torch = torchAvailable();
  if (torch !== true) log(`PyTorch: skipped (${torch}); install Debian's python3-torch to compare`);
  let native = null;
  try {
    native = nativeBench('seq2seq_bench');
  } catch (error) {
    log(`ours: native Seq2Seq: skipped (${oneLine(error)})`);
  }
  const results = [], summary = [];
  for (const size of sizes) {
    const batch = batchOf(size.batch, size.steps, size.config.srcVocabSize, 7);
    const first = ours('ours: wasm SIMD', simd, size, batch);
    const weights = first.model.stateDict();
    const [json, bin] = writeTask(size, batch, first.model.parameters, weights);
    const runners = [first, ours('ours: wasm scalar', scalar, size, batch, weights)];
    try {
      if (native) runners.push(await server('ours: native (g++ -march=native)', native, [json, bin]));
      if (torch === true) {
        const pytorch = await server('PyTorch CPU, 1 thread', PYTHON, ['scripts/bench/seq2seq_torch.py', json, bin]);
        pytorch.name = `PyTorch ${pytorch.info.torch} CPU, 1 thread (BLAS: ${pytorch.info.blas})`;
        runners.push(pytorch);
      }
      for (const runner of runners.slice(1)) {
        if (!(Math.abs(runner.loss - first.loss) <= 1e-4 * first.loss)) {
          throw new PeerMismatchError(`Seq2Seq ${size.label}: ${runner.name}'s loss ${runner.loss} differs from ours ${first.loss}`);
        }
      }
      const ms = await inTurns(runners, { rounds: quick ? 5 : 7, sampleMs: 200 });
      runners.forEach(({ name }, i) => results.push({ size: size.label, ...size.config, batch: size.batch, steps: size.steps, runner: name, ms: ms[i] }));
    } finally {
      for (const runner of runners) await runner.close();
    }
    const simdMs = results.find((r) => r.size === size.label && r.runner === first.name).ms;
    const pytorch = results.find((r) => r.size === size.label && r.runner.startsWith('PyTorch'));
    summary.push(pytorch
      ? `Seq2Seq training step, ${size.label}: ours SIMD ${simdMs.toFixed(2)} ms, PyTorch (1 thread) ${pytorch.ms.toFixed(2)} ms, ` +
        `${(pytorch.ms / simdMs).toFixed(2)}× (goal ≥ ${GOAL}×: ${pytorch.ms / simdMs >= GOAL ? 'met' : 'NOT met'})`
      : `Seq2Seq training step, ${size.label}: ours SIMD ${simdMs.toFixed(2)} ms; PyTorch not measured (${torch})`);
  }
  const names = [...new Set(results.map((r) => r.runner))];
  const rows = names.map((name) => [name, ...sizes.flatMap(({ label }) => {
    const r = results.find((x) => x.size === label && x.runner === name);
    const simdMs = results.find((x) => x.size === label && x.runner === 'ours: wasm SIMD').ms;
    return r ? [r.ms.toFixed(2), (r.ms / simdMs).toFixed(2)] : ['—', '—'];
  })]);
  const title = `Seq2Seq (d2l's GRU encoder-decoder with Bahdanau attention): ms per training step ` +
    `(forward, backward, clip, Adam), dropout 0, medians of samples in turns, on ${cpuName()}; ÷ ours = time ÷ our SIMD build's`;
  const header = ['runner', ...sizes.flatMap(({ label, batch, steps, config: c }) =>
    [`${label} (B ${batch}, E ${c.embedSize}, H ${c.numHiddens}, ${c.numLayers} layers, T ${steps}) ms`, '÷ ours'])];
  return { results, summary, table: { title, header, rows }, cpu: cpuName() };
}
