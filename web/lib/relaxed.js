// Relaxed SIMD: the loops of the core's matrix products compiled with fused multiply-add
// (cpp/relaxed, built by cmake/relaxed.cmake), a small module of its own that shares the SIMD
// build's memory and takes the place of the core's loops (cpp/src/kernels/kernel_table.hpp).
// emcc 3.1.6 cannot put relaxed instructions in the main module, hence the second one; the
// threaded build has its own, declared on a shared memory. Engines without relaxed SIMD (Node 20
// without --experimental-wasm-relaxed-simd, browsers that have not shipped it) keep the core's
// loops.

import { heapView } from './heap.js';

// Each module compiled once per process (every load instantiates it anew), or null where it does
// not validate, with its bytes, which the threaded build's workers compile again.
const compiled = {};
const RELAXED_MODULES = {
  single: () => import('./wasm/attention-relaxed.mjs'),
  threads: () => import('./wasm/attention-relaxed-mt.mjs'),
};

function compiledModule(build) {
  compiled[build] ??= RELAXED_MODULES[build]().then(async ({ default: base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    return WebAssembly.validate(bytes) ? { module: await WebAssembly.compile(bytes), bytes } : null;
  });
  return compiled[build];
}

/** Whether this engine validates the relaxed module (relaxed SIMD is on). */
export async function relaxedSimdSupported() {
  return (await compiledModule('single')) !== null;
}

/**
 * Makes the core call the relaxed loops from now on, on the calling thread and on every pool
 * worker it starts later (cpp/bindings/relaxed_kernels.cpp). Call once, right after the module
 * loads, before its thread count is set, and only where relaxedSimdSupported(); `threaded` names
 * the build.
 */
export async function installRelaxedKernels(module, threaded) {
  const { module: compiledRelaxed, bytes } = await compiledModule(threaded ? 'threads' : 'single');
  const pointer = module._malloc(bytes.length);
  if (!pointer) throw new RangeError('attention-wasm: no memory left for the relaxed-SIMD kernels');
  try {
    heapView(module).set(bytes, pointer);
    // This thread instantiates the module compiled here: a browser's main thread may not compile
    // it synchronously (over 4 KB), as the workers do from the bytes.
    module.attnRelaxedModule = compiledRelaxed;
    module.installRelaxedKernels(pointer, bytes.length);
  } finally {
    module._free(pointer);
  }
}
