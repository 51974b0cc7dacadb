// Medians of repeated runs, for the page's benchmark worker (measure) and the Node benchmark
// (measureInTurns; scripts/bench/timing.js re-exports this file). After one warm-up call, `reps` doubles until
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

// measure() for several functions at once, for side-by-side comparisons: their samples are
// taken in turns (sample s of every function before sample s + 1 of any), so that a slow spell
// of the machine falls on all of them alike and their ratios stay fair. Each entry is
// { fn, async }: an async fn returns a promise, and each call is awaited before the next starts.
// Returns the median ms of one call per entry, in order.
export async function measureInTurns(entries, { samples = 7, sampleMs = 10 } = {}) {
  const timeCalls = async ({ fn, async }, reps) => {
    const start = performance.now();
    if (async) for (let i = 0; i < reps; i++) await fn();
    else for (let i = 0; i < reps; i++) fn();
    return performance.now() - start;
  };
  const reps = [];
  for (const entry of entries) {
    await timeCalls(entry, 1); // warm-up
    let r = 1;
    while ((await timeCalls(entry, r)) < sampleMs && r < 1 << 20) r *= 2;
    reps.push(r);
  }
  const times = entries.map(() => []);
  for (let s = 0; s < samples; s++) {
    for (const [i, entry] of entries.entries()) times[i].push((await timeCalls(entry, reps[i])) / reps[i]);
  }
  return times.map(median);
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// O = softmax(Q Kᵀ / √d) V costs 2·n·m·d for Q Kᵀ and 2·n·m·dv for P V: 4·n²·d when m = n, dv = d.
export const attentionFlops = (n, m, d, dv = d) => 2 * n * m * d + 2 * n * m * dv;
