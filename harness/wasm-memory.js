// Captures the WebAssembly.Memory of every module instantiated in this process, so that tests
// and the benchmark can measure the wasm heap (memory.buffer.byteLength) without a hook in the
// package: the Emscripten glue instantiates through WebAssembly.instantiate, which is wrapped
// here; the single-thread builds export their memory, the threaded build imports its shared one.
// Import this module before loading the package (tests/js/backends.js and
// scripts/bench/shared/fresh.js do).

export const memories = [];

function remember(instance, imports) {
  const candidates = [
    ...Object.values(instance?.exports ?? {}),
    ...Object.values(imports ?? {}).flatMap((namespace) => Object.values(namespace ?? {})),
  ];
  const memory = candidates.find((value) => value instanceof WebAssembly.Memory);
  if (memory) memories.push(memory);
}

const { instantiate } = WebAssembly;
WebAssembly.instantiate = async function (...args) {
  const result = await instantiate.apply(this, args);
  remember(result instanceof WebAssembly.Instance ? result : result.instance, args[1]);
  return result;
};

/** The memory most recently instantiated (call right after an awaited loadAttention()). */
export function lastMemory() {
  return memories[memories.length - 1];
}
