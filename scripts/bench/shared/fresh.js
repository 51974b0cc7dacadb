// A fresh instance of our package and the WebAssembly.Memory it uses, for the sections that
// report the wasm heap a run needed: wasm memory only grows, so memory.buffer.byteLength after
// a run on a fresh instance is that run's peak, the initial heap included. Our wrapper does not
// expose its memory: harness/wasm-memory.js captures every instance's (the Emscripten glue
// instantiates through WebAssembly.instantiate), and is imported here before the package loads
// anything.
import { memories } from '../../../harness/wasm-memory.js';
import { loadAttention } from '../../../dist/index.js';

/** loadAttention(options) on one thread (unless options say otherwise) -> { attn, memory }. */
export async function loadFresh(options) {
  const before = memories.length;
  const attn = await loadAttention({ threads: 1, ...options });
  if (memories.length !== before + 1) throw new Error(`expected one new WebAssembly.Memory from loadAttention, got ${memories.length - before}`);
  return { attn, memory: memories[before] };
}
