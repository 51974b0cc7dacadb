// The masked section of `npm run bench`: attention on [1, n, 64] with a causal mask and with
// validLens = n/4, against our own unmasked time (the fused kernel skips key blocks that are
// wholly masked, so these should cost about half and a quarter) and against the peers, measured
// side by side at each n. The peers run unmasked: their kernels compute every score whatever the
// mask, so a masked peer costs at least as much, and the ratio to their unmasked time is a lower
// bound on our lead. Each of our runners is checked on a few rows against the float64 reference
// over exactly the keys its mask leaves.
import { scaledDotProductAttention } from '../../tests/js/reference.js';
import { attentionTask, PeerMismatchError, queryRows } from './peers.js';
import { goal } from './goal.js';

const TOLERANCE = 1e-3;
export const MASKED_GOALS = { causal: 0.55, quarter: 0.35 };

// Row i of the output against the reference over the first visible(i) keys only.
function checkMasked(name, out, { n, d, q, k, v }, visible) {
  for (const i of new Set([0, 1, n >> 1, n - 1])) {
    const m = visible(i);
    const keys = (x) => ({ data: x.data.subarray(0, m * d), shape: [1, m, d] });
    const want = scaledDotProductAttention(queryRows(q.data, d, [i]), keys(k), keys(v)).output.data;
    for (let c = 0; c < d; c++) {
      const diff = Math.abs(out[i * d + c] - want[c]);
      if (!(diff <= TOLERANCE)) throw new PeerMismatchError(`${name} at n = ${n}: row ${i}, column ${c} differs by ${diff}`);
    }
  }
}

function ourRunners(simd) {
  const runner = (name, options, visible) => ({
    name,
    make: (t) => {
      const fn = () => simd.scaledDotProductAttention(t.q, t.k, t.v, options(t)).output.data;
      checkMasked(name, fn(), t, visible(t));
      return fn;
    },
  });
  return [
    runner('ours: unmasked', () => ({}), (t) => () => t.n),
    runner('ours: causal', () => ({ causal: true }), () => (i) => i + 1),
    runner('ours: validLens n/4', (t) => ({ validLens: [t.n / 4] }), (t) => () => t.n / 4),
  ];
}

/** Returns { results: [{ runner, n, ms }], summary: string[] }. */
export async function runMaskedSection({ simd, peers, measureRunners, quick }) {
  const d = 64;
  const sizes = quick ? [512] : [1024, 4096];
  const results = [];
  for (const n of sizes) {
    const list = [...ourRunners(simd), ...peers.filter((p) => !(p.maxN && n > p.maxN))];
    const timed = await measureRunners(list, attentionTask(n, d), `masked n = ${n}`, { samples: n >= 4096 ? 3 : 7 });
    results.push(...timed.map(({ runner, ms }) => ({ runner, n, d, ms })));
  }
  const summary = sizes.map((n) => {
    const ms = (name) => results.find((r) => r.runner === name && r.n === n)?.ms;
    const plain = ms('ours: unmasked'), causal = ms('ours: causal'), quarter = ms('ours: validLens n/4');
    const best = results.filter((r) => r.n === n && !r.runner.startsWith('ours')).sort((a, b) => a.ms - b.ms)[0];
    return `masked n = ${n}, d = ${d}: causal ${causal.toFixed(2)} ms = ${goal(causal / plain, '≤', MASKED_GOALS.causal)} ` +
      `of our unmasked ${plain.toFixed(2)} ms; validLens n/4 ${quarter.toFixed(2)} ms = ${goal(quarter / plain, '≤', MASKED_GOALS.quarter)}` +
      (best ? `; the best peer (unmasked, ${best.runner}) takes ${best.ms.toFixed(2)} ms: ` +
        `${(best.ms / causal).toFixed(1)}× our causal, ${(best.ms / quarter).toFixed(1)}× our validLens n/4` : '; no peer measured');
  });
  return { results, summary };
}
