// The backward section of `npm run bench`: gradients of sum(O ⊙ G) for O = softmax(Q Kᵀ/√d) V on
// [1, n, 64], single thread: our SIMD and scalar builds beside our own forward (the ratio the
// gradients issue bounds) and beside TensorFlow.js's tf.grads of the same attention on its wasm
// backend. GFLOP/s count 10·n²·d for a backward (five products of 2·n²·d: Q Kᵀ recomputed,
// dO Vᵀ, dS K, dSᵀ Q, Pᵀ dO). Each runner is checked before it is timed: our dq rows against a
// float64 reference, and tfjs's dq, dk, dv against ours element by element.
import { createRequire } from 'node:module';
import { scaledDotProductAttentionBackward } from '../../../harness/reference.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { loadTfjsWasm } from '../peers/tfjs.js';
import { PeerMismatchError, oneLine, queryRows } from '../shared/check.js';
import { runAlone } from '../shared/standalone.js';
import { fmt } from '../shared/table.js';

const require = createRequire(import.meta.url);
const TOLERANCE = 1e-3; // max abs diff, relative to the largest |entry| of the reference
const SIMD = 'ours: SIMD backward', FORWARD = 'ours: SIMD forward', TFJS = 'tfjs-wasm tf.grads';

export const backwardFlops = (n, d) => 10 * n * n * d;

function expectCloseToLargest(what, got, want) {
  let largest = 0, worst = 0;
  for (let i = 0; i < want.length; i++) largest = Math.max(largest, Math.abs(want[i]));
  for (let i = 0; i < want.length; i++) {
    const diff = Math.abs(got[i] - want[i]);
    if (!(diff <= worst)) worst = diff;
  }
  if (!(worst <= TOLERANCE * Math.max(largest, 1e-30))) {
    throw new PeerMismatchError(`${what}: max abs diff ${worst} > ${TOLERANCE} × ${largest}`);
  }
}

function checkOurs(name, grads, task) {
  const rows = [0, 1, task.n >> 1, task.n - 1];
  // Row i of dq depends only on query i and gradOutput row i: the reference runs on those rows.
  const [q, g] = [task.q, task.g].map((x) => queryRows(x, task.d, rows));
  const shape = [1, task.n, task.d];
  const { dq } = scaledDotProductAttentionBackward(q, { data: task.k, shape }, { data: task.v, shape }, g);
  const want = rows.map((_, r) => dq.data.subarray(r * task.d, (r + 1) * task.d));
  rows.forEach((i, r) => expectCloseToLargest(`${name} dq row ${i} at n = ${task.n}`, grads.dq.data.subarray(i * task.d, (i + 1) * task.d), want[r]));
}

// TensorFlow.js with every gradient registered (@tensorflow/tfjs: tfjs-core alone registers
// none; it shares the one tfjs-core with the forward peer), on the same wasm backend setup.
async function loadTfjsGradients() {
  require('@tensorflow/tfjs');
  const tf = await loadTfjsWasm();
  let held = [];
  return {
    name: TFJS,
    make: (task) => {
      tf.dispose(held);
      const { n, d } = task;
      const [Q, K, V, G] = [task.q, task.k, task.v, task.g].map((x) => tf.tensor2d(x, [n, d]));
      const scale = tf.scalar(1 / Math.sqrt(d));
      held = [Q, K, V, G, scale];
      // The forward peer's fast form (explicit transpose, see peers/tfjs.js), differentiated.
      const loss = (q, k, v) => tf.sum(tf.mul(tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v), G));
      const gradients = tf.grads(loss);
      return () => {
        const grads = gradients([Q, K, V]);
        const data = grads.map((t) => t.dataSync());
        tf.dispose(grads);
        return { dq: data[0], dk: data[1], dv: data[2] };
      };
    },
    release: () => { tf.dispose(held); held = []; },
  };
}

// n = 16384 on a fresh instance: that it completes, and the wasm memory it needed.
async function longRun(loadFresh, d) {
  const n = 16384;
  const { attn, memory } = await loadFresh();
  const shape = [1, n, d];
  const [Q, K, V, G] = [21, 22, 23, 24].map((seed) => ({ data: random(n * d, seed), shape }));
  const start = performance.now();
  const grads = attn.scaledDotProductAttentionBackward(Q, K, V, G);
  const ms = performance.now() - start;
  checkOurs(SIMD, grads, { n, d, q: Q.data, k: K.data, v: V.data, g: G.data });
  return { n, d, ms, gflops: backwardFlops(n, d) / ms / 1e6, peakBytes: memory.buffer.byteLength };
}

