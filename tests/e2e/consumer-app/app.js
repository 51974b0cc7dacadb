// A user's page, one source for every bundler that tests/e2e/consumer.test.js tries: it imports
// the package by name, loads it as a page does by default (threaded where the page is
// cross-origin isolated) and with the scalar build, and prints what each load reports and
// computes as JSON in #result. The inputs go out with the results, so that the test computes its
// reference from them on its own side.
import { loadAttention } from 'attention-wasm';

const tensor = (shape, phase) => ({
  data: Float32Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) => Math.sin(0.37 * i + phase)),
  shape,
});
// Two queries and keys of 2 values, whose weights the test knows in closed form, and a call large
// enough (two batches of 160 queries, blocks of 64) for the threaded build to split it across its
// workers.
const small = { q: { data: new Float32Array([1, 0, 0, 1]), shape: [1, 2, 2] }, v: { data: new Float32Array([10, 20, 30, 40]), shape: [1, 2, 2] } };
const large = { q: tensor([2, 160, 16], 0), k: tensor([2, 96, 16], 1), v: tensor([2, 96, 8], 2), validLens: new Int32Array([96, 40]) };
const plain = (t) => ({ data: [...t.data], shape: t.shape });

async function run(options) {
  const attn = await loadAttention(options);
  try {
    const { output, weights } = attn.scaledDotProductAttention(small.q, small.q, small.v, { weights: true });
    const { q, k, v, validLens } = large;
    const big = attn.scaledDotProductAttention(q, k, v, { validLens });
    return {
      options,
      backend: attn.backend,
      threads: attn.threads,
      threadsReason: attn.threadsReason,
      small: { output: [...output.data], weights: [...weights.data] },
      large: plain(big.output),
    };
  } finally {
    attn.dispose(); // ends the threaded build's workers before the next load starts its own
  }
}

const out = document.getElementById('result');
try {
  const loads = [await run({}), await run({ simd: false })];
  const { q, k, v, validLens } = large;
  out.textContent = JSON.stringify({
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    hardwareConcurrency: navigator.hardwareConcurrency,
    inputs: { q: plain(q), k: plain(k), v: plain(v), validLens: [...validLens] },
    loads,
  });
} catch (error) {
  out.textContent = `error: ${error.message}`;
}
