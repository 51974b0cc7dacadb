// attention-wasm: attention mechanisms in WebAssembly. See index.d.ts for the documented API.

import { createFunctions } from './functions.js';
import { createKVCacheClass } from './kv-cache.js';
import { createMultiHeadAttentionClass } from './multi-head-attention.js';
import { createRotary } from './rotary.js';
import { readSafetensors } from './safetensors.js';
import { writeSafetensors } from './safetensors-write.js';
import { createSeq2SeqClass } from './seq2seq.js';
import { createTransformerClass } from './transformer.js';
import { createCausalLMClass } from './causal-lm.js';
import { describe } from './arguments.js';
import { installRelaxedKernels, relaxedSimdSupported } from './relaxed.js';
import { check } from './heap.js';
import {
  REASONS, isNode, planThreads, readThreads, threadedFactory, threadedFactoryOptions, unrefWorkers,
  warnFewerThreads,
} from './threads.js';

export { readSafetensors, writeSafetensors };

// (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt): validates only where SIMD128 is on.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15,
  253, 98, 11,
]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// Literal URLs, so that bundlers (Vite, webpack, Rollup) see and emit every file.
const VARIANTS = {
  simdThreads: {
    backend: 'wasm-simd',
    threaded: true,
    url: () => new URL('./wasm/attention-simd-mt.wasm', import.meta.url),
    glue: () => import('./wasm/attention-simd-mt.mjs'),
    // The pool's workers load the worker script, which imports the glue by its URL. ?no-inline:
    // Vite would inline a 3 KB script as a data: URL, which a worker cannot import the glue from
    // (nor start under a strict CSP); servers and Node ignore the query.
    glueUrl: () => new URL('./wasm/attention-simd-mt.mjs', import.meta.url),
    worker: () => new URL('./wasm/attention-simd-mt.worker.js?no-inline', import.meta.url),
  },
  simd: {
    backend: 'wasm-simd',
    threaded: false,
    url: () => new URL('./wasm/attention-simd.wasm', import.meta.url),
    glue: () => import('./wasm/attention-simd.mjs'),
  },
  scalar: {
    backend: 'wasm',
    threaded: false,
    url: () => new URL('./wasm/attention-scalar.wasm', import.meta.url),
    glue: () => import('./wasm/attention-scalar.mjs'),
  },
};

async function readBytes(url) {
  if (isNode && url.protocol === 'file:') {
    // A variable specifier keeps bundlers from pulling Node's fs into browser builds.
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsModule);
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attention-wasm: could not load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function toUrl(wasmUrl) {
  if (wasmUrl instanceof URL) return wasmUrl;
  if (typeof wasmUrl !== 'string') {
    throw new TypeError(`wasmUrl: expected a string or URL, got ${describe(wasmUrl)}`);
  }
  const base = typeof location !== 'undefined' ? location.href : import.meta.url;
  return new URL(wasmUrl, base);
}

function checkBoolean(name, value) {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`${name}: expected a boolean, got ${describe(value)}`);
  }
}

// Whether the SIMD build also takes the relaxed-SIMD loops (relaxed.js), as `relaxedSimd` asks.
async function chooseRelaxed(relaxedSimd, simd) {
  if (relaxedSimd === false) return false;
  const usable = simd && (await relaxedSimdSupported());
  if (relaxedSimd === true && !usable) {
    throw new Error(simd
      ? 'attention-wasm: relaxed SIMD was required (relaxedSimd: true) but this engine does not support it'
      : 'attention-wasm: relaxedSimd: true needs the SIMD build, but simd: false was given');
  }
  return usable;
}

// The instruction set that the kernel table's loops were compiled for, as their names end.
const isaOf = (variant, relaxed) => {
  if (relaxed) return 'wasmrelaxedsimd_fma';
  return variant === VARIANTS.scalar ? 'scalar' : 'wasmsimd';
};

// Instantiates a variant's module with `threads` threads: { module, workers }, or null when the
// threaded build's shared memory cannot be had (a RangeError from the engine).
async function instantiate(variant, wasmBinary, relaxed, threads) {
  const glue = await variant.glue();
  let loaded;
  try {
    if (variant.threaded) {
      const create = await threadedFactory(glue);
      const options = { wasmBinary, ...(await threadedFactoryOptions(threads, variant)) };
      const { module, workers } = create(options);
      loaded = { module: await module, workers };
    } else {
      loaded = { module: await glue.default({ wasmBinary }), workers: [] };
    }
  } catch (error) {
    if (variant.threaded && error instanceof RangeError) return null;
    throw error;
  }
  if (relaxed) await installRelaxedKernels(loaded.module, variant.threaded);
  return loaded;
}

/**
 * Loads the wasm module: the SIMD build where WebAssembly SIMD validates, else the scalar one;
 * its threaded twin where more than one thread can be had (see index.d.ts for every option).
 */
export async function loadAttention(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options: expected { simd?, relaxedSimd?, threads?, wasmUrl? }, got ${describe(options)}`);
  }
  const { simd, relaxedSimd, wasmUrl } = options;
  checkBoolean('simd', simd);
  checkBoolean('relaxedSimd', relaxedSimd);
  // A wasmUrl names one file, the single-thread build's unless threads are asked for explicitly.
  const requested = readThreads(options.threads ?? (wasmUrl === undefined ? 'auto' : 1));
  if (simd === true && !simdSupported()) {
    throw new Error('attention-wasm: WebAssembly SIMD was required (simd: true) but this engine does not support it');
  }
  const useSimd = simd ?? simdSupported();
  let plan = await planThreads(requested, useSimd);
  let variant = VARIANTS[plan.threads > 1 ? 'simdThreads' : useSimd ? 'simd' : 'scalar'];
  const relaxed = await chooseRelaxed(relaxedSimd, useSimd);
  const urlOf = (chosen) => (wasmUrl === undefined ? chosen.url() : toUrl(wasmUrl));
  let loaded = await instantiate(variant, await readBytes(urlOf(variant)), relaxed, plan.threads);
  if (!loaded) {
    plan = { threads: 1, reason: REASONS.allocationFailed };
    variant = VARIANTS.simd;
    loaded = await instantiate(variant, await readBytes(urlOf(variant)), relaxed, 1);
  }
  const { module, workers } = loaded;
  if (plan.threads > 1) {
    try {
      check(module.setThreads(plan.threads));
    } catch {
      plan = { threads: 1, reason: REASONS.startFailed };
    }
    unrefWorkers(workers);
  }
  warnFewerThreads(requested, plan);
  let threadState = plan;
  const dispose = () => {
    if (!variant.threaded || threadState.reason === REASONS.disposed) return;
    check(module.setThreads(1)); // joins the pool's threads, so that none is inside a call
    module.PThread.terminateAllThreads();
    threadState = { threads: 1, reason: REASONS.disposed };
  };
  const kvCache = createKVCacheClass(module);
  return Object.freeze({
    backend: variant.backend,
    relaxedSimd: relaxed,
    get threads() {
      return threadState.threads;
    },
    get threadsReason() {
      return threadState.reason;
    },
    microkernels: Object.freeze(module.kernelVariants().split(',').map((name) => `${name}__${isaOf(variant, relaxed)}`)),
    dispose,
    ...createFunctions(module),
    ...createRotary(module),
    KVCache: kvCache.KVCache,
    MultiHeadAttention: createMultiHeadAttentionClass(module, kvCache),
    Seq2SeqAttention: createSeq2SeqClass(module),
    Transformer: createTransformerClass(module),
    CausalLM: createCausalLMClass(module),
    readSafetensors,
    writeSafetensors,
  });
}
