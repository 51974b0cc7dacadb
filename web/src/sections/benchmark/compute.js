// What section 8 measures and how its results read, apart from the view: the run's settings,
// the sizes from the URL, a run's record as the worker (worker.js) reports into it, and the
// one-sentence summary of a finished run. Plain data in and out.

export const DEFAULT_SIZES = [128, 256, 512, 1024];
export const WIDTHS = [32, 64, 128];
// Plain JS is O(n²d) in the obvious loops, ~10× slower than the wasm builds: above this n it
// would take most of the run.
export const JS_MAX_N = 512;
export const SAMPLES = 5;
export const SAMPLE_MS = 30;
const MIN_N = 16;
const MAX_N = 2048;
const MAX_SIZES = 6;
// Cached lengths for the decode rows (12 heads, d = 64: GPT-2 small's heads).
export const DECODE_SIZES = [256, 1024, 4096];
// The runners' outputs are compared at every n: float32 rounding stays far below this.
const AGREE = 1e-4;

/** The sizes from the URL ("128,256,512,1024"): integers in [MIN_N, MAX_N], sorted, deduplicated. */
export function parseSizes(text) {
  const sizes = [...new Set(String(text).split(',').map((s) => Number(s.trim())))]
    .filter((n) => Number.isInteger(n) && n >= MIN_N && n <= MAX_N)
    .sort((a, b) => a - b)
    .slice(0, MAX_SIZES);
  return sizes.length ? sizes : DEFAULT_SIZES;
}

/**
 * A run's record, filled by the worker's messages: rows Map('runner:n' → result), backends
 * (from 'ready'), decode Map(n → result), finished, and error (its message, if it failed).
 */
export const newRun = (id, d, sizes) => ({
  id, d, sizes, rows: new Map(), backends: null, decode: new Map(), finished: false, error: null,
});

// What the threads row shows, or why there is none (the page not cross-origin isolated, say).
function threadsSentence({ backends, rows, sizes }) {
  if (!backends) return '';
  const cores = `your device reports ${backends.cores} logical cores`;
  if (backends.threads <= 1) return `No threads row: the package runs on one thread here (${backends.threadsReason}; ${cores}).`;
  const n = [...sizes].reverse().find((s) => rows.has(`threads:${s}`) && rows.has(`simd:${s}`));
  const speedup = n ? ` At n = ${n} they run ${(rows.get(`threads:${n}`).gflops / rows.get(`simd:${n}`).gflops).toFixed(1)}× as fast as one.` : '';
  return `The threads row runs the SIMD build on ${backends.threads} threads (${cores}).${speedup}`;
}

/** One sentence for the screen and for screen readers: the backends, the ratios at the largest n, the check. */
export function summary(run) {
  const { backends, d, sizes } = run;
  const builds = backends?.simd !== 'wasm-simd'
    ? 'the wasm (scalar) build — your browser does not validate WebAssembly SIMD, so there is no SIMD row —'
    : backends.relaxedSimd
      ? 'the wasm-simd build with its relaxed-SIMD (fused multiply-add) loops and without them, the wasm (scalar) build'
      : 'the wasm-simd and wasm (scalar) builds (your browser does not validate relaxed SIMD, so there is no "no FMA" row)';
  const maxDiff = Math.max(...[...run.rows.values(), ...run.decode.values()].map((r) => r.maxDiff));
  const parts = [`Measured in your browser, one worker thread, d = ${d}: ${builds} and plain JS.`];
  parts.push(threadsSentence(run));
  if (backends?.sampleMs > SAMPLE_MS) {
    parts.push(`This browser's clock steps by ${backends.clockMs} ms here, so every sample lasted at least ` +
      `${backends.sampleMs} ms (not ${SAMPLE_MS}), to keep its rounding under 1%.`);
  }
  const n = [...sizes].reverse().find((s) => run.rows.has(`simd:${s}`) && run.rows.has(`js:${s}`));
  if (n) {
    const ratio = run.rows.get(`simd:${n}`).gflops / run.rows.get(`js:${n}`).gflops;
    parts.push(`At n = ${n} the SIMD build is ${ratio.toFixed(1)}× as fast as plain JS.`);
  }
  const last = sizes[sizes.length - 1];
  const time = (runner) => run.rows.get(`${runner}:${last}`)?.ms;
  if (time('simd') && time('causal') && time('quarter')) {
    parts.push(`At n = ${last} a causal mask takes ${(time('causal') / time('simd')).toFixed(2)}× the unmasked time, ` +
      `validLens = n/4 ${(time('quarter') / time('simd')).toFixed(2)}×.`);
  }
  const longest = run.decode.get(DECODE_SIZES[DECODE_SIZES.length - 1]);
  if (longest) {
    parts.push(`Decoding one token against ${longest.n} cached positions takes ${longest.ms.toFixed(2)} ms, ` +
      `${(longest.ms / longest.copyMs).toFixed(1)}× the time of copying the cache once.`);
  }
  if (maxDiff <= AGREE) {
    parts.push(`Every output agrees with plain JS in double precision (checked on three rows) to ${maxDiff.toExponential(0)} (max |difference|).`);
  } else {
    parts.push(`Warning: an output differs from plain JS in double precision by up to ${maxDiff.toPrecision(2)}, more than float32 rounding explains: a bug.`);
  }
  return parts.join(' ');
}
