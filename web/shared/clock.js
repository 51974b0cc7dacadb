// How finely performance.now() measures here, and times shown no finer than that. Browsers
// coarsen the clock against timing attacks, more where the page is not cross-origin isolated;
// measured on the development machine: Chromium 156 steps by 5 µs isolated and 0.1 ms not,
// Firefox ESR 153 by 20 µs and 1 ms. A time under one step reads 0 or one step whatever it
// was, so a label "0.00 ms" on a 1 ms clock says nothing true.

/** The smallest step of performance.now() seen over a few steps (at most ~50 ms of spinning), to one digit. */
export function clockResolutionMs({ steps = 5, budgetMs = 50 } = {}) {
  let smallest = Infinity;
  let last = performance.now();
  const end = last + budgetMs;
  for (let seen = 0; seen < steps && last < end;) {
    const now = performance.now();
    if (now > last) {
      smallest = Math.min(smallest, now - last);
      last = now;
      seen += 1;
    }
  }
  return Number(smallest.toPrecision(1));
}

/**
 * A time in ms as a clock of step `clockMs` can back it: 2 decimals under 10 ms and 1 above
 * (as the page always showed) where the clock is that fine, fewer where it is not, and
 * "< step" under one step (a 1 ms clock: "< 1", "3", "12").
 */
export function formatMs(ms, clockMs) {
  if (ms < clockMs) return `< ${clockMs}`;
  const backed = Math.max(0, -Math.floor(Math.log10(clockMs) + 1e-9));
  return ms.toFixed(Math.min(ms < 10 ? 2 : 1, backed));
}
