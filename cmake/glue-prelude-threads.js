// Emscripten 3.1.6's ES-module glue names CommonJS's require and __dirname under Node, and the
// threaded build really uses require there: worker_threads for the pool's workers on the main
// thread, path in each worker. In a worker, the glue's .worker.js has put Node's require on
// globalThis before it imports this file; on the main thread web/lib/threads.js provides one
// (node:module's createRequire) before it calls the factory. Browsers never reach either, and
// the file has no Node import of its own for bundlers to trip on.
let nodeRequire = globalThis.require;
export function provideNodeRequire(require) {
  nodeRequire = require;
}
const __dirname = '';
const require = (name) => {
  if (!nodeRequire) {
    throw new Error(`attention-wasm: the threaded wasm glue asked for '${name}' outside Node`);
  }
  return nodeRequire(name);
};
