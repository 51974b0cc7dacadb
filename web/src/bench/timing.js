// Medians of repeated runs, for the page's benchmark worker and the Node benchmark
// (scripts/bench/timing.js re-exports this file). After one warm-up call, `reps` doubles until
// `reps` calls last at least sampleMs; then each of `samples` samples times `reps` calls, and
// the result is the median time of one call, in ms. onSample(done, samples, reps), if given, is
// called after each sample (the page's worker reports progress with it).

export function measure(fn, { samples = 7, sampleMs = 10, onSample } = {}) {
  fn();
  let reps = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) fn();
    if (performance.now() - start >= sampleMs || reps >= 1 << 20) break;
    reps *= 2;
  }
  const times = [];
  for (let s = 0; s < samples; s++) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) fn();
    times.push((performance.now() - start) / reps);
    onSample?.(s + 1, samples, reps);
  }
  return median(times);
}

// measure() for a `fn` that returns a promise (e.g. onnxruntime-web's session.run): same scheme,
// each call awaited before the next starts, so a sample covers completed runs only.
export async function measureAsync(fn, { samples = 7, sampleMs = 10, onSample } = {}) {
  await fn();
  let reps = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) await fn();
    if (performance.now() - start >= sampleMs || reps >= 1 << 20) break;
    reps *= 2;
  }
  const times = [];
  for (let s = 0; s < samples; s++) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) await fn();
    times.push((performance.now() - start) / reps);
    onSample?.(s + 1, samples, reps);
  }
  return median(times);
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// O = softmax(Q Kᵀ / √d) V costs 2·n·m·d for Q Kᵀ and 2·n·m·dv for P V: 4·n²·d when m = n, dv = d.
export const attentionFlops = (n, m, d, dv = d) => 2 * n * m * d + 2 * n * m * dv;
