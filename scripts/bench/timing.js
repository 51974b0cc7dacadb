// Medians of repeated runs: each sample runs `fn` enough times to last ~minMs, after a warm-up.
export function measure(fn, { samples = 7, minMs = 40 } = {}) {
  fn();
  let reps = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) fn();
    if (performance.now() - start >= minMs / 4 || reps >= 1 << 20) break;
    reps *= 2;
  }
  const times = [];
  for (let s = 0; s < samples; s++) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) fn();
    times.push((performance.now() - start) / reps);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// O = softmax(Q Kᵀ / √d) V costs 2·n·m·d for Q Kᵀ and 2·n·m·dv for P V.
export const attentionFlops = (n, m, d, dv = d) => 2 * n * m * d + 2 * n * m * dv;

// measure() for a `fn` that returns a promise (e.g. onnxruntime-web's session.run): same scheme,
// each call awaited before the next starts, so a sample covers completed runs only.
export async function measureAsync(fn, { samples = 7, minMs = 40 } = {}) {
  await fn();
  let reps = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) await fn();
    if (performance.now() - start >= minMs / 4 || reps >= 1 << 20) break;
    reps *= 2;
  }
  const times = [];
  for (let s = 0; s < samples; s++) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) await fn();
    times.push((performance.now() - start) / reps);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
