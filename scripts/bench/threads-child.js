// One thread count of the threads section (threads.js): `node threads-child.js T [--quick]` loads
// our package with { threads: T } (and with one thread beside it) and onnxruntime-web with
// numThreads = T (which ORT fixes once per process, hence a process per count), checks each
// runner against the float64 reference or against ours, times every workload (ours first, then
// the peers, which are loaded only then), and prints one JSON line: { threads, rows: [{ workload,
// ours, one, oursBest, oneBest, peer?, peerName? }], heap? } (ms per call: medians, and the
// fastest sample as *Best; `one` is ours on one thread, measured in turns with `ours`).
import { loadAttention } from '../../dist/index.js';
import { multiHeadAttention, scaledDotProductAttentionBackward } from '../../tests/js/reference.js';
import { uniforms as random } from '../../web/shared/random.js';
import { DECODE } from './decode.js';
import { attentionTask, checkRows, expectClose, loadMhaPeers, loadPeers, queryRows } from './peers.js';
import { SIZES } from './seq2seq.js';
import { batchOf } from './training.js';
import { measureInTurns } from './timing.js';
// Captures every instance's memory (exported by the single-thread builds, imported by the
// threaded one), for the peak heap; imported before anything is loaded.
import { memories } from '../../tests/js/wasm-memory.js';

const threads = Number(process.argv[2]);
const quick = process.argv.includes('--quick');
const log = (line) => console.error(`  [${threads} threads] ${line}`);

const attn = await loadAttention({ threads });
if (attn.threads !== threads) throw new Error(`asked for ${threads} threads, got ${attn.threads} (${attn.threadsReason})`);
// One thread beside it, for the speedup measured in turns in this process.
const single = threads > 1 ? await loadAttention({ threads: 1 }) : null;
const rows = [];
const samples = quick ? 3 : 7;
// Samples of at least 30 ms of calls, as the page's benchmark takes (10 ms is measureInTurns'
// default), after 200 ms of warm-up calls.
const SAMPLE_MS = 30, WARM_UP_MS = 200;
// Every workload's peer, timed once all of ours are: [{ row, peer(loaded) }].
const peerRuns = [];

// `make(module)` returns the call to time on that module (and a release, if it holds one). Ours
// on `threads` threads and on one take their samples in turns, before any peer is loaded, so
// that no peer's idle workers (onnxruntime-web's spin for a long while) run beside them.
// That was not what slowed our one-thread samples in the 2-thread process, though: they took
// 1.22-1.30x their 1-thread-process time with the peers loaded and 1.17-1.29x without (SDPA
// d = 64, n = 1024 and 4096, quiet runs on the 2-core VM, 2026-11-24/25; docs/performance.md).
// `peer(loaded)`, given the loaded peers, makes the peer's call for the row.
async function timeRow(workload, make, peer) {
  const made = [attn, single].filter(Boolean).map((module) => make(module));
  // Each warmed up for WARM_UP_MS before the samples are sized: sized on cold calls, a sample
  // can hold a single call, whose timing carries the wake-up of the sleeping workers whole.
  for (const { fn } of made) {
    for (const started = performance.now(); performance.now() - started < WARM_UP_MS;) fn();
  }
  const timed = await measureInTurns(made.map(({ fn }) => ({ fn })), { samples, sampleMs: SAMPLE_MS });
  for (const { release } of made) release?.();
  const one = timed[1] ?? timed[0];
  const row = { workload, ours: timed[0].ms, one: one.ms, oursBest: timed[0].best, oneBest: one.best };
  rows.push(row);
  if (peer) peerRuns.push({ row, peer });
  log(`${workload}: ours ${row.ours.toFixed(2)} ms (one thread ${row.one.toFixed(2)} ms)`);
}

// The peers, each timed on its own and then left a moment to go idle (see timeRow).
async function timePeers(loaded) {
  const idle = () => new Promise((resolve) => setTimeout(resolve, 500));
  await idle();
  for (const { row, peer } of peerRuns) {
    const made = await peer(loaded);
    if (!made) continue;
    const [theirs] = await measureInTurns([{ fn: made.fn, async: true }], { samples, sampleMs: SAMPLE_MS });
    await made.release?.();
    await idle();
    Object.assign(row, { peer: theirs.ms, peerName: made.name });
    log(`${row.workload}: ${made.name} ${theirs.ms.toFixed(2)} ms`);
  }
}
const call = (fn) => ({ fn });

