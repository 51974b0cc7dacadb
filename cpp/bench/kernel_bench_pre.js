// Emscripten --pre-js of the wasm kernel bench: when scripts/bench/shared/microkernel.js requires
// the .cjs inside `npm run bench`, it leaves the Module settings it wants (arguments, print,
// postRun) in globalThis.attnKernelBench; run as `node kernel_bench.cjs ...` there are none.
if (typeof globalThis.attnKernelBench === 'object') Object.assign(Module, globalThis.attnKernelBench);
