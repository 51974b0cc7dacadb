// The page's benchmark, off the main thread: loads the package twice (the SIMD build and the
// scalar one) and times O = softmax(Q Kᵀ/√d) V on [1, n, d] float32 for both and for plain
// JavaScript. The page stays responsive because all timing happens here; progress and results
// come back as messages.
//
// page → worker: { type: 'run', id, sizes: number[], d, jsMaxN, samples, sampleMs }
// worker → page: { type: 'ready', id, backends: { simd, scalar } }
//                { type: 'progress', id, step, total, n, runner, sample, samples }
//                { type: 'result', id, runner, n, d, ms, gflops, reps, maxDiff }
//                { type: 'done', id, elapsedMs }
//                { type: 'error', id, message }

import { loadAttention } from 'attention-wasm';
import { normals } from '../ui/random.js';
import { plainJsAttention } from './plain-js.js';
import { attentionFlops, measure } from './timing.js';

let loaded = null;

function load() {
  loaded ??= Promise.all([loadAttention(), loadAttention({ simd: false })]).then(([simd, scalar]) => ({ simd, scalar }));
  return loaded;
}

// The runners, in the order they are timed at each n. `attention(t)` returns the output data.
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
  const plan = sizes.flatMap((n) => all.filter((r) => !r.js || n <= jsMaxN).map((runner) => ({ n, runner })));
  const tensors = new Map();
  const reference = new Map();
  plan.forEach(({ n, runner }, index) => {
    if (!tensors.has(n)) {
      const shape = [1, n, d];
      tensors.set(n, {
        n, d,
        q: { data: normals(n * d, 1), shape },
        k: { data: normals(n * d, 2), shape },
        v: { data: normals(n * d, 3), shape },
      });
    }
    const t = tensors.get(n);
    const progress = (sample) => postMessage({
      type: 'progress', id, step: index, total: plan.length, n, runner: runner.name, sample, samples,
    });
    progress(0);
    // The first runner's output at this n is the reference the others are checked against.
    const output = runner.attention(t);
    if (!reference.has(n)) reference.set(n, output);
    const maxDiff = maxAbsDiff(output, reference.get(n));
    let reps = 1;
    const ms = measure(() => runner.attention(t), {
      samples, sampleMs,
      onSample: (done, _, r) => {
        reps = r;
        progress(done);
      },
    });
    postMessage({
      type: 'result', id, runner: runner.name, n, d, ms, reps, maxDiff,
      gflops: attentionFlops(n, n, d) / ms / 1e6,
    });
  });
  postMessage({ type: 'done', id, elapsedMs: performance.now() - t0 });
}

addEventListener('message', ({ data }) => {
  if (data?.type !== 'run') return;
  run(data).catch((error) => postMessage({ type: 'error', id: data.id, message: error?.message ?? String(error) }));
});
