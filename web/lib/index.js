// attention-wasm: attention mechanisms in WebAssembly. See index.d.ts for the documented API.

import { createFunctions } from './functions.js';
import { createKVCacheClass } from './kv-cache.js';
import { createMultiHeadAttentionClass } from './multi-head-attention.js';
import { readSafetensors } from './safetensors.js';
import { writeSafetensors } from './safetensors-write.js';
import { createSeq2SeqClass } from './seq2seq.js';
import { describe } from './arguments.js';
import { installRelaxedKernels, relaxedSimdSupported } from './relaxed.js';

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

// Literal URLs, so that bundlers (Vite, webpack, Rollup) see and emit both .wasm files.
const VARIANTS = {
  simd: {
    backend: 'wasm-simd',
    url: () => new URL('./wasm/attention-simd.wasm', import.meta.url),
    glue: () => import('./wasm/attention-simd.mjs'),
  },
  scalar: {
    backend: 'wasm',
    url: () => new URL('./wasm/attention-scalar.wasm', import.meta.url),
    glue: () => import('./wasm/attention-scalar.mjs'),
  },
};

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

async function readBytes(url) {
  if (isNode && url.protocol === 'file:') {
    // A variable specifier keeps bundlers from pulling Node's fs into browser builds.
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsModule);
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
async function chooseRelaxed(relaxedSimd, variant) {
  if (relaxedSimd === false) return false;
  const usable = variant === VARIANTS.simd && (await relaxedSimdSupported());
  if (relaxedSimd === true && !usable) {
    throw new Error(variant === VARIANTS.simd
      ? 'attention-wasm: relaxed SIMD was required (relaxedSimd: true) but this engine does not support it'
      : 'attention-wasm: relaxedSimd: true needs the SIMD build, but simd: false was given');
  }
  return usable;
}

/**
 * Loads the wasm module: the SIMD build where WebAssembly SIMD validates, else the scalar one.
 * options.simd: false forces the scalar build; true requires SIMD (an Error if unsupported).
 * options.relaxedSimd: the SIMD build's matrix-product loops with fused multiply-add, where relaxed
 * SIMD validates (the default); false leaves them out, true requires them.
 * options.wasmUrl: where the chosen .wasm file is hosted, if not beside this file.
 */
export async function loadAttention(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options: expected { simd?, relaxedSimd?, wasmUrl? }, got ${describe(options)}`);
  }
  const { simd, relaxedSimd, wasmUrl } = options;
  checkBoolean('simd', simd);
  checkBoolean('relaxedSimd', relaxedSimd);
  if (simd === true && !simdSupported()) {
    throw new Error('attention-wasm: WebAssembly SIMD was required (simd: true) but this engine does not support it');
  }
  const variant = VARIANTS[simd ?? simdSupported() ? 'simd' : 'scalar'];
  const [{ default: createModule }, wasmBinary, relaxed] = await Promise.all([
    variant.glue(),
    readBytes(wasmUrl === undefined ? variant.url() : toUrl(wasmUrl)),
    chooseRelaxed(relaxedSimd, variant),
  ]);
  const module = await createModule({ wasmBinary });
  if (relaxed) await installRelaxedKernels(module);
  const kvCache = createKVCacheClass(module);
  return Object.freeze({
    backend: variant.backend,
    relaxedSimd: relaxed,
    ...createFunctions(module),
    KVCache: kvCache.KVCache,
    MultiHeadAttention: createMultiHeadAttentionClass(module, kvCache),
    Seq2SeqAttention: createSeq2SeqClass(module),
    readSafetensors,
    writeSafetensors,
  });
}
