// The primitives section of `npm run bench`: the notes' building blocks called one at a time,
// each against the bound its work sets, measured side by side in one process, single thread.
// softmax and maskedSoftmax read and write each entry once, with an exp between: the bound is
// the memory traffic every call of the package makes anyway, its input copied into the wasm
// heap and its output copied out (timed here as those two copies of the same bytes). score
// (scaled dot) and bmm are matrix products: the bound is the 2x16 GEMM micro-kernel's own
// throughput (shared/microkernel.js, relaxed SIMD's, as the build timed here), as for SDPA in the peak section. Each call is checked
// on its first matrix against the float64 reference before it is timed.
import * as reference from '../../../harness/reference.js';
import { freshCopy } from '../../../web/lib/heap.js';
import { uniforms } from '../../../web/shared/random.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { expectClose, oneLine } from '../shared/check.js';
import { relaxedMicrokernelThroughput } from '../shared/microkernel.js';
import { runAlone } from '../shared/standalone.js';

const D = 64;

const tensor = (shape, seed, scale = 1) => ({ data: uniforms(shape.reduce((a, b) => a * b), seed).map((x) => scale * x), shape });
const first = ({ data, shape: [, ...rest] }) => ({ data: data.subarray(0, rest.reduce((a, b) => a * b, 1)), shape: [1, ...rest] });

// The calls at one size: scores [batch, n, n] (logits up to ±8, so that the exp matters), q and
// k [batch, n, 64], and the valid lengths of maskedSoftmax (a different one per matrix).
function calls(attn, batch, n) {
  const x = tensor([batch, n, n], 1, 8);
  const q = tensor([batch, n, D], 2), k = tensor([batch, n, D], 3), v = tensor([batch, n, D], 4);
  const lens = Array.from({ length: batch }, (_, b) => Math.max(1, n - 37 * b));
  const staging = new Float32Array(x.data.length);
  return {
    copies: () => { staging.set(x.data); return freshCopy(staging); },
    softmax: { fn: () => attn.softmax(x).data, want: () => reference.softmax(first(x)).data },
    maskedSoftmax: { fn: () => attn.maskedSoftmax(x, lens).data, want: () => reference.maskedSoftmax(first(x), lens.slice(0, 1)).data },
    score: { fn: () => attn.score(q, k).data, want: () => reference.score(first(q), first(k)).data, flops: 2 * batch * n * n * D },
    bmm: { fn: () => attn.bmm(x, v).data, want: () => reference.bmm(first(x), first(v)).data, flops: 2 * batch * n * n * D },
  };
}

const NAMES = ['softmax', 'maskedSoftmax', 'score', 'bmm'];

async function run({ quick, builds }) {
  const { simd } = await builds();
  const sizes = quick ? [[2, 256]] : [[8, 512], [1, 2048]];
  let microkernel = null, why = '';
  try {
    microkernel = (await relaxedMicrokernelThroughput(D)).gflops;
  } catch (error) {
    why = `the micro-kernel did not build or run (${oneLine(error)})`;
  }
  const results = [], goals = [];
  for (const [batch, n] of sizes) {
    const c = calls(simd, batch, n);
    for (const name of NAMES) {
      const { fn, want } = c[name];
      const expected = want();
      expectClose(`${name} [${batch}, ${n}, ${n}], its first matrix`, fn().subarray(0, expected.length), expected);
    }
    const timed = await measureInTurns([{ fn: c.copies }, ...NAMES.map((name) => ({ fn: c[name].fn }))], { samples: 9 });
    const ms = Object.fromEntries(['copies', ...NAMES].map((name, i) => [name, timed[i].ms]));
    // The micro-kernel's figure is its fastest sample (peak.js), so the products' are too.
    const best = Object.fromEntries(['copies', ...NAMES].map((name, i) => [name, timed[i].best]));
    const at = `[${batch}, ${n}, ${n}]`;
    results.push({ batch, n, ms, microkernel });
    for (const name of ['softmax', 'maskedSoftmax']) {
      goals.push(measured('primitivesPerCopies', `${name} ${at}`, ms[name] / ms.copies,
        `${ms[name].toFixed(2)} ms ÷ ${ms.copies.toFixed(2)} ms for copying its ${(4 * batch * n * n / 2 ** 20).toFixed(0)} MiB in and out`));
    }
    for (const name of ['score', 'bmm']) {
      const gflops = c[name].flops / best[name] / 1e6;
      goals.push(measured('primitivesPerMicrokernel', `${name} ${at} × d = ${D}`, microkernel && gflops / microkernel,
        microkernel ? `${gflops.toFixed(1)} GFLOP/s, the micro-kernel ${microkernel.toFixed(1)} (fastest samples, this process)` : why));
    }
  }
  const notes = [`primitives, single thread, ms per call (median): ${results.map(({ batch, n, ms }) =>
    `[${batch}, ${n}, ${n}]: ${Object.entries(ms).map(([name, t]) => `${name} ${t.toFixed(2)}`).join(', ')}`).join('; ')}`];
  return { results, notes, goals };
}

const section = { name: 'primitives', run };
export default section;

await runAlone(import.meta, section);
