// The peak section of `npm run bench`: SDPA's throughput against the 2x16 GEMM micro-kernel's
// own, both measured in this process (shared/microkernel.js), SDPA right after the micro-kernel
// so that the two share the machine's state, for each SIMD build against the micro-kernel
// compiled as it is (relaxed SIMD's fused multiply-add, or SIMD128's multiply and add); and SDPA
// against the best peer of the sdpa section of the same run (not measured when it did not run).
import { attentionFlops, measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { attentionTask, checkRows, oneLine } from '../shared/check.js';
import { OURS } from '../shared/context.js';
import { microkernelThroughput, relaxedMicrokernelThroughput } from '../shared/microkernel.js';
import { runAlone } from '../shared/standalone.js';

const D = 64;

// Ours (relaxed SIMD) over the best of onnxruntime-web and tfjs-wasm, from the sdpa section's rows.
function vsPeers(attention, n) {
  const here = attention?.filter((r) => r.n === n && r.d === D) ?? [];
  const ours = here.find((r) => r.runner === OURS.simd);
  const best = here.filter((r) => /^(tfjs|onnxruntime)/.test(r.runner)).sort((a, b) => b.gflops - a.gflops)[0];
  return ours && best
    ? measured('sdpaVsPeers', `n = ${n}`, ours.gflops / best.gflops, `ours ${ours.gflops.toFixed(1)} GFLOP/s, ${best.runner} ${best.gflops.toFixed(1)} (section sdpa)`)
    : measured('sdpaVsPeers', `n = ${n}`, null, 'the sdpa section did not run with a peer');
}

async function run({ quick, builds, earlier }) {
  const { simd, simd128 } = await builds();
  const loads = [[OURS.simd, simd], [OURS.simd128, simd128]];
  const sizes = quick ? [512] : [512, 1024];
  let microkernels;
  try {
    microkernels = { [OURS.simd]: await relaxedMicrokernelThroughput(D), [OURS.simd128]: await microkernelThroughput() };
  } catch (error) {
    const why = `the micro-kernel did not build or run (${oneLine(error)})`;
    return { results: null, notes: [`peak: ${why}`], goals: [measured('sdpaPerMicrokernel', 'n ≥ 512', null, why), ...sizes.map((n) => vsPeers(earlier.sdpa?.results, n))] };
  }
  const tasks = loads.flatMap(([name, attn]) => sizes.map((n) => {
    const t = attentionTask(n, D);
    const fn = () => attn.scaledDotProductAttention(t.q, t.k, t.v).output.data;
    checkRows(name, fn(), t, [0, n - 1]);
    return { name, n, fn };
  }));
  const timed = await measureInTurns(tasks, { samples: 9 });
  // The micro-kernel's figure is its fastest sample, so SDPA's is too here.
  const results = tasks.map(({ name, n }, i) => ({ runner: name, n, d: D, ms: timed[i].best, gflops: attentionFlops(n, n, D) / timed[i].best / 1e6 }));
  const goals = sizes.flatMap((n) => [
    ...loads.map(([name]) => {
      const { gflops } = results.find((r) => r.runner === name && r.n === n);
      const peak = microkernels[name].gflops;
      return measured('sdpaPerMicrokernel', `n = ${n}, ${name}`, gflops / peak,
        `SDPA ${gflops.toFixed(1)} GFLOP/s, the micro-kernel built alike ${peak.toFixed(1)} (this process)`);
    }),
    vsPeers(earlier.sdpa?.results, n),
  ]);
  const notes = ['2x16 GEMM micro-kernel (cpp/bench/microkernel_loop.hpp in wasm, this process) and SDPA, GFLOP/s (fastest samples):',
    ...Object.entries(microkernels).map(([name, microkernel]) => `  ${name}: micro-kernel ${microkernel.gflops.toFixed(1)}; SDPA ` +
      results.filter((r) => r.runner === name).map((r) => `n = ${r.n}: ${r.gflops.toFixed(1)}`).join(', '))];
  return { results: { microkernels, sdpa: results }, notes, goals };
}

const section = { name: 'peak', run };
export default section;

await runAlone(import.meta, section);
