// Relaxed SIMD: the loops of the core's matrix products compiled with fused multiply-add
// (cpp/relaxed, built by cmake/relaxed.cmake), a small module of its own that shares the SIMD
// build's memory and takes the place of the core's loops (cpp/src/kernels/kernel_table.hpp).
// emcc 3.1.6 cannot put relaxed instructions in the main module, hence the second one. Engines
// without relaxed SIMD (Node 20 without --experimental-wasm-relaxed-simd, browsers that have not
// shipped it) keep the core's loops.

// Its stack, allocated once in the main module's heap and held for the module's lifetime: the
// loops spill a tile there at most (64-byte frames today, llvm-objdump-16 -d of the module); a
// page leaves ample room.
const STACK_BYTES = 64 * 1024;

// The module's exports that replace the core's, in the order useKernelTable takes them.
const LOOPS = ['score_block_1', 'score_block_2', 'pool_block_1', 'pool_block_2', 'gemm_panels'];

// The module compiled once per process (every load instantiates it anew), or null where it does
// not validate.
let compiled;
function compiledModule() {
  compiled ??= import('./wasm/attention-relaxed.mjs').then(({ default: base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    return WebAssembly.validate(bytes) ? WebAssembly.compile(bytes) : null;
  });
  return compiled;
}

/** Whether this engine validates the relaxed module (relaxed SIMD is on). */
export async function relaxedSimdSupported() {
  return (await compiledModule()) !== null;
}

const exportOfType = (module, type) => Object.values(module.asm).find((value) => value instanceof type);

/**
 * Instantiates the relaxed module on the SIMD build's memory and makes the core call its loops
 * from now on. Call once, before any computation, and only where relaxedSimdSupported().
 */
export async function installRelaxedKernels(module) {
  const memory = exportOfType(module, WebAssembly.Memory);
  const table = exportOfType(module, WebAssembly.Table);
  const instance = await WebAssembly.instantiate(await compiledModule(), { env: { memory } });
  const stack = module._malloc(STACK_BYTES);
  if (!stack) throw new RangeError('attention-wasm: no memory left for the relaxed-SIMD kernels');
  instance.exports.__stack_pointer.value = (stack + STACK_BYTES) & ~15; // grows down, 16-aligned
  const first = table.grow(LOOPS.length);
  LOOPS.forEach((name, i) => table.set(first + i, instance.exports[name]));
  module.useKernelTable(...LOOPS.map((_, i) => first + i));
}
