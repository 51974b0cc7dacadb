// The three builds every functional test runs against: the default load (the SIMD build with the
// relaxed-SIMD loops: scripts/test-js.sh gives Node 20 --experimental-wasm-relaxed-simd; Node 24
// needs no flag; the threaded build on a machine with more than one core), the single-thread
// SIMD build without them, and the forced scalar build; threads.test.js holds the threaded build
// to the single-thread one element by element. With ATTN_LOADS=default (scripts/test-js.sh's
// Node 24 run) the default load alone: that run is there for the engine, and the other two
// builds, the same bytes behind the same JS, have run on Node 20 already; it takes half the time
// of three. Each entry is the loaded API object;
// `memoryOf(attn)` gives its wasm memory (captured by harness/wasm-memory.js) for heap
// measurements.

import { lastMemory } from '../../harness/wasm-memory.js';
import { loadAttention } from 'attention-wasm';

const memoryByBackend = new Map();

async function load(options) {
  const attn = await loadAttention(options);
  memoryByBackend.set(attn, lastMemory());
  return attn;
}

const LOADS = [
  { options: undefined, expected: { backend: 'wasm-simd', relaxedSimd: true } },
  { options: { relaxedSimd: false, threads: 1 }, expected: { backend: 'wasm-simd', relaxedSimd: false } },
  { options: { simd: false }, expected: { backend: 'wasm', relaxedSimd: false } },
];
const loads = process.env.ATTN_LOADS === 'default' ? LOADS.slice(0, 1) : LOADS;

/** [default load, loadAttention({ relaxedSimd: false, threads: 1 }), loadAttention({ simd: false })], or the first alone */
export const backends = [];
for (const { options } of loads) backends.push(await load(options));

/** What the loads must report, in the order of `backends`. */
export const expectedBackends = loads.map(({ expected }) => expected);

/** The skip reason of a test that compares the loads with each other: false when there are several. */
export const singleLoad = backends.length === 1 && 'one load only (ATTN_LOADS=default)';

/** A loaded module other than `attn` (a fresh default load when there is no other). */
export const otherModule = async (attn) => backends.find((b) => b !== attn) ?? load();

/** A test title's name for a loaded build: 'wasm-simd+relaxed', 'wasm-simd' or 'wasm'. */
export const labelOf = (attn) => (attn.relaxedSimd ? `${attn.backend}+relaxed` : attn.backend);

/** The WebAssembly.Memory behind a loaded API object (undefined if it could not be captured). */
export const memoryOf = (attn) => memoryByBackend.get(attn);
