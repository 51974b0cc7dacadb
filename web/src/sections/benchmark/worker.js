// The page's benchmark, off the main thread: loads the package three times (the SIMD build with
// its relaxed-SIMD loops where the browser has relaxed SIMD, the SIMD build without them, and the
// scalar one) and times O = softmax(Q Kᵀ/√d) V on [1, n, d] float32 for each and for plain
// JavaScript, the SIMD build (or the scalar one without SIMD) with a causal mask and with
// validLens = n/4 too, then one-token decode against a KV cache (decode.js). The page stays
// responsive because all timing happens here; progress and results come back as messages.
//
// page → worker: { type: 'run', id, sizes: number[], d, jsMaxN, decodeSizes: number[], samples, sampleMs }
// worker → page: { type: 'heartbeat' } every second while it loads the modules (workers/heartbeat.js)
//                { type: 'ready', id, backends: { simd, relaxedSimd, scalar, threads, threadsReason, cores,
//                  clockMs, sampleMs } } (sampleMs: each sample's least length, the page's or
//                  longer on a coarse clock)
//                { type: 'progress', id, step, total, n, sample, samples, decode? }
//                  (step: index of n, then of the decode sizes after the attention sizes)
//                { type: 'result', id, runner, n, d, ms, gflops, reps, maxDiff }
//                  (runner: simd | simd128 | scalar | js | causal | quarter; masked rows count the dense
//                  4·n²·d flops, so their GFLOP/s say how much faster than unmasked they run)
//                { type: 'decode', id, n, heads, d, ms, copyMs, reps, maxDiff }
//                { type: 'done', id, elapsedMs }
//                { type: 'error', id, message }

import { loadAttention } from 'attention-wasm';
import { normals } from '../../../shared/random.js';
import { measureDecode } from './decode.js';
import { plainJsAttention } from '../../../shared/plain-js-attention.js';
import { attentionFlops, measureInTurns } from '../../../shared/timing.js';
import { clockResolutionMs } from '../../../shared/clock.js';
import { heartbeatWhile } from '../../workers/heartbeat.js';

// Every sample lasts at least this many steps of the clock, so that a coarse clock (1 ms in
// Firefox where the page is not cross-origin isolated) rounds a sample by 1% at most.
const CLOCK_STEPS_PER_SAMPLE = 100;

let loaded = null;

// simd128 only where the default load took the relaxed loops: elsewhere it would be the same build.
// Every runner is single-threaded but `threads`: the SIMD build on every core it may use, where
// the page is cross-origin isolated (it says why not otherwise). The threaded build loads
// first, alone: in Firefox ESR 153, loading it in this worker at the same time as the two
// single-thread builds stalled 6 times in 30, and first, 0 in 30 (a page loading the three in a
// worker, headless). The stall is Firefox's `new Worker()` inside a worker never returning
// (docs/threads.md); it is rarer alone, not gone, so the page also replaces a silent worker.
async function loadAll() {
  const threaded = await loadAttention({ threads: 'auto' });
  const [simd, scalar] = await Promise.all([loadAttention({ threads: 1 }), loadAttention({ simd: false })]);
  const simd128 = simd.relaxedSimd ? await loadAttention({ relaxedSimd: false, threads: 1 }) : null;
  return { simd, simd128, scalar, threaded };
}

function load() {
  loaded ??= loadAll();
  return loaded;
}

