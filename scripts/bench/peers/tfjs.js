// TensorFlow.js on its wasm backend (@tensorflow/tfjs-backend-wasm), one thread, SIMD: the
// attention peer (explicit transpose + matMul, and matMul(q, k, false, true)), and the loaded
// tfjs-core that the decode and backward sections build their own peers on. Results are read
// with dataSync(), so that a timed call includes its completion.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** tfjs-core on its wasm backend, one thread, SIMD. */
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

/** The attention runners ({ name, make(task) → fn, release, maxN? }) on tfjs-wasm. */
export async function tfjsAttentionRunners() {
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
