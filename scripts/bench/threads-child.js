// One thread count of the threads section (threads.js): `node threads-child.js T [--quick]` loads
// our package with { threads: T } and onnxruntime-web with numThreads = T (which ORT fixes once
// per process, hence a process per count), checks each runner against the float64 reference or
// against ours, times ours and the peer in turns on every workload, and prints one JSON line:
// { threads, rows: [{ workload, ours, peer?, peerName? }], heap? } (ms per call, medians).
import { loadAttention } from '../../dist/index.js';
import { multiHeadAttention, scaledDotProductAttentionBackward } from '../../tests/js/reference.js';
import { uniforms as random } from '../../web/shared/random.js';
import { DECODE } from './decode.js';
import { attentionTask, checkRows, expectClose, loadMhaPeers, loadPeers, queryRows } from './peers.js';
import { SIZES, batchOf } from './seq2seq.js';
import { measureInTurns } from './timing.js';

// Every instance's memory, for the peak heap: the single-thread build exports its memory, the
// threaded build imports its shared one (as tests/js/wasm-memory.js captures them).
const memories = [];
{
  const { instantiate } = WebAssembly;
  WebAssembly.instantiate = async function (...args) {
    const result = await instantiate.apply(this, args);
    const instance = result instanceof WebAssembly.Instance ? result : result.instance;
    const candidates = [...Object.values(instance?.exports ?? {}),
      ...Object.values(args[1] ?? {}).flatMap((namespace) => Object.values(namespace ?? {}))];
    const memory = candidates.find((value) => value instanceof WebAssembly.Memory);
    if (memory) memories.push(memory);
    return result;
  };
}

const threads = Number(process.argv[2]);
const quick = process.argv.includes('--quick');
const log = (line) => console.error(`  [${threads} threads] ${line}`);

const attn = await loadAttention({ threads });
if (attn.threads !== threads) throw new Error(`asked for ${threads} threads, got ${attn.threads} (${attn.threadsReason})`);
const peers = await loadPeers({ threads, log });
const ortMatMul = peers.find((p) => p.name === 'onnxruntime-web MatMul graph');
const rows = [];

async function timeRow(workload, ours, peer) {
  const entries = [{ fn: ours }, ...(peer ? [{ fn: peer.fn, async: true }] : [])];
  const [mine, theirs] = await measureInTurns(entries, { samples: quick ? 3 : 7 });
  rows.push({ workload, ours: mine.ms, ...(peer ? { peer: theirs.ms, peerName: peer.name } : {}) });
  log(`${workload}: ours ${mine.ms.toFixed(2)} ms${peer ? `, ${peer.name} ${theirs.ms.toFixed(2)} ms` : ''}`);
}

// Scaled dot-product attention [1, n, d], dense (beside ORT's MatMul graph) and causal.
for (const d of quick ? [64] : [64, 128]) {
  for (const n of quick ? [1024] : [1024, 4096, 8192]) {
    const t = attentionTask(n, d);
    const fn = () => attn.scaledDotProductAttention(t.q, t.k, t.v).output.data;
    checkRows(`ours at n = ${n}`, fn(), t, [0, n >> 1, n - 1]);
    const peer = ortMatMul ? { name: ortMatMul.name, fn: await ortMatMul.make(t) } : null;
    await timeRow(`SDPA n = ${n}, d = ${d}`, fn, peer);
    await ortMatMul?.release();
  }
}
for (const n of quick ? [1024] : [1024, 4096]) {
  const t = attentionTask(n, 64);
  await timeRow(`SDPA causal n = ${n}, d = 64`, () => attn.scaledDotProductAttention(t.q, t.k, t.v, { causal: true }).output.data);
}

// The backward on [1, n, 64], its dq rows against the float64 reference.
for (const n of quick ? [1024] : [1024, 4096]) {
  const t = attentionTask(n, 64);
  const g = { data: random(n * 64, 9), shape: [1, n, 64] };
  const fn = () => attn.scaledDotProductAttentionBackward(t.q, t.k, t.v, g);
  const checkedRows = [0, n - 1];
  const want = scaledDotProductAttentionBackward(queryRows(t.q.data, 64, checkedRows), t.k, t.v, queryRows(g.data, 64, checkedRows)).dq.data;
  const got = fn().dq.data;
  expectClose(`ours: backward dq at n = ${n}`, Float32Array.from(checkedRows.flatMap((i) => [...got.subarray(i * 64, (i + 1) * 64)])), want);
  await timeRow(`SDPA backward n = ${n}, d = 64`, fn);
}

// Multi-head self-attention, E = 512, 8 heads (nn.MultiheadAttention's four projections).
{
  const config = { embedDim: 512, numHeads: 8 };
  const mha = new attn.MultiHeadAttention(config).resetParameters(5);
  const dict = mha.stateDict();
  const [mhaPeer] = await loadMhaPeers({ ...config, dict, threads, log });
  for (const n of quick ? [512] : [512, 1024]) {
    const x = { data: random(n * 512, 13), shape: [1, n, 512] };
    const fn = () => mha.forward(x, x, x, { needWeights: false }).output.data;
    const expected = fn();
    if (n <= 512) expectClose(`ours: multi-head at n = ${n} vs the float64 reference`, expected, multiHeadAttention(dict, config, x).output.data);
    const peer = mhaPeer ? { name: mhaPeer.name, fn: await mhaPeer.make({ n, x: x.data, expected }) } : null;
    await timeRow(`multi-head E = 512, 8 heads, n = ${n}`, fn, peer);
    await mhaPeer?.release();
  }
  mha.dispose();
}

// One token against a resident KV cache: 12 heads, d = 64 (decode.js's shape).
{
  const { heads, d } = DECODE;
  const n = quick ? 4096 : 16384;
  const cache = new attn.KVCache({ batch: 1, heads, headDim: d, capacity: n });
  cache.append({ data: random(heads * n * d, 32), shape: [1, heads, n, d] }, { data: random(heads * n * d, 33), shape: [1, heads, n, d] });
  const q = { data: random(heads * d, 31), shape: [1, heads, 1, d] };
  await timeRow(`KV-cache decode, 12 heads, n = ${n}`, () => cache.attend(q).output.data);
  cache.dispose();
}

// A Seq2Seq training step at d2l's size (seq2seq.js).
{
  const size = SIZES[0];
  const batch = batchOf(size.batch, size.steps, size.config.srcVocabSize, 3);
  const model = new attn.Seq2SeqAttention({ ...size.config, seed: 1 });
  const { src, lens, tgtIn, tgtOut } = batch;
  await timeRow("Seq2Seq training step, d2l's size", () => model.trainStep(src, lens, tgtIn, tgtOut, { pad: 0, lr: 0.005, clip: 1 }));
  model.dispose();
}

// The peak heap of one n = 32768 call (the memory only grows), on a fresh instance.
let heap;
if (!quick) {
  const before = memories.length;
  const fresh = await loadAttention({ threads });
  const memory = memories[before];
  const t = attentionTask(32768, 64);
  fresh.scaledDotProductAttention(t.q, t.k, t.v);
  heap = memory?.buffer.byteLength;
  fresh.dispose();
}

console.log(JSON.stringify({ threads, rows, heap }));
attn.dispose();
