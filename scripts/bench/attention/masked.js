// The masked section of `npm run bench`: attention on [1, n, 64] with a causal mask and with
// validLens = n/4, against our own unmasked time (the fused kernel skips key blocks that are
// wholly masked, so these should cost about half and a quarter) and against the peers, measured
// side by side at each n. The peers run unmasked: their kernels compute every score whatever the
// mask, so a masked peer costs at least as much, and the ratio to their unmasked time is a lower
// bound on our lead. Each of our runners is checked on a few rows against the float64 reference
// over exactly the keys its mask leaves.
import { scaledDotProductAttention } from '../../../harness/reference.js';
import { measured } from '../goals.js';
import { PeerMismatchError, TOLERANCE, attentionTask, queryRows } from '../shared/check.js';
import { measureRunners } from '../shared/runners.js';
import { runAlone } from '../shared/standalone.js';
import { ratioTable } from '../shared/table.js';

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

// Per n: causal and validLens n/4 against our unmasked time (the goals), and what the best peer
// (unmasked) takes against each.
function goalsOf(results, sizes) {
  return sizes.flatMap((n) => {
    const ms = (name) => results.find((r) => r.runner === name && r.n === n)?.ms;
    const plain = ms('ours: unmasked'), causal = ms('ours: causal'), quarter = ms('ours: validLens n/4');
    const best = results.filter((r) => r.n === n && !r.runner.startsWith('ours')).sort((a, b) => a.ms - b.ms)[0];
    const peer = (mine) => (best ? `; the best peer unmasked (${best.runner}) ${best.ms.toFixed(2)} ms, ${(best.ms / mine).toFixed(1)}× ours` : '');
    return [
      measured('maskedCausal', `n = ${n}`, causal / plain, `${causal.toFixed(2)} ms ÷ ${plain.toFixed(2)} ms${peer(causal)}`),
      measured('maskedQuarter', `n = ${n}`, quarter / plain, `${quarter.toFixed(2)} ms ÷ ${plain.toFixed(2)} ms${peer(quarter)}`),
    ];
  });
}

const section = {
  name: 'masked',
  async run({ quick, log, builds, peers }) {
    const { simd } = await builds();
    const d = 64;
    const sizes = quick ? [512] : [1024, 4096];
    const results = [];
    for (const n of sizes) {
      const list = [...ourRunners(simd), ...(await peers()).filter((p) => !(p.maxN && n > p.maxN))];
      const timed = await measureRunners(list, attentionTask(n, d), `masked n = ${n}`, { samples: n >= 4096 ? 3 : 7, log });
      results.push(...timed.map(({ runner, ms }) => ({ runner, n, d, ms })));
    }
    return {
      results,
      tables: [ratioTable('Masked attention on [1, n, 64]: ms and time ÷ our unmasked time (peers unmasked), single thread', results, 'ours: unmasked')],
      goals: goalsOf(results, sizes),
    };
  },
};
export default section;

await runAlone(import.meta, section);
