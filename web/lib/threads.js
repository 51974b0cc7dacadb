// How many threads a load gets, and why fewer than asked: the `threads` option of loadAttention,
// what this engine allows (shared memory needs a cross-origin-isolated page, SharedArrayBuffer
// and wasm atomics), and what the threaded build needs in Node (a real `require` for its glue,
// workers that do not keep the process alive). index.js loads the threaded build only where
// planThreads grants more than one thread.

import { describe } from './arguments.js';

/** 'auto' takes every logical core up to this many (README, "Threads"). */
export const AUTO_THREADS_CAP = 8;

// Why a load runs on fewer threads than it asked for: one fixed phrase each (index.d.ts).
export const REASONS = Object.freeze({
  requestedOne: 'one thread requested',
  notIsolated: 'not cross-origin isolated',
  noSharedMemory: 'no SharedArrayBuffer or wasm atomics',
  allocationFailed: 'the shared memory could not be allocated',
  noSimd: 'no SIMD (the threaded build is a SIMD build)',
  cappedToHardware: "capped at the hardware's thread count",
  startFailed: 'the worker threads could not be started',
  disposed: 'disposed',
});

/** Whether this runs in Node (its file reads, worker_threads, os). */
export const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

// (module (memory 1 1 shared) (func (result i32) i32.const 0 i32.atomic.load)): validates only
// where wasm threads (atomics, shared memory) are on.
const ATOMICS_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 5, 4, 1, 3, 1, 1, 10, 10, 1, 8,
  0, 65, 0, 254, 16, 2, 0, 11,
]);

// Shared memory as a worker would receive it: Firefox has had SharedArrayBuffer without the
// right to post it, which is what the pool's workers need.
function sharedMemoryUsable() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  try {
    if (!WebAssembly.validate(ATOMICS_PROBE)) return false;
    if (typeof MessageChannel === 'function') new MessageChannel().port1.postMessage(new SharedArrayBuffer(1));
    return true;
  } catch {
    return false;
  }
}

async function hardwareThreads() {
  if (isNode) {
    const osModule = 'node:os'; // a variable specifier: bundlers leave Node's os out of browser builds
    const os = await import(/* webpackIgnore: true */ /* @vite-ignore */ osModule);
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency || 1;
}

/** `threads` as given: 'auto' (or undefined) or an integer >= 1; a TypeError/RangeError otherwise. */
export function readThreads(threads) {
  if (threads === undefined || threads === 'auto') return 'auto';
  if (typeof threads !== 'number') {
    throw new TypeError(`threads: expected 'auto' or an integer >= 1, got ${describe(threads)}`);
  }
  if (!Number.isInteger(threads) || threads < 1) {
    throw new RangeError(`threads: expected 'auto' or an integer >= 1, got ${threads}`);
  }
  return threads;
}

/**
 * The thread count a load may use: { threads, reason }, reason null when it is what was asked.
 * 'auto' asks for every logical core up to AUTO_THREADS_CAP; a number is taken as it is, even
 * above the core count (hardwareConcurrency can under-report, e.g. under anti-fingerprinting).
 */
export async function planThreads(requested, simd) {
  if (requested === 1) return { threads: 1, reason: REASONS.requestedOne };
  if (!simd) return { threads: 1, reason: REASONS.noSimd };
  if (!isNode && globalThis.crossOriginIsolated !== true) return { threads: 1, reason: REASONS.notIsolated };
  if (!sharedMemoryUsable()) return { threads: 1, reason: REASONS.noSharedMemory };
  if (requested !== 'auto') return { threads: requested, reason: null };
  const threads = Math.min(await hardwareThreads(), AUTO_THREADS_CAP);
  return { threads, reason: threads === 1 ? REASONS.cappedToHardware : null };
}

let warned = false;
/** One console warning per process when an explicit count > 1 could not be had (the reason says why). */
export function warnFewerThreads(requested, { threads, reason }) {
  if (warned || requested === 'auto' || requested === 1 || threads === requested) return;
  warned = true;
  console.warn(`attention-wasm: ${requested} threads were requested, running on ${threads}: ${reason}`);
}

// In Node: the require the threaded glue is given, made once per process, and the list that the
// workers it starts are recorded in while one factory call runs (loads may run concurrently; the
// pool's workers are all made synchronously inside the factory call).
let recordingRequire;
let recordedWorkers = null;

async function makeRecordingRequire() {
  const moduleSpecifier = 'node:module';
  const { createRequire } = await import(/* webpackIgnore: true */ /* @vite-ignore */ moduleSpecifier);
  const nodeRequire = createRequire(import.meta.url);
  const workerThreads = nodeRequire('node:worker_threads');
  // stdout and stderr not piped into the process's own: Node warns of a leak past 10 piped
  // workers, and emscripten's worker script writes its errors to fd 2 directly anyway.
  class RecordedWorker extends workerThreads.Worker {
    constructor(file, options = {}) {
      super(file, { ...options, stdout: true, stderr: true });
      recordedWorkers?.push(this);
    }
  }
  const recording = { ...workerThreads, Worker: RecordedWorker };
  return (name) => (name === 'worker_threads' ? recording : nodeRequire(name));
}

/**
 * The threaded glue's factory, as (options) => { module: Promise, workers }: in Node the glue
 * gets Node's require (its prelude asks for it, cmake/glue-prelude-threads.js), and `workers`
 * lists the workers the call started, for unrefWorkers; elsewhere `workers` is empty.
 */
export async function threadedFactory(glue) {
  if (!isNode) return (options) => ({ module: glue.default(options), workers: [] });
  recordingRequire ??= await makeRecordingRequire();
  glue.provideNodeRequire(recordingRequire);
  return (options) => {
    const workers = [];
    recordedWorkers = workers;
    try {
      return { module: glue.default(options), workers };
    } finally {
      recordedWorkers = null;
    }
  };
}

/** Lets Node exit while the pool's workers idle (they are needed only inside calls). */
export function unrefWorkers(workers) {
  for (const worker of workers) worker.unref();
}

/**
 * The glue's options for a threaded factory: its pool of `threads - 1` workers made while it
 * loads, and where the worker script is, and, in browsers, the glue it imports (bundlers move
 * both, so the URLs come from index.js's literal `new URL(…, import.meta.url)`s). Node's Worker
 * takes a path, and its worker script imports the glue beside it.
 */
export async function threadedFactoryOptions(threads, { worker, glueUrl }) {
  let workerScript = worker().href;
  const options = { attnPoolSize: threads - 1 };
  if (isNode) {
    const urlModule = 'node:url';
    const { fileURLToPath } = await import(/* webpackIgnore: true */ /* @vite-ignore */ urlModule);
    workerScript = fileURLToPath(workerScript);
  } else {
    options.mainScriptUrlOrBlob = glueUrl().href;
  }
  options.locateFile = (path) => (path.endsWith('.worker.js') ? workerScript : path);
  return options;
}
