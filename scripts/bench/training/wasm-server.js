// Ours as a training-step server in a child process (training.js's protocol), for the runners
// that must not share the bench's process: our threaded build, whose pool of workers would
// otherwise stay beside every later single-thread section.
//
//   node [--experimental-wasm-relaxed-simd] scripts/bench/training/wasm-server.js TASK.json TASK.bin THREADS
//
// Loads the package with { threads: THREADS }, builds the model the task names (its `model`:
// 'Transformer' or 'Seq2SeqAttention', with its `config`) with the task's weights, prints
// { loss, threads } (the loss of the batch, dropout 0 as the task says), then per input line N
// takes N training steps and prints { ms } per step.
import { createInterface } from 'node:readline';
import { loadAttention } from '../../../dist/index.js';
import { readTask } from './training.js';

const [jsonPath, binPath, threadsArg] = process.argv.slice(2);
const threads = Number(threadsArg);
if (!binPath || !(Number.isInteger(threads) && threads >= 1)) {
  throw new TypeError(`usage: node wasm-server.js TASK.json TASK.bin THREADS (got ${process.argv.slice(2).join(' ')})`);
}
const { header, batch, weights } = readTask(jsonPath, binPath);
const attn = await loadAttention({ threads });
if (attn.threads !== threads) throw new Error(`asked for ${threads} threads, got ${attn.threads} (${attn.threadsReason})`);
if (!['Transformer', 'Seq2SeqAttention'].includes(header.model)) {
  throw new TypeError(`${jsonPath}: model: expected 'Transformer' or 'Seq2SeqAttention', got ${JSON.stringify(header.model)}`);
}
const model = new attn[header.model](header.config).loadStateDict(weights);
const { src, lens, tgtIn, tgtOut } = batch;
const step = { pad: header.pad, lr: header.lr, clip: header.clip };
const loss = model.lossAndGradients(src, lens, tgtIn, tgtOut, { pad: step.pad }).loss;
console.log(JSON.stringify({ loss, threads: attn.threads, backend: attn.backend }));

for await (const line of createInterface({ input: process.stdin })) {
  const reps = Number(line);
  const start = performance.now();
  for (let i = 0; i < reps; i++) model.trainStep(src, lens, tgtIn, tgtOut, step);
  console.log(JSON.stringify({ ms: (performance.now() - start) / reps }));
}
model.dispose();
attn.dispose();
// The threaded build's idle workers would keep Node alive after stdin closes.
process.exit(0);
