// The first section of `npm run bench`: O = softmax(Q Kᵀ/√d) V on [1, n, d], single thread, our
// three loads (relaxed SIMD, SIMD128, scalar), plain JavaScript, the peers (peers/peers.js) and
// our native build (shared/native.js, skipped with a line where it cannot be built), every runner checked against the float64 reference before it is timed and
// all of them timed side by side at each shape. Prints GFLOP/s (4·n²·d flops) per runner and our
// default load's ratio to each.
import { plainJsAttention } from '../../../web/shared/plain-js-attention.js';
import { attentionFlops } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { attentionTask, checked, oneLine } from '../shared/check.js';
import { OURS } from '../shared/context.js';
import { nativeResults } from '../shared/native.js';
import { measureRunners } from '../shared/runners.js';
import { runAlone } from '../shared/standalone.js';
import { fmt } from '../shared/table.js';

const isPeer = (runner) => !runner.startsWith('ours') && runner !== 'plain JS';

// Our default load's GFLOP/s over the best peer's at n ≥ 512, d = 64 (issue 5's goal).
function goalsOf(results, sizes) {
  return sizes.filter((n) => n >= 512).flatMap((n) => {
    const here = results.filter((r) => r.n === n && r.d === 64);
    const ours = here.find((r) => r.runner === OURS.simd);
    const best = here.filter((r) => isPeer(r.runner)).sort((a, b) => b.gflops - a.gflops)[0];
    return ours && best
      ? [measured('attentionVsPeers', `n = ${n}`, ours.gflops / best.gflops, `ours ${ours.gflops.toFixed(1)} GFLOP/s, ${best.runner} ${best.gflops.toFixed(1)}`)]
      : [measured('attentionVsPeers', `n = ${n}`, null, 'no peer ran')];
  });
}

// One row per shape: GFLOP/s per runner, then our default load's ratio to each of the others.
function table(results, sizes, widths) {
  const names = [...new Set(results.map((r) => r.runner))];
  const lookup = (name, n, d) => results.find((r) => r.runner === name && r.n === n && r.d === d);
  const rows = widths.flatMap((d) => sizes.map((n) => {
    const ours = lookup(OURS.simd, n, d)?.gflops;
    const cells = names.map((x) => lookup(x, n, d)?.gflops);
    return [d, n, ...cells.map((g) => fmt(g)), ...cells.slice(1).map((g) => (g === undefined ? '—' : (ours / g).toFixed(2)))];
  }));
  return {
    title: `GFLOP/s for attention on [1, n, d] (4·n²·d flops), single thread, Node ${process.versions.node}`,
    header: ['d', 'n', ...names, ...names.slice(1).map((x) => `SIMD ÷ ${x}`)],
    rows,
  };
}

const section = {
  name: 'sdpa',
  async run({ quick, log, builds, peers }) {
    const { simd, simd128, scalar } = await builds();
    const sizes = quick ? [128, 512] : [128, 512, 1024, 2048, 8192];
    const widths = quick ? [64] : [64, 128];
    const sdpa = (attn) => (t) => () => attn.scaledDotProductAttention(t.q, t.k, t.v).output.data;
    const runners = [
      ...[{ name: OURS.simd, make: sdpa(simd) }, { name: OURS.simd128, make: sdpa(simd128) }, { name: OURS.scalar, make: sdpa(scalar) },
        { name: 'plain JS', make: (t) => () => plainJsAttention(t.q.data, t.k.data, t.v.data, t.n, t.n, t.d), maxN: 2048 },
      ].map(checked), // the peers come checked already
      ...await peers(),
    ];
    const results = [];
    for (const d of widths) {
      for (const n of sizes) {
        const list = runners.filter((runner) => !(runner.maxN && n > runner.maxN));
        const timed = await measureRunners(list, attentionTask(n, d), `n = ${n}, d = ${d}`, { samples: n >= 4096 ? 3 : 7, log });
        for (const { runner, ms } of timed) results.push({ runner, n, d, ms, gflops: attentionFlops(n, n, d) / ms / 1e6 });
      }
    }
    try {
      results.push(...nativeResults(sizes, widths));
    } catch (error) {
      log(`ours: native: skipped (${oneLine(error)})`); // a machine without the native toolchain still compares the rest
    }
    return { results, tables: [table(results, sizes, widths)], goals: goalsOf(results, sizes) };
  },
};
export default section;

await runAlone(import.meta, section);
