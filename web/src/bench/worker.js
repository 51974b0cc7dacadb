// The page's benchmark, off the main thread: loads the package twice (the SIMD build and the
// scalar one) and times O = softmax(Q Kᵀ/√d) V on [1, n, d] float32 for both and for plain
// JavaScript. The page stays responsive because all timing happens here; progress and results
// come back as messages.
//
// page → worker: { type: 'run', id, sizes: number[], d, jsMaxN, samples, sampleMs }
// worker → page: { type: 'ready', id, backends: { simd, scalar } }
//                { type: 'progress', id, step, total, n, sample, samples } (step: index of n)
//                { type: 'result', id, runner, n, d, ms, gflops, reps, maxDiff }
//                { type: 'done', id, elapsedMs }
//                { type: 'error', id, message }

import { loadAttention } from 'attention-wasm';
import { normals } from '../ui/random.js';
import { plainJsAttention } from './plain-js.js';
import { attentionFlops, measureInTurns } from './timing.js';

let loaded = null;

function load() {
  loaded ??= Promise.all([loadAttention(), loadAttention({ simd: false })]).then(([simd, scalar]) => ({ simd, scalar }));
  return loaded;
}

// The runners, in the order they take their turns at each n. `attention(t)` returns the output data.
function runners({ simd, scalar }) {
  const list = [];
  // Without SIMD support loadAttention() falls back to the scalar build: no SIMD row then.
  if (simd.backend === 'wasm-simd') {
    list.push({ name: 'simd', attention: (t) => simd.scaledDotProductAttention(t.q, t.k, t.v).output.data });
  }
  list.push({ name: 'scalar', attention: (t) => scalar.scaledDotProductAttention(t.q, t.k, t.v).output.data });
  list.push({ name: 'js', attention: (t) => plainJsAttention(t.q.data, t.k.data, t.v.data, t.n, t.n, t.d), js: true });
  return list;
}

const maxAbsDiff = (a, b) => {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
};

async function run({ id, sizes, d, jsMaxN, samples, sampleMs }) {
  const t0 = performance.now();
  const modules = await load();
  postMessage({ type: 'ready', id, backends: { simd: modules.simd.backend, scalar: modules.scalar.backend } });
  const all = runners(modules);
  for (const [step, n] of sizes.entries()) {
    const list = all.filter((r) => !r.js || n <= jsMaxN);
    const shape = [1, n, d];
    const t = {
      n, d,
      q: { data: normals(n * d, 1), shape },
      k: { data: normals(n * d, 2), shape },
      v: { data: normals(n * d, 3), shape },
    };
    const progress = (sample) => postMessage({ type: 'progress', id, step, total: sizes.length, n, sample, samples });
    progress(0);
    // The first runner's output is the reference the others are checked against.
    const outputs = list.map((runner) => runner.attention(t));
    const timed = await measureInTurns(list.map((runner) => ({ fn: () => runner.attention(t) })), {
      samples, sampleMs, onSample: progress,
    });
    list.forEach((runner, i) => postMessage({
      type: 'result', id, runner: runner.name, n, d, ms: timed[i].ms, reps: timed[i].reps,
      maxDiff: maxAbsDiff(outputs[i], outputs[0]), gflops: attentionFlops(n, n, d) / timed[i].ms / 1e6,
    }));
  }
  postMessage({ type: 'done', id, elapsedMs: performance.now() - t0 });
}

addEventListener('message', ({ data }) => {
  if (data?.type !== 'run') return;
  run(data).catch((error) => postMessage({ type: 'error', id: data.id, message: error?.message ?? String(error) }));
});
