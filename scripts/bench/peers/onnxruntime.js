// onnxruntime-web (its wasm backend, SIMD) as the peer of our attention, multi-head attention and
// grouped-query attention, each on a graph that onnx-model.js builds: the attention as a graph
// of standard ops and as the com.microsoft MultiHeadAttention op; torch.nn.MultiheadAttention's
// projections around either; GroupQueryAttention's causal prefill. session.run is async only,
// so the runners are marked `async: true`: their fn returns a promise, which measureInTurns
// (web/shared/timing.js) awaits call by call.
import { multiHeadAttention } from '../../../harness/reference.js';
import { uniforms } from '../../../web/shared/random.js';
import { PeerMismatchError, expectClose, oneLine } from '../shared/check.js';
import { attentionMatMulModel, attentionMhaModel, gqaModel, mhaContribModel, mhaPlainModel } from './onnx-model.js';

const ORT_OPTIONS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

// numThreads is fixed once per process (the first session starts ORT's pool): the threads section
// (threads/threads.js) runs each count in a process of its own.
async function loadOrt({ threads = 1 } = {}) {
  const ort = await import('onnxruntime-web'); // Node export: dist/ort.node.min.mjs + the .wasm beside it
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return ort;
}

/** The attention runners ({ name, async, make(task) → fn, release, maxN? }) on `threads` threads. */
export async function ortAttentionRunners({ threads } = {}) {
  const ort = await loadOrt({ threads });
  const runner = (name, buildModel, inputNames, shapeOf, extra = {}) => {
    let session = null;
    return {
      name,
      async: true,
      ...extra,
      make: async ({ n, d, q, k, v }) => {
        await session?.release();
        session = await ort.InferenceSession.create(buildModel(n, d), ORT_OPTIONS);
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

// ---- multi-head self-attention -----------------------------------------------------------------
export const MHA_CHECK_N = 17;

/**
 * Multi-head self-attention with the projections of torch.nn.MultiheadAttention (state dict
 * `dict`): onnxruntime-web running the com.microsoft MultiHeadAttention op, and the same graph of
 * standard ops. Each is checked against the float64 reference at n = 17 when loaded, and its
 * make(t) compares every output element with t.expected (our output at that size) when given.
 * One that cannot run here is left out with a line.
 */
export async function loadMhaPeers({ embedDim: E, numHeads: heads, dict, log = console.log, threads = 1 }) {
  let ort;
  try {
    ort = await loadOrt({ threads });
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

// ---- grouped-query attention -------------------------------------------------------------------
// [1, h, n, d] (our heads layout) as [1, n, h·d] (GroupQueryAttention's), and back.
function headsToSequence({ data, shape: [, h, n, d] }) {
  const out = new Float32Array(data.length);
  for (let head = 0; head < h; head++) {
    for (let i = 0; i < n; i++) out.set(data.subarray((head * n + i) * d, (head * n + i + 1) * d), (i * h + head) * d);
  }
  return out;
}
function sequenceToHeads(data, h, n, d) {
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
  const ort = await loadOrt({ threads });
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
