// The two builds every functional test runs against: the default load (SIMD in Node 20) and the
// forced scalar build. Each entry is the loaded API object; `memoryOf(attn)` gives its wasm
// memory (captured by wasm-memory.js) for heap measurements.

import { lastMemory } from './wasm-memory.js';
import { loadAttention } from 'attention-wasm';

const memoryByBackend = new Map();

async function load(options) {
  const attn = await loadAttention(options);
  memoryByBackend.set(attn, lastMemory());
  return attn;
}

/** [default load (expected 'wasm-simd'), loadAttention({ simd: false }) (expected 'wasm')] */
export const backends = [await load(), await load({ simd: false })];

/** The backend names the two loads must report, in the order of `backends`. */
export const expectedBackends = ['wasm-simd', 'wasm'];

/** The WebAssembly.Memory behind a loaded API object (undefined if it could not be captured). */
export const memoryOf = (attn) => memoryByBackend.get(attn);
