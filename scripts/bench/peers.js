// Peer libraries for the attention benchmark, each computing O = softmax(Q Kᵀ/√d) V on Q, K, V
// of [n, d] float32, single thread, wasm SIMD:
//   - TensorFlow.js wasm backend (@tensorflow/tfjs-backend-wasm): explicit transpose + matMul, and
//     matMul(q, k, false, true); results read with dataSync() so a run includes completion.
//   - onnxruntime-web (wasm backend): an ONNX graph of standard ops, and the com.microsoft
//     MultiHeadAttention contrib op (models built by onnx-model.js). session.run is async only,
//     so these runners are marked `async: true`: their fn returns a promise (measureInTurns in
//     timing.js awaits each call).
//
// loadPeers() returns runners { name, make: async (t) => fn, release?, maxN?, async? }. A peer
// that cannot load or run here is logged in one line and left out. Every runner is checked
// against a double-precision reference at n = 33 before it is returned, and make() re-checks a
// few rows at the benchmarked size; a disagreement (max abs diff > 1e-3) throws.
//
// loadMhaPeers({ embedDim, numHeads, dict }) does the same for multi-head self-attention with
// the projections of torch.nn.MultiheadAttention (state dict `dict`): onnxruntime-web running
// the com.microsoft MultiHeadAttention op, and the same graph of standard ops. Each is checked
// against mhaReference (float64) at n = 17 when loaded, and make(t) compares every output
// element with t.expected (our output at that size) when given.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { attentionMatMulModel, attentionMhaModel, mhaContribModel, mhaPlainModel, splitStateDict } from './onnx-model.js';

const require = createRequire(import.meta.url);
const TOLERANCE = 1e-3;

export class PeerMismatchError extends Error {}

// ---- reference and checks ----------------------------------------------------------------------
// Rows `rows` of O = softmax(Q Kᵀ/√d) V in double precision (q, k, v: [n, d] row-major).
function referenceRows(q, k, v, n, d, rows) {
  const out = new Float64Array(rows.length * d);
  const scores = new Float64Array(n);
  const scale = 1 / Math.sqrt(d);
  rows.forEach((i, r) => {
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      let dot = 0;
      for (let t = 0; t < d; t++) dot += q[i * d + t] * k[j * d + t];
      scores[j] = dot * scale;
      if (scores[j] > max) max = scores[j];
    }
    let sum = 0;
    for (let j = 0; j < n; j++) sum += scores[j] = Math.exp(scores[j] - max);
    for (let j = 0; j < n; j++) {
      const w = scores[j] / sum;
      for (let t = 0; t < d; t++) out[r * d + t] += w * v[j * d + t];
    }
  });
  return out;
}

export function checkRows(name, out, t, rows) {
  const { n, d } = t;
  if (!out || out.length !== n * d) {
    throw new PeerMismatchError(`${name}: output has ${out?.length} elements, expected ${n * d} (n = ${n}, d = ${d})`);
  }
  const ref = referenceRows(t.q.data, t.k.data, t.v.data, n, d, rows);
  let worst = 0, at = 0;
  rows.forEach((i, r) => {
    for (let c = 0; c < d; c++) {
      const diff = Math.abs(out[i * d + c] - ref[r * d + c]);
      if (!(diff <= worst)) { worst = diff; at = i * d + c; } // NaN counts as worst
    }
  });
  if (!(worst <= TOLERANCE)) {
    throw new PeerMismatchError(`${name}: output disagrees with the float64 reference at n = ${n}, d = ${d}: ` +
      `max abs diff ${worst} > ${TOLERANCE} (row ${Math.floor(at / d)}, column ${at % d})`);
  }
}

function randomTask(n, d, seed) {
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296) * 2 - 1;
  const shape = [1, n, d];
  const make = () => ({ data: Float32Array.from({ length: n * d }, rand), shape });
  return { n, d, q: make(), k: make(), v: make() };
}

// Wraps make() so the first run at every size is checked against the reference on a few rows.
export function checked(runner) {
  return {
    ...runner,
    make: async (t) => {
      const fn = await runner.make(t);
      const out = await fn();
      const rows = [...new Set([0, 1, t.n >> 1, t.n - 1])].filter((i) => i >= 0 && i < t.n);
      checkRows(runner.name, out, t, rows);
      return fn;
    },
  };
}

