// Medians of repeated runs, for the page's benchmark worker and the Node benchmark
// (scripts/bench imports this file), so both measure the same way.

// Times several functions side by side. After a warm-up call, each function's `reps` doubles
// until `reps` calls last at least sampleMs; then `samples` samples of `reps` calls each are
// taken in turns (sample s of every function before sample s + 1 of any), so that a slow spell
// of the machine falls on all of them alike and their ratios stay fair. Each entry is
// { fn, async, before?, after? }: an async fn returns a promise, and each call is awaited
// before the next starts; before() and after(), if given, run around each sample's calls outside
// its time (the threads benchmark starts and stops copies running beside a sample with them).
// onSample(done, samples), if given, is called after each round. Returns, per entry in order,
// { ms: the median time of one call, best: the fastest sample's, reps, times: every sample's,
// in round order (sample s of every entry was taken in round s, side by side) }.
export async function measureInTurns(entries, { samples = 7, sampleMs = 10, onSample } = {}) {
  const timeCalls = async ({ fn, async, before, after }, reps) => {
    await before?.();
    const start = performance.now();
    if (async) for (let i = 0; i < reps; i++) await fn();
    else for (let i = 0; i < reps; i++) fn();
    const ms = performance.now() - start;
    await after?.();
    return ms;
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
    onSample?.(s + 1, samples);
  }
  return times.map((t, i) => ({ ms: median(t), best: Math.min(...t), reps: reps[i], times: t }));
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// O = softmax(Q Kᵀ / √d) V costs 2·n·m·d for Q Kᵀ and 2·n·m·dv for P V: 4·n²·d when m = n, dv = d.
export const attentionFlops = (n, m, d, dv = d) => 2 * n * m * d + 2 * n * m * dv;