// One row per runner: per n its GFLOP/s, its ms and its time ÷ our SIMD backward's.
function table(results) {
  const names = [...new Set(results.map((r) => r.runner))];
  const ns = [...new Set(results.map((r) => r.n))];
  const lookup = (name, n) => results.find((r) => r.runner === name && r.n === n);
  return {
    title: 'Backward of attention on [1, n, 64]: GFLOP/s (10·n²·d for a backward, 4·n²·d for the forward row), ms, ' +
      'and time ÷ our SIMD backward\'s, single thread',
    header: ['runner', ...ns.flatMap((n) => [`n=${n} GFLOP/s`, 'ms', '÷ ours'])],
    rows: names.map((name) => [name, ...ns.flatMap((n) => {
      const r = lookup(name, n), ours = lookup(SIMD, n);
      return [fmt(r?.gflops), fmt(r?.ms, 2), r ? (r.ms / ours.ms).toFixed(2) : '—'];
    })]),
  };
}

function goalsOf(results, sizes) {
  const lookup = (name, n) => results.find((r) => r.runner === name && r.n === n);
  return sizes.flatMap((n) => {
    const ours = lookup(SIMD, n), forward = lookup(FORWARD, n), peer = lookup(TFJS, n);
    return [
      measured('backwardVsForward', `n = ${n}`, ours.ms / forward.ms, `${ours.gflops.toFixed(1)} GFLOP/s (10·n²·d)`),
      measured('backwardVsTfjs', `n = ${n}`, peer && peer.ms / ours.ms, peer ? undefined : 'tfjs-wasm did not run'),
    ];
  });
}

const section = {
  name: 'backward',
  async run({ quick, log, builds, loadFresh }) {
    const { simd, scalar } = await builds();
    const d = 64;
    const sizes = quick ? [512] : [512, 1024, 2048, 4096];
    let tfjs = null;
    try {
      tfjs = await loadTfjsGradients();
    } catch (error) {
      log(`${TFJS}: skipped (${oneLine(error)})`);
    }
    const results = [];
    for (const n of sizes) {
      const shape = [1, n, d];
      const [q, k, v, g] = [11, 12, 13, 14].map((seed) => random(n * d, seed));
      const task = { n, d, q, k, v, g };
      const [Q, K, V, G] = [q, k, v, g].map((data) => ({ data, shape }));
      const runners = [
        { name: SIMD, fn: () => simd.scaledDotProductAttentionBackward(Q, K, V, G) },
        { name: FORWARD, fn: () => simd.scaledDotProductAttention(Q, K, V), flops: 4 * n * n * d },
      ];
      if (n <= 2048) runners.push({ name: 'ours: scalar backward', fn: () => scalar.scaledDotProductAttentionBackward(Q, K, V, G) });
      const ours = runners[0].fn();
      checkOurs(runners[0].name, ours, task);
      if (runners[2]) checkOurs(runners[2].name, runners[2].fn(), task);
      if (tfjs) {
        try {
          const fn = tfjs.make(task);
          const theirs = fn();
          for (const key of ['dq', 'dk', 'dv']) expectCloseToLargest(`${tfjs.name} ${key} vs ours at n = ${n}`, theirs[key], ours[key].data);
          runners.push({ name: tfjs.name, fn });
        } catch (error) {
          if (error instanceof PeerMismatchError) throw error;
          log(`${tfjs.name} at n = ${n}: skipped (${oneLine(error)})`);
        }
      }
      const timed = await measureInTurns(runners.map(({ fn }) => ({ fn })), { samples: n >= 4096 ? 3 : 5 });
      tfjs?.release();
      runners.forEach(({ name, flops = backwardFlops(n, d) }, i) => results.push({ runner: name, n, d, ms: timed[i].ms, gflops: flops / timed[i].ms / 1e6 }));
    }
    const long = quick ? null : await longRun(loadFresh, d);
    const notes = long ? [`backward n = ${long.n}, d = ${d}: completed in ${(long.ms / 1000).toFixed(2)} s ` +
      `(${long.gflops.toFixed(1)} GFLOP/s), wasm memory of the fresh instance ${(long.peakBytes / 2 ** 20).toFixed(1)} MiB`] : [];
    return { results: { flops: '10·n²·d (forward rows: 4·n²·d)', results, long }, tables: [table(results)], notes, goals: goalsOf(results, sizes) };
  },
};
export default section;

await runAlone(import.meta, section);