// ---- TensorFlow.js, wasm backend -----------------------------------------------------------------
async function loadTfjs() {
  const tf = require('@tensorflow/tfjs-core');
  const wasm = require('@tensorflow/tfjs-backend-wasm'); // registers the 'wasm' backend
  // In Node, Emscripten reads the .wasm with fs from this folder (no fetch, no file: URL).
  const dist = join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + '/';
  wasm.setWasmPaths(dist);
  wasm.setThreadsCount(1);
  // The backend picks tfjs-backend-wasm-simd.wasm when SIMD validates and threads are off (tfjs
  // turns threads off in Node); insist on SIMD so we never time the scalar binary by accident.
  if (!(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'))) throw new Error('WebAssembly SIMD not available');
  if (!(await tf.setBackend('wasm'))) throw new Error("tf.setBackend('wasm') failed");
  await tf.ready();
  if (tf.getBackend() !== 'wasm') throw new Error(`backend is ${tf.getBackend()}, not wasm`);
  const threads = wasm.getThreadsCount();
  if (threads !== 1) throw new Error(`wasm backend runs ${threads} threads, not 1`);

  const runner = (name, body, extra = {}) => {
    let held = [];
    return {
      name,
      ...extra,
      make: async ({ n, d, q, k, v }) => {
        tf.dispose(held);
        const Q = tf.tensor2d(q.data, [n, d]);
        const K = tf.tensor2d(k.data, [n, d]);
        const V = tf.tensor2d(v.data, [n, d]);
        const scale = tf.scalar(1 / Math.sqrt(d));
        held = [Q, K, V, scale];
        return () => {
          const out = tf.tidy(() => body(Q, K, V, scale));
          const data = out.dataSync();
          out.dispose();
          return data;
        };
      },
      release: async () => { tf.dispose(held); held = []; },
    };
  };
  return [
    runner('tfjs-wasm (transpose + matMul)', (Q, K, V, scale) =>
      tf.matMul(tf.softmax(tf.mul(tf.matMul(Q, tf.transpose(K)), scale)), V)),
    // tfjs-backend-wasm hands only batch-1 products without transposes to XNNPACK; transposeB
    // takes its blocked-loop fallback (slow_batch_matmul): ~17 s per call at n = 8192, d = 128.
    runner('tfjs-wasm (matMul transposeB)', (Q, K, V, scale) =>
      tf.matMul(tf.softmax(tf.mul(tf.matMul(Q, K, false, true), scale)), V), { maxN: 2048 }),
  ];
}

// ---- onnxruntime-web, wasm backend ----------------------------------------------------------------
const ORT_OPTIONS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

async function loadOrtModule() {
  const ort = await import('onnxruntime-web'); // Node export: dist/ort.node.min.mjs + the .wasm beside it
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return ort;
}

async function loadOrt() {
  const ort = await loadOrtModule();
  const options = ORT_OPTIONS;

  const runner = (name, buildModel, inputNames, shapeOf, extra = {}) => {
    let session = null;
    return {
      name,
      async: true,
      ...extra,
      make: async ({ n, d, q, k, v }) => {
        await session?.release();
        session = await ort.InferenceSession.create(buildModel(n, d), options);
        const shape = shapeOf(n, d);
        const feeds = {};
        [q, k, v].forEach((x, i) => { feeds[inputNames[i]] = new ort.Tensor('float32', x.data, shape); });
        const output = session.outputNames[0];
        return async () => (await session.run(feeds))[output].data;
      },
      release: async () => { await session?.release(); session = null; },
    };
  };
  return [
    runner('onnxruntime-web MatMul graph', attentionMatMulModel, ['Q', 'K', 'V'], (n, d) => [n, d]),
    // onnxruntime-web 1.30.0: session.run of this op fails for n >= 4096 (d = 64 and 128) with
    // "SafeIntOnOverflow() Integer overflow" inside ORT; n = 4095 still runs.
    runner('onnxruntime-web MHA op', attentionMhaModel, ['query', 'key', 'value'], (n, d) => [1, n, d], { maxN: 4095 }),
  ];
}

// ---- multi-head self-attention (onnxruntime-web) ---------------------------------------------------
// torch.nn.MultiheadAttention(x, x, x) in float64 for x [n, E]: y = concat_h(softmax(Q_h K_hᵀ/√hd)
// V_h)·Woᵀ + bo with Q = x·Wqᵀ + bq (and K, V alike).
export function mhaReference(dict, x, n, E, heads) {
  const w = splitStateDict(dict, E);
  const hd = E / heads;
  const project = (input, { W, b }) => {
    const out = new Float64Array(n * E);
    for (let i = 0; i < n; i++) {
      for (let o = 0; o < E; o++) {
        let sum = b[o];
        for (let c = 0; c < E; c++) sum += input[i * E + c] * W[o * E + c];
        out[i * E + o] = sum;
      }
    }
    return out;
  };
  const Q = project(x, w.q), K = project(x, w.k), V = project(x, w.v);
  const A = new Float64Array(n * E);
  const scores = new Float64Array(n);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let t = h * hd; t < (h + 1) * hd; t++) dot += Q[i * E + t] * K[j * E + t];
        scores[j] = dot / Math.sqrt(hd);
        if (scores[j] > max) max = scores[j];
      }
      let sum = 0;
      for (let j = 0; j < n; j++) sum += scores[j] = Math.exp(scores[j] - max);
      for (let j = 0; j < n; j++) {
        for (let t = h * hd; t < (h + 1) * hd; t++) A[i * E + t] += (scores[j] / sum) * V[j * E + t];
      }
    }
  }
  return project(A, w.o);
}

