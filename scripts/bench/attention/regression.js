// The regression section of `npm run bench`: Nadaraya-Watson kernel regression (the notes' first
// mechanism), single thread, wasm with relaxed SIMD:
//   - at d = 1 (the notes' examples), n keys and n queries: kernel evaluations per second of each
//     kernel and of leaveOneOut (one bandwidth), the Gaussian against the rate of
//     500 M per second;
//   - a 33000 × 33000 Gaussian regression at d = 1 (σ = 0.1, data in [−1, 1)), kernelRegression
//     and leaveOneOut, against the 5 seconds (not in --quick);
//   - at d = 64 (queries, keys and values [n, 64]), the Gaussian, boxcar and Epanechnikov against
//     scaledDotProductAttention on the same shapes, timed in turns: SDPA's time ÷ theirs, i.e.
//     their GFLOP/s counting SDPA's 4 n² d flops for both, ÷ SDPA's.
// Each call is checked on a few queries against the float64 reference (harness/reference.js).
import { kernelRegression } from '../../../harness/reference.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { expectClose } from '../shared/check.js';
import { runAlone } from '../shared/standalone.js';

const KERNELS = ['gaussian', 'boxcar', 'epanechnikov'];
const RATE_TARGET = 500e6; // kernel evaluations per second, issue 32

const LARGE = { n: 33000, bandwidth: 0.1, seconds: 5 }; // issue 32's time for it

// [n, d] uniform in [0, 1): keys and queries on the same interval, so every kernel reaches.
const matrix = (n, d, seed) => ({ data: random(n * d, seed).map((x) => (x + 1) / 2), shape: [n, d] });

// The d = 1 section's data (the threads section times the same calls): keys, values and
// queries [n, 1] at σ = 0.05.
export const regressionTask = (n) => ({
  bandwidth: 0.05, data: { keys: matrix(n, 1, 1), values: matrix(n, 1, 2), queries: matrix(n, 1, 3) },
});

// The Gaussian kernelRegression and leaveOneOut (one bandwidth) of a task, as this section and
// the threads section time them.
export const gaussianCalls = (attn, { data, bandwidth }) => [
  { name: 'kernelRegression', fn: () => attn.kernelRegression({ ...data, kernel: 'gaussian', bandwidth }).output.data },
  { name: 'leaveOneOut', fn: () => attn.leaveOneOut({ keys: data.keys, values: data.values, bandwidths: [bandwidth] }).errors },
];

// The first few queries' outputs against the float64 reference.
function check(attn, { keys, values, queries }, kernel, bandwidth) {
  const [n, d] = queries.shape;
  const some = Math.min(n, 5);
  const head = { data: queries.data.subarray(0, some * d), shape: [some, d] };
  const got = attn.kernelRegression({ keys, values, queries: head, kernel, bandwidth }).output.data;
  const want = kernelRegression({ keys, values, queries: head, kernel, bandwidth }).output.data;
  expectClose(`kernelRegression ${kernel}, d = ${d}`, got, want);
}

async function run({ quick, builds }) {
  const { simd } = await builds();
  const results = [], goals = [], rows = [];
  {
    const n = quick ? 2048 : 8192, task = regressionTask(n), { bandwidth, data } = task;
    for (const kernel of KERNELS) check(simd, data, kernel, bandwidth);
    const [, leaveOneOut] = gaussianCalls(simd, task);
    const calls = [
      ...KERNELS.map((kernel) => ({ name: `kernelRegression ${kernel}`, fn: () => simd.kernelRegression({ ...data, kernel, bandwidth }).output.data })),
      { name: 'leaveOneOut gaussian', fn: leaveOneOut.fn },
    ];
    const times = await measureInTurns(calls.map(({ fn }) => ({ fn })), { samples: quick ? 3 : 5, sampleMs: 50 });
    calls.forEach(({ name }, i) => {
      const rate = (n * n) / (times[i].ms / 1e3);
      results.push({ name: `${name}, d = 1, n = m = ${n}`, ms: times[i].ms, evaluationsPerSecond: rate });
      rows.push([`${name}, d = 1, n = m = ${n}`, times[i].ms.toFixed(1), `${(rate / 1e6).toFixed(0)} M/s`]);
      if (name.endsWith('gaussian')) {
        goals.push(measured('regressionRate', `${name.split(' ')[0]}, n = ${n}`, rate / RATE_TARGET, `${(rate / 1e6).toFixed(0)} M evaluations/s`));
      }
    });
  }
  {
    const n = quick ? 512 : 1024, d = 64, bandwidth = 4;
    const [q, k, v] = [matrix(n, d, 4), matrix(n, d, 5), matrix(n, d, 6)];
    const data = { keys: k, values: v, queries: q };
    const as3d = (x) => ({ data: x.data, shape: [1, n, d] });
    const sdpa = () => simd.scaledDotProductAttention(as3d(q), as3d(k), as3d(v)).output.data;
    const regression = (kernel) => () => simd.kernelRegression({ ...data, kernel, bandwidth }).output.data;
    for (const kernel of KERNELS) check(simd, data, kernel, bandwidth);
    const [attention, ...times] = await measureInTurns([sdpa, ...KERNELS.map(regression)].map((fn) => ({ fn })), { samples: quick ? 3 : 5, sampleMs: 50 });
    const gflops = (ms) => (4 * n * n * d) / (ms * 1e6);
    for (const [kernel, time] of KERNELS.map((kernel, i) => [kernel, times[i]])) {
      const ratio = attention.ms / time.ms;
      results.push({ name: `kernelRegression ${kernel}, d = ${d}, n = m = ${n}`, ms: time.ms, sdpaMs: attention.ms, ratio });
      rows.push([`kernelRegression ${kernel}, d = ${d}, n = m = ${n} (SDPA's flops)`, time.ms.toFixed(1), `${gflops(time.ms).toFixed(1)} GFLOP/s, ${ratio.toFixed(2)} of SDPA's ${gflops(attention.ms).toFixed(1)}`]);
      if (kernel === 'gaussian') goals.push(measured('regressionVsAttention', `n = ${n}, d = ${d}`, ratio, `${time.ms.toFixed(1)} ms ÷ SDPA's ${attention.ms.toFixed(1)} ms`));
    }
  }
  if (!quick) {
    const { n, bandwidth } = LARGE;
    const unit = (seed) => ({ data: random(n, seed), shape: [n, 1] });
    const data = { keys: unit(7), values: unit(8), queries: unit(9) };
    check(simd, data, 'gaussian', bandwidth);
    const calls = gaussianCalls(simd, { data, bandwidth });
    const times = await measureInTurns(calls.map(({ fn }) => ({ fn })), { samples: 3, sampleMs: 0 });
    calls.forEach(({ name }, i) => {
      const seconds = times[i].ms / 1e3;
      results.push({ name: `${name} gaussian, d = 1, n = m = ${n}`, ms: times[i].ms });
      rows.push([`${name} gaussian, d = 1, n = m = ${n} (σ = ${bandwidth}, data in [−1, 1))`, times[i].ms.toFixed(0), `${(n * n / seconds / 1e6).toFixed(0)} M/s`]);
      goals.push(measured('regressionLarge', `${name}, n = ${n}`, seconds / LARGE.seconds, `${seconds.toFixed(2)} s`));
    });
  }
  const table = {
    title: 'Kernel regression (Nadaraya-Watson), single thread, wasm relaxed SIMD',
    header: ['call', 'ms', 'rate'],
    rows,
  };
  return { results, tables: [table], goals };
}

const section = { name: 'regression', run };
export default section;

await runAlone(import.meta, section);
