// The weights section of `npm run bench`: scaledDotProductAttention with `weights: true` beside
// the same call without, on [1, n, 64], measured side by side. The weights come from one extra
// sweep over the scores with the main pass's per-row log-sum-exp, so they should cost well under
// a second attention. Both outputs are checked on a few rows against the float64 reference, and
// the weights' rows must sum to 1.
import { attentionTask, checkRows, PeerMismatchError } from './peers.js';
import { goal } from './goal.js';
import { measureInTurns } from './timing.js';

export const WEIGHTS_GOAL = 1.7;

function check(result, t) {
  checkRows('ours: weights: true', result.output.data, t, [0, 1, t.n >> 1, t.n - 1]);
  const w = result.weights.data;
  for (const i of [0, t.n - 1]) {
    let sum = 0;
    for (let j = 0; j < t.n; j++) sum += w[i * t.n + j];
    if (!(Math.abs(sum - 1) <= 1e-4)) throw new PeerMismatchError(`weights row ${i} at n = ${t.n} sums to ${sum}`);
  }
}

/** Returns { results: [{ runner, n, ms }], summary: string[] }. */
export async function runWeightsSection({ simd, quick }) {
  const d = 64;
  const sizes = quick ? [512] : [2048, 4096];
  const results = [];
  for (const n of sizes) {
    const t = attentionTask(n, d);
    check(simd.scaledDotProductAttention(t.q, t.k, t.v, { weights: true }), t);
    const runners = [
      { runner: 'ours: without weights', fn: () => simd.scaledDotProductAttention(t.q, t.k, t.v).output.data },
      { runner: 'ours: weights: true', fn: () => simd.scaledDotProductAttention(t.q, t.k, t.v, { weights: true }).weights.data },
    ];
    const timed = await measureInTurns(runners, { samples: n >= 4096 ? 3 : 5 });
    runners.forEach(({ runner }, i) => results.push({ runner, n, d, ms: timed[i].ms }));
  }
  const summary = sizes.map((n) => {
    const [without, withWeights] = results.filter((r) => r.n === n).map((r) => r.ms);
    return `weights n = ${n}, d = ${d}${n < 2048 ? ' (the goal is for n ≥ 2048)' : ''}: weights: true ${withWeights.toFixed(2)} ms = ` +
      `${goal(withWeights / without, '≤', WEIGHTS_GOAL)} the ${without.toFixed(2)} ms without`;
  });
  return { results, summary };
}
