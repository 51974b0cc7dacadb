// Emscripten 3.1.6's ES-module glue still names CommonJS's __dirname and require under Node.
// The wrapper always hands it the wasm bytes (wasmBinary), so it never reads a file: these
// stand-ins keep the module free of Node imports, and so loadable unchanged by browsers and
// bundlers.
const __dirname = '';
const require = (name) => {
  throw new Error(`attention-wasm: the wasm glue asked for '${name}'; pass wasmBinary instead`);
};
