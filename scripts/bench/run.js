// `npm run bench`: attention O = softmax(Q Kᵀ/√d) V on [1, n, d] float32, single thread, side
// by side in one run: our SIMD and scalar wasm builds, plain JS, the peers that are installed,
// and the native build. Prints GFLOP/s and ratios; writes JSON and an SVG chart to build/bench/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadAttention } from '../../dist/index.js';
import { plainJsAttention } from './plain-js.js';
import { loadPeers } from './peers.js';
import { nativeResults } from './native.js';
import { renderChart } from './chart.js';
import { attentionFlops, measure, measureAsync } from './timing.js';

const quick = process.argv.includes('--quick');
const sizes = quick ? [128, 512] : [128, 512, 1024, 2048, 8192];
const widths = quick ? [64] : [64, 128];

function random(count, seed) {
  let state = seed >>> 0;
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    data[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return data;
}

const simd = await loadAttention();
const scalar = await loadAttention({ simd: false });
const peers = await loadPeers();
const runners = [
  { name: 'ours: wasm SIMD', make: (t) => () => simd.scaledDotProductAttention(t.q, t.k, t.v) },
  { name: 'ours: wasm scalar', make: (t) => () => scalar.scaledDotProductAttention(t.q, t.k, t.v) },
  { name: 'plain JS', make: (t) => () => plainJsAttention(t.q.data, t.k.data, t.v.data, t.n, t.n, t.d), maxN: 2048 },
  ...peers,
];

const results = [];
for (const d of widths) {
  for (const n of sizes) {
    const shape = [1, n, d];
    const t = { n, d, q: { data: random(n * d, 1), shape }, k: { data: random(n * d, 2), shape }, v: { data: random(n * d, 3), shape } };
    const flops = attentionFlops(n, n, d);
    for (const runner of runners) {
      if (runner.maxN && n > runner.maxN) continue;
      let fn;
      try {
        fn = await runner.make(t);
      } catch (error) {
        console.log(`${runner.name} at n = ${n}, d = ${d}: skipped (${error.message})`);
        continue;
      }
      const options = { samples: n >= 4096 ? 3 : 7 };
      const ms = runner.async ? await measureAsync(fn, options) : measure(fn, options);
      results.push({ runner: runner.name, n, d, ms, gflops: flops / ms / 1e6 });
      await runner.release?.();
    }
  }
}
results.push(...nativeResults(sizes, widths));

// Table: one row per shape, GFLOP/s per runner, then our SIMD build's ratio to each.
const names = [...new Set(results.map((r) => r.runner))];
const lookup = (name, n, d) => results.find((r) => r.runner === name && r.n === n && r.d === d);
const header = ['d', 'n', ...names, ...names.slice(1).map((x) => `SIMD ÷ ${x}`)];
const rows = [];
for (const d of widths) {
  for (const n of sizes) {
    const ours = lookup(names[0], n, d)?.gflops;
    const cells = names.map((x) => lookup(x, n, d)?.gflops);
    rows.push([d, n, ...cells.map((g) => (g === undefined ? '—' : g.toFixed(1))),
      ...cells.slice(1).map((g) => (g === undefined ? '—' : (ours / g).toFixed(2)))]);
  }
}
const widthsOf = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)));
const line = (r) => r.map((c, i) => String(c).padStart(widthsOf[i])).join('  ');
console.log(`GFLOP/s for attention on [1, n, d] (4·n²·d flops), single thread, Node ${process.versions.node}`);
console.log(line(header));
for (const r of rows) console.log(line(r));

mkdirSync('build/bench', { recursive: true });
writeFileSync('build/bench/results.json', JSON.stringify({ node: process.versions.node, date: new Date().toISOString(), results }, null, 2));
writeFileSync('build/bench/chart.svg', renderChart(results, widths));
console.log('wrote build/bench/results.json and build/bench/chart.svg');
