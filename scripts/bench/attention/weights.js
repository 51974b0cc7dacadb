// The weights section of `npm run bench`: scaledDotProductAttention with `weights: true` beside
// the same call without, on [1, n, 64], measured side by side. The weights come from one extra
// sweep over the scores with the main pass's per-row log-sum-exp, so they should cost well under
// a second attention. Both outputs are checked on a few rows against the float64 reference, and
// the weights' rows must sum to 1.
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { PeerMismatchError, attentionTask, checkRows } from '../shared/check.js';
import { runAlone } from '../shared/standalone.js';
import { ratioTable } from '../shared/table.js';

const WITHOUT = 'ours: without weights', WITH = 'ours: weights: true';

function check(result, t) {
  checkRows(WITH, result.output.data, t, [0, 1, t.n >> 1, t.n - 1]);
  const w = result.weights.data;
  for (const i of [0, t.n - 1]) {
    let sum = 0;
    for (let j = 0; j < t.n; j++) sum += w[i * t.n + j];
    if (!(Math.abs(sum - 1) <= 1e-4)) throw new PeerMismatchError(`weights row ${i} at n = ${t.n} sums to ${sum}`);
  }
}

const section = {
  name: 'weights',
  async run({ quick, builds }) {
    const { simd } = await builds();
    const d = 64;
    const sizes = quick ? [512] : [2048, 4096];
    const results = [];
    for (const n of sizes) {
      const t = attentionTask(n, d);
      check(simd.scaledDotProductAttention(t.q, t.k, t.v, { weights: true }), t);
      const runners = [
        { runner: WITHOUT, fn: () => simd.scaledDotProductAttention(t.q, t.k, t.v).output.data },
        { runner: WITH, fn: () => simd.scaledDotProductAttention(t.q, t.k, t.v, { weights: true }).weights.data },
      ];
      const timed = await measureInTurns(runners, { samples: n >= 4096 ? 3 : 5 });
      runners.forEach(({ runner }, i) => results.push({ runner, n, d, ms: timed[i].ms }));
    }
    const goals = sizes.map((n) => {
      const [without, withWeights] = [WITHOUT, WITH].map((name) => results.find((r) => r.runner === name && r.n === n).ms);
      return measured('weights', `n = ${n}${n < 2048 ? ' (the goal is for n ≥ 2048)' : ''}`, withWeights / without,
        `${withWeights.toFixed(2)} ms ÷ ${without.toFixed(2)} ms`);
    });
    return { results, tables: [ratioTable('weights: true on [1, n, 64]: ms and time ÷ the time without weights', results, WITHOUT)], goals };
  },
};
export default section;

await runAlone(import.meta, section);
