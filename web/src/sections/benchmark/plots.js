// Section 7's chart, a pure function of a run's record (compute.js's newRun) and a width, and
// the runners' names and styles it shares with the tables (tables.js).

import * as Plot from '@observablehq/plot';

// Greyscale-readable: the runners differ in lightness, dash and marker, and each line is
// labelled at its end.
export const RUNNERS = {
  // The two SIMD lines run close together (1.1x apart): their end labels are nudged apart; so
  // are the threads and causal lines, which end together on 2 cores (both near 1.7x SIMD).
  simd: { label: 'wasm SIMD', short: 'SIMD', stroke: '#1d2433', dash: null, symbol: 'circle', dy: -4 },
  simd128: { label: 'SIMD, no FMA', short: 'no FMA', stroke: '#7a7f8a', dash: '5 3', symbol: 'cross', dy: 7 },
  threads: { label: 'SIMD, all threads', short: 'threads', stroke: '#b8860b', dash: null, symbol: 'plus', dy: 7 },
  scalar: { label: 'wasm scalar', short: 'scalar', stroke: '#2a6f97', dash: '7 4', symbol: 'square' },
  js: { label: 'plain JS', short: 'JS', stroke: '#c9733a', dash: '2 3', symbol: 'triangle' },
  causal: { label: 'SIMD, causal', short: 'causal', stroke: '#5b8c5a', dash: '4 2 1 2', symbol: 'diamond', dy: -5 },
  quarter: { label: 'SIMD, valid n/4', short: 'n/4', stroke: '#8e5ea2', dash: '1 2', symbol: 'star' },
};
// a ÷ b in GFLOP/s: how many times faster a runs. The masked rows count dense flops, so theirs
// is how much less time the mask costs than the unmasked call.
export const RATIOS = [['threads', 'simd'], ['simd', 'simd128'], ['simd', 'scalar'], ['simd', 'js'], ['causal', 'simd'], ['quarter', 'simd']];

export const fmtGflops = (g) => (g >= 100 ? g.toFixed(0) : g >= 10 ? g.toFixed(1) : g.toFixed(2));
export const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));

/** The 1-2-5 series (…, 0.5, 1, 2, 5, 10, …) inside [lo, hi]: the log axis's ticks and grid. */
function ticks125([lo, hi]) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** e;
      if (t >= lo && t <= hi) ticks.push(Number(t.toPrecision(1)));
    }
  }
  return ticks;
}

/** GFLOP/s against n, one labelled line per runner, both axes log scale. */
export function gflopsChart({ sizes, rows }, width) {
  const data = [...rows.values()].map((r) => ({ ...r, label: RUNNERS[r.runner].label }));
  const marks = [];
  for (const [name, runner] of Object.entries(RUNNERS)) {
    const points = data.filter((r) => r.runner === name).sort((a, b) => a.n - b.n);
    if (!points.length) continue;
    marks.push(
      Plot.line(points, { x: 'n', y: 'gflops', stroke: runner.stroke, strokeWidth: 2, strokeDasharray: runner.dash }),
      Plot.dot(points, { x: 'n', y: 'gflops', fill: runner.stroke, symbol: runner.symbol, r: 4, stroke: 'white' }),
      Plot.text(points.slice(-1), {
        x: 'n', y: 'gflops', text: () => runner.label, dx: 8, dy: runner.dy ?? 0, textAnchor: 'start', fill: runner.stroke,
        fontSize: 11, fontWeight: 600,
      }),
    );
  }
  const gflops = data.map((r) => r.gflops);
  const yDomain = gflops.length ? [Math.min(...gflops) / 1.3, Math.max(...gflops) * 1.3] : [0.1, 10];
  const domain = [sizes[0], sizes[sizes.length - 1]];
  if (domain[0] === domain[1]) domain[1] *= 2;
  return Plot.plot({
    width, height: 300, marginLeft: 52,
    marginRight: 124, // room for the longest end label, "SIMD, all threads"
    marginBottom: 40,
    x: { type: 'log', base: 2, domain, ticks: sizes, tickFormat: String, label: 'sequence length n →' },
    y: { type: 'log', label: '↑ GFLOP/s', grid: true, domain: yDomain, ticks: ticks125(yDomain), tickFormat: '~g' },
    marks: [
      ...marks,
      Plot.tip(data, Plot.pointer({
        x: 'n', y: 'gflops',
        title: (r) => `${r.label}, n = ${r.n}\n${fmtGflops(r.gflops)} GFLOP/s\n${fmtMs(r.ms)} ms per call`,
      })),
    ],
  });
}
