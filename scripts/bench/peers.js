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
// against the float64 reference at n = 17 when loaded, and make(t) compares every output
// element with t.expected (our output at that size) when given.
// The float64 references are the JS tests' (tests/js/reference.js), the inputs the page's
// seeded generator (web/shared/random.js).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { multiHeadAttention, scaledDotProductAttention } from '../../tests/js/reference.js';
import { uniforms } from '../../web/shared/random.js';
import { attentionMatMulModel, attentionMhaModel, gqaModel, mhaContribModel, mhaPlainModel } from './onnx-model.js';

const require = createRequire(import.meta.url);
const TOLERANCE = 1e-3;

export class PeerMismatchError extends Error {}

// ---- inputs, reference and checks --------------------------------------------------------------
/** q, k, v of [1, n, d], uniform in [-1, 1) from seeds seed, seed + 1, seed + 2 (the page's generator). */
export function attentionTask(n, d, seed = 1) {
  const shape = [1, n, d];
  const [q, k, v] = [0, 1, 2].map((i) => ({ data: uniforms(n * d, seed + i), shape }));
  return { n, d, q, k, v };
}

// Rows `rows` of O = softmax(Q Kᵀ/√d) V by the double-precision reference of the tests: each
// output row depends only on its own query, so the reference runs on those queries alone.
export const queryRows = (x, d, rows) => ({ data: Float32Array.from(rows.flatMap((i) => [...x.subarray(i * d, (i + 1) * d)])), shape: [1, rows.length, d] });

export function checkRows(name, out, t, rows) {
  const { n, d } = t;
  if (!out || out.length !== n * d) {
    throw new PeerMismatchError(`${name}: output has ${out?.length} elements, expected ${n * d} (n = ${n}, d = ${d})`);
  }
  const ref = scaledDotProductAttention(queryRows(t.q.data, d, rows), t.k, t.v).output.data;
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
/** tfjs-core on its wasm backend, one thread, SIMD (the decode section uses it too). */
export async function loadTfjsWasm() {
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
  return tf;
}

async function loadTfjs() {
  const tf = await loadTfjsWasm();

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

// numThreads is fixed once per process (the first session starts ORT's pool): the threads section
// (threads.js) runs each count in a process of its own.
async function loadOrtModule({ threads = 1 } = {}) {
  const ort = await import('onnxruntime-web'); // Node export: dist/ort.node.min.mjs + the .wasm beside it
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return ort;
}

async function loadOrt({ threads } = {}) {
  const ort = await loadOrtModule({ threads });
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
// Throws a PeerMismatchError naming `what` unless `got` matches `want` within TOLERANCE.
// [1, h, n, d] (our heads layout) as [1, n, h·d] (GroupQueryAttention's), and back.
function headsToSequence({ data, shape: [, h, n, d] }) {
  const out = new Float32Array(data.length);
  for (let head = 0; head < h; head++) {
    for (let i = 0; i < n; i++) out.set(data.subarray((head * n + i) * d, (head * n + i + 1) * d), (i * h + head) * d);
  }
  return out;
}
export function sequenceToHeads(data, h, n, d) {
  const out = new Float32Array(data.length);
  for (let head = 0; head < h; head++) {
    for (let i = 0; i < n; i++) out.set(data.subarray((i * h + head) * d, (i * h + head + 1) * d), (head * n + i) * d);
  }
  return out;
}

/**
 * onnxruntime-web's com.microsoft GroupQueryAttention (causal prefill) as a peer of our
 * grouped-query attention: make(q [1, H, n, d], k, v [1, Hkv, n, d]) builds the session and
 * returns an async call whose output is in our [1, H, n, d] layout.
 */
export async function loadGqaPeer({ threads = 1 } = {}) {
  const ort = await loadOrtModule({ threads });
  let session = null;
  return {
    name: 'onnxruntime-web GroupQueryAttention op',
    make: async (q, k, v) => {
      const [, heads, n, d] = q.shape, kvHeads = k.shape[1];
      await session?.release();
      session = await ort.InferenceSession.create(gqaModel(n, heads, kvHeads, d), ORT_OPTIONS);
      const feeds = {
        query: new ort.Tensor('float32', headsToSequence(q), [1, n, heads * d]),
        key: new ort.Tensor('float32', headsToSequence(k), [1, n, kvHeads * d]),
        value: new ort.Tensor('float32', headsToSequence(v), [1, n, kvHeads * d]),
      };
      const run = async () => (await session.run(feeds)).O.data;
      return { run, heads: (data) => sequenceToHeads(data, heads, n, d) };
    },
    release: async () => { await session?.release(); session = null; },
  };
}

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

export async function loadMhaPeers({ embedDim: E, numHeads: heads, dict, log = console.log, threads = 1 }) {
  let ort;
  try {
    ort = await loadOrtModule({ threads });
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
  const x = uniforms(n * E, 11);
  const want = multiHeadAttention(dict, { embedDim: E, numHeads: heads }, { data: x, shape: [1, n, E] }).output.data;
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

// `threads` > 1 loads onnxruntime-web alone, on that many threads: tfjs-wasm has no threads in
// Node (its probe reports no thread support there, tensorflow/tfjs#3830).
export async function loadPeers({ log = console.log, threads = 1 } = {}) {
  const peers = [];
  const small = attentionTask(33, 64, 7);
  const libraries = [['tfjs-backend-wasm', loadTfjs], ['onnxruntime-web', loadOrt]];
  for (const [label, load] of threads === 1 ? libraries : libraries.slice(1)) {
    let runners;
    try {
      runners = await load({ threads });
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
