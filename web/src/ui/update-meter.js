// Times each update of a section with performance.now(): "compute" is the package calls and
// the data they need, "draw" is building the plots. The figures are shown in the section, no
// finer than the clock measures (shared/clock.js: a page that is not cross-origin isolated
// gets whole milliseconds in Firefox), and kept unrounded on the section element as data
// attributes (data-compute-ms, data-compute-max-ms, data-draw-ms, data-updates, and the
// clock's step in data-clock-ms) so the browser tests can read them.
import { clockResolutionMs, formatMs } from '../../shared/clock.js';

let clockMs; // measured once, by the first section's meter

export function updateMeter(section, readout) {
  clockMs ??= clockResolutionMs();
  section.dataset.clockMs = String(clockMs);
  // Say why the figures are coarse where they are (the fine clocks show what they always did).
  if (clockMs >= 0.1) {
    readout.title = `This browser's clock steps by ${clockMs} ms here${globalThis.crossOriginIsolated ? '' : ' (the page is not cross-origin isolated)'}: times are shown to that step.`;
  }
  const fmt = (ms) => formatMs(ms, clockMs);
  let updates = 0;
  let computeMax = 0;
  let frame = 0;
  const queued = new Map();

  // jobs: [compute, draw] pairs; every compute runs before the first draw, so the figures
  // separate the package's work from Plot's.
  function run(jobs) {
    const t0 = performance.now();
    const results = jobs.map(([compute]) => compute());
    const t1 = performance.now();
    jobs.forEach(([, draw], i) => draw(results[i]));
    const t2 = performance.now();
    const computeMs = t1 - t0;
    updates += 1;
    computeMax = Math.max(computeMax, computeMs);
    Object.assign(section.dataset, {
      computeMs: computeMs.toFixed(3),
      computeMaxMs: computeMax.toFixed(3),
      drawMs: (t2 - t1).toFixed(3),
      updates: String(updates),
    });
    readout.textContent = `computed in ${fmt(computeMs)} ms · drawn in ${fmt(t2 - t1)} ms`;
  }

  return {
    /** Runs compute() then draw(result) now, and records the times. */
    run: (compute, draw) => run([[compute, draw]]),
    /**
     * The same at the next animation frame. Calls made meanwhile collapse: one job per `part`
     * (a section with independent parts redraws only the ones whose controls moved).
     */
    schedule(compute, draw, part = 'all') {
      queued.set(part, [compute, draw]);
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        const jobs = [...queued.values()];
        queued.clear();
        run(jobs);
      });
    },
  };
}
