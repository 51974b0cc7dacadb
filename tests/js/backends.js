// The three builds every functional test runs against: the default load (the SIMD build with the
// relaxed-SIMD loops: scripts/test-js.sh runs Node 20 with --experimental-wasm-relaxed-simd; the
// threaded build on a machine with more than one core), the single-thread SIMD build without
// them, and the forced scalar build. threads.test.js holds the threaded build to the
// single-thread one element by element. Each entry is the loaded API object;
// `memoryOf(attn)` gives its wasm memory (captured by wasm-memory.js) for heap measurements.

import { lastMemory } from './wasm-memory.js';
import { loadAttention } from 'attention-wasm';

const memoryByBackend = new Map();

async function load(options) {
  const attn = await loadAttention(options);
  memoryByBackend.set(attn, lastMemory());
  return attn;
}

/** [default load, loadAttention({ relaxedSimd: false, threads: 1 }), loadAttention({ simd: false })] */
export const backends = [
  await load(),
  await load({ relaxedSimd: false, threads: 1 }),
  await load({ simd: false }),
];

/** What the three loads must report, in the order of `backends`. */
export const expectedBackends = [
  { backend: 'wasm-simd', relaxedSimd: true },
  { backend: 'wasm-simd', relaxedSimd: false },
  { backend: 'wasm', relaxedSimd: false },
];

/** A test title's name for a loaded build: 'wasm-simd+relaxed', 'wasm-simd' or 'wasm'. */
export const labelOf = (attn) => (attn.relaxedSimd ? `${attn.backend}+relaxed` : attn.backend);

/** The WebAssembly.Memory behind a loaded API object (undefined if it could not be captured). */
export const memoryOf = (attn) => memoryByBackend.get(attn);
