// The peak section of `npm run bench`: SDPA's throughput against the 2x16 GEMM micro-kernel's
// own, both measured in this process (microkernel.js), SDPA right after the micro-kernel so that
// the two share the machine's state, for each SIMD build against the micro-kernel compiled as it
// is (relaxed SIMD's fused multiply-add, or SIMD128's multiply and add); and SDPA against the
// best peer from section 1 of the run.
import { attentionTask, checkRows } from './peers.js';
import { goal } from './goal.js';
import { microkernelThroughput, relaxedMicrokernelThroughput } from './microkernel.js';
import { attentionFlops, measureInTurns } from './timing.js';

export const PEAK_GOALS = { perMicrokernel: 0.9, vsPeers: 1.45 };

/**
 * builds: [[name, loaded module]] for the relaxed-SIMD load, then the SIMD128 one; results:
 * section 1's rows ({ runner, n, d, gflops }). Returns { microkernels (by build name), results,
 * summary }.
 */
export async function runPeakSection({ builds, results: attention, quick }) {
  const d = 64;
  const sizes = quick ? [512] : [512, 1024];
  const [[relaxedName], [simd128Name]] = builds;
  const microkernels = {
    [relaxedName]: await relaxedMicrokernelThroughput(d),
    [simd128Name]: await microkernelThroughput(),
  };
  const tasks = builds.flatMap(([name, attn]) => sizes.map((n) => {
    const t = attentionTask(n, d);
    const fn = () => attn.scaledDotProductAttention(t.q, t.k, t.v).output.data;
    checkRows(name, fn(), t, [0, n - 1]);
    return { name, n, fn };
  }));
  const timed = await measureInTurns(tasks, { samples: 9 });
  // The micro-kernel's figure is its fastest sample, so SDPA's is too here.
  const results = tasks.map(({ name, n }, i) => ({ runner: name, n, d, ms: timed[i].best, gflops: attentionFlops(n, n, d) / timed[i].best / 1e6 }));
  const summary = sizes.flatMap((n) => {
    const lines = builds.map(([name]) => {
      const { gflops } = results.find((r) => r.runner === name && r.n === n);
      const peak = microkernels[name].gflops;
      return `SDPA vs micro-kernel n = ${n}, d = ${d}, ${name}: ${gflops.toFixed(1)} GFLOP/s, the 2x16 GEMM micro-kernel ` +
        `built alike ${peak.toFixed(1)} GFLOP/s (this process): ${goal(gflops / peak, '≥', PEAK_GOALS.perMicrokernel)}`;
    });
    const ours = attention.find((r) => r.runner === relaxedName && r.n === n && r.d === d);
    const best = attention.filter((r) => r.n === n && r.d === d && /^(tfjs|onnxruntime)/.test(r.runner))
      .sort((a, b) => b.gflops - a.gflops)[0];
    lines.push(ours && best
      ? `SDPA vs peers n = ${n}, d = ${d} (section 1): ours ${ours.gflops.toFixed(1)} GFLOP/s, best of onnxruntime-web and ` +
        `tfjs-wasm ${best.gflops.toFixed(1)} (${best.runner}): ${goal(ours.gflops / best.gflops, '≥', PEAK_GOALS.vsPeers)}`
      : `SDPA vs peers n = ${n}: not measured in this run`);
    return lines;
  });
  return { microkernels, results, summary };
}
