// The peak section of `npm run bench`: SDPA's throughput against the 2x16 GEMM micro-kernel's
// own, both measured in this process (microkernel.js), SDPA right after the micro-kernel so that
// the two share the machine's state; and SDPA against the best peer from section 1 of the run.
import { attentionTask, checkRows } from './peers.js';
import { goal } from './goal.js';
import { microkernelThroughput } from './microkernel.js';
import { attentionFlops, measureInTurns } from './timing.js';

export const PEAK_GOALS = { perMicrokernel: 0.9, vsPeers: 1.45 };

/** results: section 1's rows ({ runner, n, d, gflops }). Returns { microkernel, results, summary }. */
export async function runPeakSection({ simd, simdName, results: attention, quick }) {
  const d = 64;
  const sizes = quick ? [512] : [512, 1024];
  const microkernel = await microkernelThroughput();
  const runners = sizes.map((n) => {
    const t = attentionTask(n, d);
    const fn = () => simd.scaledDotProductAttention(t.q, t.k, t.v).output.data;
    checkRows(simdName, fn(), t, [0, n - 1]);
    return { fn };
  });
  const timed = await measureInTurns(runners, { samples: 9 });
  // The micro-kernel's figure is its fastest sample (kernel_bench), so SDPA's is too here.
  const results = sizes.map((n, i) => ({ runner: simdName, n, d, ms: timed[i].best, gflops: attentionFlops(n, n, d) / timed[i].best / 1e6 }));
  const summary = sizes.flatMap((n, i) => {
    const { gflops } = results[i];
    const lines = [`SDPA vs micro-kernel n = ${n}, d = ${d}: ours ${gflops.toFixed(1)} GFLOP/s, the 2x16 GEMM micro-kernel ` +
      `${microkernel.gflops.toFixed(1)} GFLOP/s (wasm SIMD, this process): ${goal(gflops / microkernel.gflops, '≥', PEAK_GOALS.perMicrokernel)}`];
    const ours = attention.find((r) => r.runner === simdName && r.n === n && r.d === d);
    const best = attention.filter((r) => r.n === n && r.d === d && /^(tfjs|onnxruntime)/.test(r.runner))
      .sort((a, b) => b.gflops - a.gflops)[0];
    lines.push(ours && best
      ? `SDPA vs peers n = ${n}, d = ${d} (section 1): ours ${ours.gflops.toFixed(1)} GFLOP/s, best of onnxruntime-web and ` +
        `tfjs-wasm ${best.gflops.toFixed(1)} (${best.runner}): ${goal(ours.gflops / best.gflops, '≥', PEAK_GOALS.vsPeers)}`
      : `SDPA vs peers n = ${n}: not measured in this run`);
    return lines;
  });
  return { microkernel, results, summary };
}
