// One thread count of the threads section (threads.js): `node child.js T [--quick]` loads
// our package with { threads: T } (and with one thread beside it) and onnxruntime-web with
// numThreads = T (which ORT fixes once per process, hence a process per count), checks each
// workload (workloads.js) against the float64 reference or against ours, times them
// (ours first, then the peers, which are loaded only then), and prints one JSON line: { threads,
// rows: [{ workload, ours, one, beside, oursBest, oneBest, besideBest, pairedSpeedup,
// pairedBound, peer?, peerName? }], heap? } (ms per call: medians, and the fastest sample as
// *Best; `one` is ours on one thread, measured in turns with `ours`; `beside` is the same
// one-thread call while T - 1 copies of it run at once in worker threads (neighbours.js),
// for the machine's bound; paired*: medians of the ratios of samples taken in one round).
// Captures every instance's memory (exported by the single-thread builds, imported by the
// threaded one), for the peak heap; imported before anything is loaded.
import { memories } from '../../../harness/wasm-memory.js';
import { loadAttention } from '../../../dist/index.js';
import { measureInTurns, median } from '../../../web/shared/timing.js';
import { loadMhaPeers } from '../peers/onnxruntime.js';
import { loadPeers } from '../peers/peers.js';
import { attentionTask } from '../shared/check.js';
import { startNeighbours } from './neighbours.js';
import { MHA_CONFIG, mhaLayer, threadWorkloads } from './workloads.js';

const threads = Number(process.argv[2]);
const quick = process.argv.includes('--quick');
const log = (line) => console.error(`  [${threads} threads] ${line}`);

const attn = await loadAttention({ threads });
if (attn.threads !== threads) throw new Error(`asked for ${threads} threads, got ${attn.threads} (${attn.threadsReason})`);
// One thread beside it, for the speedup measured in turns in this process.
const single = threads > 1 ? await loadAttention({ threads: 1 }) : null;
const neighbours = threads > 1 ? await startNeighbours(threads - 1, { quick }) : null;
const rows = [];
// Samples of at least 30 ms of calls, as the page's benchmark takes (10 ms is measureInTurns'
// default), after 200 ms of warm-up calls. This VM's vCPUs change speed in spells of 0.1-2 s
// (a one-thread AVX2 FMA loop runs from 0.43x to 1x its best rate from one 100 ms window to
// the next: machine-steadiness.c beside this file), so a row takes samples over a few seconds
// where its calls are short enough, for each side's fastest sample to fall in a fast spell.
const samples = quick ? 3 : 7, SHORT_CALL_SAMPLES = quick ? 5 : 15, SHORT_CALL_MS = 50;
const SAMPLE_MS = 30, WARM_UP_MS = 200;
// Every workload's peer, timed once all of ours are: [{ row, peer(loaded, checked), checked }].
const peerRuns = [];

// Ours on `threads` threads, on one, and on one beside the neighbours' copies take their
// samples in turns, before any peer is loaded, so that no peer's idle workers
// (onnxruntime-web's spin for a long while) run beside them.
// That was not what slowed our one-thread samples in the 2-thread process, though: they took
// 1.22-1.30x their 1-thread-process time with the peers loaded and 1.17-1.29x without (SDPA
// d = 64, n = 1024 and 4096, quiet runs on the 2-core VM, 2026-11-24/25; docs/performance.md).
async function timeRow(index, { name, make, check, peer }) {
  const checked = check?.(attn);
  const made = [attn, single].filter(Boolean).map((module) => make(module));
  // Each warmed up for WARM_UP_MS before the samples are sized: sized on cold calls, a sample
  // can hold a single call, whose timing carries the wake-up of the sleeping workers whole.
  let slowest = 0; // ms per warm-up call
  for (const { fn } of made) {
    let calls = 0;
    const started = performance.now();
    for (; performance.now() - started < WARM_UP_MS; calls++) fn();
    slowest = Math.max(slowest, (performance.now() - started) / calls);
  }
  const entries = made.map(({ fn }) => ({ fn }));
  if (neighbours) {
    await neighbours.build(index);
    entries.push({ fn: made[1].fn, before: neighbours.before, after: neighbours.after });
  }
  const timed = await measureInTurns(entries, { samples: slowest < SHORT_CALL_MS ? SHORT_CALL_SAMPLES : samples, sampleMs: SAMPLE_MS });
  await neighbours?.release();
  for (const { release } of made) release?.();
  const [ours, one = ours, beside = ours] = timed;
  const row = {
    workload: name, ours: ours.ms, one: one.ms, beside: beside.ms, oursBest: ours.best, oneBest: one.best, besideBest: beside.best,
    pairedSpeedup: pairedMedian(one.times, ours.times), pairedBound: threads * pairedMedian(one.times, beside.times),
  };
  rows.push(row);
  if (peer) peerRuns.push({ row, peer, checked });
  log(`${name}: ours ${row.ours.toFixed(2)} ms (one thread ${row.one.toFixed(2)} ms, beside ${threads - 1} copies ${row.beside.toFixed(2)} ms)`);
}

// The median over rounds of a[s] / b[s]: each ratio is of two samples taken side by side, a
// round apart at most (about 100 ms where calls are short), so a slow spell of the machine that
// spans both cancels out of it, as it does not out of a ratio of medians or of minimums.
const pairedMedian = (a, b) => median(a.map((x, s) => x / b[s]));

// The peers, each timed on its own and then left a moment to go idle (see timeRow).
async function timePeers(loaded) {
  const idle = () => new Promise((resolve) => setTimeout(resolve, 500));
  await idle();
  for (const { row, peer, checked } of peerRuns) {
    const made = await peer(loaded, checked);
    if (!made) continue;
    const [theirs] = await measureInTurns([{ fn: made.fn, async: true }], { samples, sampleMs: SAMPLE_MS });
    await made.release?.();
    await idle();
    Object.assign(row, { peer: theirs.ms, peerName: made.name });
    log(`${row.workload}: ${made.name} ${theirs.ms.toFixed(2)} ms`);
  }
}

const workloads = threadWorkloads({ quick });
for (const [index, workload] of workloads.entries()) await timeRow(index, workload);
await neighbours?.terminate();

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
const mhaProbe = mhaLayer(attn);
const [mhaPeer] = await loadMhaPeers({ ...MHA_CONFIG, dict: mhaProbe.stateDict(), threads, log });
mhaProbe.dispose();
await timePeers({ ortMatMul: peers.find((p) => p.name === 'onnxruntime-web MatMul graph'), mhaPeer });

console.log(JSON.stringify({ threads, rows, heap }));
attn.dispose();
single?.dispose();