// The runners, in the order they take their turns at each n. `attention(t)` returns the output
// data; `visible(t)`, for the masked ones, how many keys row i sees (every runner is checked on
// a few rows against plain JS over the keys those rows see).
function runners({ simd, simd128, scalar, threaded }) {
  const list = [];
  // Without SIMD support loadAttention() falls back to the scalar build: no SIMD row then.
  if (simd.backend === 'wasm-simd') {
    list.push({ name: 'simd', attention: (t) => simd.scaledDotProductAttention(t.q, t.k, t.v).output.data });
  }
  if (threaded.threads > 1) {
    list.push({ name: 'threads', attention: (t) => threaded.scaledDotProductAttention(t.q, t.k, t.v).output.data });
  }
  // Where the default load took the relaxed loops, the same build without them: what FMA gives.
  if (simd128) {
    list.push({ name: 'simd128', attention: (t) => simd128.scaledDotProductAttention(t.q, t.k, t.v).output.data });
  }
  list.push({ name: 'scalar', attention: (t) => scalar.scaledDotProductAttention(t.q, t.k, t.v).output.data });
  list.push({ name: 'js', attention: (t) => plainJsAttention(t.q.data, t.k.data, t.v.data, t.n, t.n, t.d), js: true });
  list.push({
    name: 'causal', visible: () => (i) => i + 1,
    attention: (t) => simd.scaledDotProductAttention(t.q, t.k, t.v, { causal: true }).output.data,
  });
  list.push({
    name: 'quarter', visible: (t) => () => t.n >> 2,
    attention: (t) => simd.scaledDotProductAttention(t.q, t.k, t.v, { validLens: [t.n >> 2] }).output.data,
  });
  return list;
}

// Max |difference| of rows 0, n/2 and n - 1 from plain JS (double arithmetic) over the keys each
// row sees: a reference independent of the package, at O(n d) per row.
function referenceDiff(out, t, visible) {
  let max = 0;
  for (const i of [0, t.n >> 1, t.n - 1]) {
    const m = visible(i);
    const want = plainJsAttention(t.q.data.subarray(i * t.d, (i + 1) * t.d), t.k.data, t.v.data, 1, m, t.d);
    for (let c = 0; c < t.d; c++) max = Math.max(max, Math.abs(out[i * t.d + c] - want[c]));
  }
  return max;
}

async function run({ id, sizes, d, jsMaxN, decodeSizes = [], samples, sampleMs: requestedMs }) {
  const t0 = performance.now();
  const clockMs = clockResolutionMs();
  const sampleMs = Math.max(requestedMs, CLOCK_STEPS_PER_SAMPLE * clockMs);
  // The page replaces a worker that falls silent while it loads (watched-worker.js).
  const modules = await heartbeatWhile(load());
  postMessage({
    type: 'ready', id,
    backends: {
      simd: modules.simd.backend, relaxedSimd: modules.simd.relaxedSimd, scalar: modules.scalar.backend,
      threads: modules.threaded.threads, threadsReason: modules.threaded.threadsReason, cores: navigator.hardwareConcurrency,
      clockMs, sampleMs,
    },
  });
  const all = runners(modules);
  const total = sizes.length + decodeSizes.length;
  for (const [step, n] of sizes.entries()) {
    const list = all.filter((r) => !r.js || n <= jsMaxN);
    const shape = [1, n, d];
    const t = {
      n, d,
      q: { data: normals(n * d, 1), shape },
      k: { data: normals(n * d, 2), shape },
      v: { data: normals(n * d, 3), shape },
    };
    const progress = (sample) => postMessage({ type: 'progress', id, step, total, n, sample, samples });
    progress(0);
    const allKeys = () => n;
    const diffs = list.map((runner) => referenceDiff(runner.attention(t), t, runner.visible?.(t) ?? allKeys));
    const timed = await measureInTurns(list.map((runner) => ({ fn: () => runner.attention(t) })), {
      samples, sampleMs, onSample: progress,
    });
    list.forEach((runner, i) => postMessage({
      type: 'result', id, runner: runner.name, n, d, ms: timed[i].ms, reps: timed[i].reps,
      maxDiff: diffs[i], gflops: attentionFlops(n, n, d) / timed[i].ms / 1e6,
    }));
  }
  for (const [i, n] of decodeSizes.entries()) {
    const step = sizes.length + i;
    const onSample = (sample) => postMessage({ type: 'progress', id, step, total, n, sample, samples, decode: true });
    onSample(0);
    postMessage({ type: 'decode', id, ...await measureDecode(modules.simd, n, { samples, sampleMs, onSample }) });
  }
  postMessage({ type: 'done', id, elapsedMs: performance.now() - t0 });
}

addEventListener('message', ({ data }) => {
  if (data?.type !== 'run') return;
  run(data).catch((error) => postMessage({ type: 'error', id: data.id, message: error?.message ?? String(error) }));
});
