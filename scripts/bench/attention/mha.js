// The multi-head section of `npm run bench`: self-attention as torch.nn.MultiheadAttention
// computes it (E = 512, 8 heads, with its four projections), our relaxed-SIMD and scalar loads
// against onnxruntime-web running the same projections around the com.microsoft
// MultiHeadAttention op, and around a graph of standard ops (peers/onnxruntime.js). Ours are
// checked against the float64 reference, the peers element by element against ours.
import { multiHeadAttention } from '../../../harness/reference.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { measured } from '../goals.js';
import { MHA_CHECK_N, loadMhaPeers } from '../peers/onnxruntime.js';
import { expectClose } from '../shared/check.js';
import { OURS } from '../shared/context.js';
import { measureRunners } from '../shared/runners.js';
import { runAlone } from '../shared/standalone.js';
import { fmt } from '../shared/table.js';

export const MHA = { embedDim: 512, numHeads: 8 };
const E = MHA.embedDim;

// Multi-head self-attention on x [1, n, E]: four E x E projections (q, k, v, out) at 2·n·E² each,
// plus attention over all heads, 4·n²·(E/h)·h = 4·n²·E.
export const mhaFlops = (n) => 4 * 2 * n * E * E + 4 * n * n * E;

// Seeded weights in torch.nn.MultiheadAttention's state-dict layout (Linear weights [out, in]),
// scaled as PyTorch initialises them (Xavier-uniform in_proj, 1/√E out_proj); random biases so
// that they are exercised too.
const stateDict = () => ({
  in_proj_weight: { data: random(3 * E * E, 101, Math.sqrt(6 / (4 * E))), shape: [3 * E, E] },
  in_proj_bias: { data: random(3 * E, 102, 0.1), shape: [3 * E] },
  'out_proj.weight': { data: random(E * E, 103, 1 / Math.sqrt(E)), shape: [E, E] },
  'out_proj.bias': { data: random(E, 104, 0.1), shape: [E] },
});

// One row per runner; per n its GFLOP/s, its ms and our relaxed-SIMD load's ratio to it.
function table(results, sizes) {
  const names = [...new Set(results.map((r) => r.runner))];
  const lookup = (name, n) => results.find((r) => r.runner === name && r.n === n);
  return {
    title: `Multi-head self-attention, x [1, n, ${E}], ${MHA.numHeads} heads, needWeights: false ` +
      '(4·2·n·E² + 4·n²·E flops), single thread',
    header: ['runner', ...sizes.flatMap((n) => [`n=${n} GFLOP/s`, 'ms', 'SIMD ÷'])],
    rows: names.map((name) => [name, ...sizes.flatMap((n) => {
      const r = lookup(name, n), ours = lookup(OURS.simd, n);
      return [fmt(r?.gflops), fmt(r?.ms, 2), r && ours ? (ours.gflops / r.gflops).toFixed(2) : '—'];
    })]),
  };
}

const section = {
  name: 'mha',
  async run({ quick, log, builds }) {
    const { simd, scalar, simdMemory } = await builds();
    const sizes = quick ? [128] : [128, 512, 1024];
    const dict = stateDict();
    const ours = [[OURS.simd, simd], [OURS.scalar, scalar]].map(([name, attn]) => {
      const module = new attn.MultiHeadAttention(MHA).loadStateDict(dict);
      const forward = (x, n) => module.forward({ data: x, shape: [1, n, E] }, undefined, undefined, { needWeights: false }).output.data;
      return { name, module, forward };
    });
    try {
      const n = MHA_CHECK_N, x = random(n * E, 105);
      const want = multiHeadAttention(dict, MHA, { data: x, shape: [1, n, E] }).output.data;
      for (const { name, forward } of ours) expectClose(`${name} multi-head at n = ${n} vs the float64 reference`, forward(x, n), want);
      const peers = await loadMhaPeers({ ...MHA, dict, log }); // each checked against the reference at n = 17
      // Ours as runners like the peers': make() checks the output against our relaxed-SIMD load's.
      const runners = [...ours.map(({ name, forward }) => ({
        name,
        make: ({ n, x, expected }) => {
          expectClose(`${name} multi-head at n = ${n} vs ${OURS.simd}`, forward(x, n), expected);
          return () => forward(x, n);
        },
      })), ...peers];
      const results = [];
      for (const n of sizes) {
        const x = random(n * E, 200 + n);
        const task = { n, x, expected: ours[0].forward(x, n) }; // peers compare every element with it
        for (const { runner, ms } of await measureRunners(runners, task, `n = ${n}`, { log })) {
          results.push({ runner, n, embedDim: E, heads: MHA.numHeads, ms, gflops: mhaFlops(n) / ms / 1e6 });
        }
      }
      const at512 = results.filter((r) => r.n === 512);
      const mine = at512.find((r) => r.runner === OURS.simd);
      const best = at512.filter((r) => !r.runner.startsWith('ours')).sort((a, b) => b.gflops - a.gflops)[0];
      const goals = mine ? [measured('mhaVsPeers', 'n = 512', best && mine.gflops / best.gflops,
        best ? `ours ${mine.gflops.toFixed(1)} GFLOP/s, ${best.runner} ${best.gflops.toFixed(1)}` : 'no peer ran')] : [];
      const mainInstanceBytes = simdMemory.buffer.byteLength;
      return {
        results: { ...MHA, flops: '4·2·n·E² + 4·n²·E', results, mainInstanceBytes },
        tables: [table(results, sizes)],
        notes: [`Wasm memory of our relaxed-SIMD instance after this and every section before it: ${(mainInstanceBytes / 2 ** 20).toFixed(1)} MiB`],
        goals,
      };
    } finally {
      for (const { module } of ours) module.dispose();
    }
  },
};
export default section;

await runAlone(import.meta, section);
