// Times each update of a section with performance.now(): "compute" is the package calls and
// the data they need, "draw" is building the plots. The figures are shown in the section and
// kept on the section element as data attributes (data-compute-ms, data-compute-max-ms,
// data-draw-ms, data-updates) so the browser tests can read them.

const fmt = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

export function updateMeter(section, readout) {
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