// Scaled dot-product attention [1, n, d], dense (beside ORT's MatMul graph) and causal.
for (const d of quick ? [64] : [64, 128]) {
  for (const n of quick ? [1024] : [1024, 4096, 8192]) {
    const t = attentionTask(n, d);
    checkRows(`ours at n = ${n}`, attn.scaledDotProductAttention(t.q, t.k, t.v).output.data, t, [0, n >> 1, n - 1]);
    const peer = async ({ ortMatMul }) => ortMatMul
      && { name: ortMatMul.name, fn: await ortMatMul.make(t), release: () => ortMatMul.release() };
    await timeRow(`SDPA n = ${n}, d = ${d}`, (m) => call(() => m.scaledDotProductAttention(t.q, t.k, t.v).output.data), peer);
  }
}
for (const n of quick ? [1024] : [1024, 4096]) {
  const t = attentionTask(n, 64);
  await timeRow(`SDPA causal n = ${n}, d = 64`, (m) => call(() => m.scaledDotProductAttention(t.q, t.k, t.v, { causal: true }).output.data));
}

// The backward on [1, n, 64], its dq rows against the float64 reference.
for (const n of quick ? [1024] : [1024, 4096]) {
  const t = attentionTask(n, 64);
  const g = { data: random(n * 64, 9), shape: [1, n, 64] };
  const checkedRows = [0, n - 1];
  const want = scaledDotProductAttentionBackward(queryRows(t.q.data, 64, checkedRows), t.k, t.v, queryRows(g.data, 64, checkedRows)).dq.data;
  const got = attn.scaledDotProductAttentionBackward(t.q, t.k, t.v, g).dq.data;
  expectClose(`ours: backward dq at n = ${n}`, Float32Array.from(checkedRows.flatMap((i) => [...got.subarray(i * 64, (i + 1) * 64)])), want);
  await timeRow(`SDPA backward n = ${n}, d = 64`, (m) => call(() => m.scaledDotProductAttentionBackward(t.q, t.k, t.v, g)));
}

// Multi-head self-attention, E = 512, 8 heads (nn.MultiheadAttention's four projections); the
// peer loads these weights (mhaDict) once ours are timed.
const mhaConfig = { embedDim: 512, numHeads: 8 };
let mhaDict;
{
  const config = mhaConfig;
  const layer = (m) => new m.MultiHeadAttention(config).resetParameters(5);
  const probe = layer(attn);
  const dict = probe.stateDict();
  mhaDict = dict;
  for (const n of quick ? [512] : [512, 1024]) {
    const x = { data: random(n * 512, 13), shape: [1, n, 512] };
    const expected = probe.forward(x, x, x, { needWeights: false }).output.data;
    if (n <= 512) expectClose(`ours: multi-head at n = ${n} vs the float64 reference`, expected, multiHeadAttention(dict, config, x).output.data);
    const peer = async ({ mhaPeer }) => mhaPeer
      && { name: mhaPeer.name, fn: await mhaPeer.make({ n, x: x.data, expected }), release: () => mhaPeer.release() };
    await timeRow(`multi-head E = 512, 8 heads, n = ${n}`, (m) => {
      const mha = layer(m);
      return { fn: () => mha.forward(x, x, x, { needWeights: false }).output.data, release: () => mha.dispose() };
    }, peer);
  }
  probe.dispose();
}

// One token against a resident KV cache: 12 heads, d = 64 (decode.js's shape).
{
  const { heads, d } = DECODE;
  const n = quick ? 4096 : 16384;
  const [k, v] = [random(heads * n * d, 32), random(heads * n * d, 33)];
  const q = { data: random(heads * d, 31), shape: [1, heads, 1, d] };
  await timeRow(`KV-cache decode, 12 heads, n = ${n}`, (m) => {
    const cache = new m.KVCache({ batch: 1, heads, headDim: d, capacity: n });
    cache.append({ data: k, shape: [1, heads, n, d] }, { data: v, shape: [1, heads, n, d] });
    return { fn: () => cache.attend(q).output.data, release: () => cache.dispose() };
  });
}

// A Seq2Seq training step at d2l's size (seq2seq.js).
{
  const size = SIZES[0];
  const { src, lens, tgtIn, tgtOut } = batchOf(size.batch, size.steps, size.config.srcVocabSize, 3);
  await timeRow("Seq2Seq training step, d2l's size", (m) => {
    const model = new m.Seq2SeqAttention({ ...size.config, seed: 1 });
    return { fn: () => model.trainStep(src, lens, tgtIn, tgtOut, { pad: 0, lr: 0.005, clip: 1 }), release: () => model.dispose() };
  });
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

const peers = await loadPeers({ threads, log });
const [mhaPeer] = await loadMhaPeers({ ...mhaConfig, dict: mhaDict, threads, log });
await timePeers({ ortMatMul: peers.find((p) => p.name === 'onnxruntime-web MatMul graph'), mhaPeer });

console.log(JSON.stringify({ threads, rows, heap }));
attn.dispose();
single?.dispose();