// Throws a PeerMismatchError naming `what` unless `got` matches `want` within TOLERANCE.
export function expectClose(what, got, want) {
  if (!got || got.length !== want.length) {
    throw new PeerMismatchError(`${what}: output has ${got?.length} elements, expected ${want.length}`);
  }
  let worst = 0, at = 0;
  for (let i = 0; i < want.length; i++) {
    const diff = Math.abs(got[i] - want[i]);
    if (!(diff <= worst)) { worst = diff; at = i; } // NaN counts as worst
  }
  if (!(worst <= TOLERANCE)) {
    throw new PeerMismatchError(`${what}: max abs diff ${worst} > ${TOLERANCE} (element ${at}: ${got[at]} vs ${want[at]})`);
  }
  return worst;
}

export const MHA_CHECK_N = 17;

export async function loadMhaPeers({ embedDim: E, numHeads: heads, dict, log = console.log }) {
  let ort;
  try {
    ort = await loadOrtModule();
  } catch (e) {
    log(`peers: leaving out onnxruntime-web (multi-head): ${oneLine(e)}`);
    return [];
  }
  const runner = (name, buildModel) => {
    let session = null;
    return {
      name,
      async: true,
      make: async ({ n, x, expected }) => {
        await session?.release();
        session = await ort.InferenceSession.create(buildModel(n, E, heads, dict), ORT_OPTIONS);
        const feeds = { x: new ort.Tensor('float32', x, [1, n, E]) };
        const fn = async () => (await session.run(feeds)).y.data;
        if (expected) expectClose(`${name} at n = ${n} vs ours`, await fn(), expected);
        return fn;
      },
      release: async () => { await session?.release(); session = null; },
    };
  };
  const peers = [];
  const n = MHA_CHECK_N;
  const x = randomTask(n, E, 11).q.data;
  const want = mhaReference(dict, x, n, E, heads);
  for (const r of [runner('onnxruntime-web MHA op + MatMul projections', mhaContribModel),
    runner('onnxruntime-web MHA plain-op graph', mhaPlainModel)]) {
    try {
      const fn = await r.make({ n, x });
      expectClose(`${r.name} at n = ${n} vs the float64 reference`, await fn(), want);
    } catch (e) {
      if (e instanceof PeerMismatchError) throw e;
      log(`peers: leaving out ${r.name}: ${oneLine(e)}`);
      continue;
    } finally {
      await r.release();
    }
    peers.push(r);
  }
  return peers;
}

// ---- loading -----------------------------------------------------------------------------------
export const oneLine = (e) => String(e?.message ?? e).split('\n')[0].slice(0, 200);

export async function loadPeers({ log = console.log } = {}) {
  const peers = [];
  const small = randomTask(33, 64, 7);
  for (const [label, load] of [['tfjs-backend-wasm', loadTfjs], ['onnxruntime-web', loadOrt]]) {
    let runners;
    try {
      runners = await load();
    } catch (e) {
      log(`peers: leaving out ${label}: ${oneLine(e)}`);
      continue;
    }
    for (const runner of runners.map(checked)) {
      try {
        const fn = await runner.make(small);
        checkRows(runner.name, await fn(), small, [...Array(small.n).keys()]); // every row at n = 33
      } catch (e) {
        if (e instanceof PeerMismatchError) throw e;
        log(`peers: leaving out ${runner.name}: ${oneLine(e)}`);
        continue;
      } finally {
        await runner.release?.();
      }
      peers.push(runner);
    }
  }
  return peers;
}
