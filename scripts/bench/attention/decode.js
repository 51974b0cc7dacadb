// The decode section of `npm run bench`: one token's attention against a resident KV cache in
// the GPT-2-small shape (12 heads, d = 64, nq = 1) at n cached positions, measured side by side
// with two baselines:
//   - copying K and V once (Float32Array.set into a preallocated array): the memory traffic a
//     decode cannot avoid, so attend / copy says how close the kernel runs to reading K and V once;
//   - tfjs-wasm attention over resident tensors (Q, K and V kept as tf tensors across calls), the
//     same thing a user of tfjs would run per token, in two forms that measured within 15% of each
//     other here: matMul(q, k, false, true), and keys held transposed (Kᵀ resident) so that the
//     product needs no transpose. The summary compares with the faster of the two.
// Our side is attn.KVCache (append once, attend per call), also with 4 queries in one call (a
// step of several tokens), which reads K and V once for all of them.
import { scaledDotProductAttention } from '../../../harness/reference.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { loadTfjsWasm } from '../peers/tfjs.js';
import { expectClose, oneLine } from '../shared/check.js';
import { runAlone } from '../shared/standalone.js';
import { ratioTable } from '../shared/table.js';

export const DECODE = { heads: 12, d: 64 };
const OURS = 'ours: KVCache.attend', COPY = 'copy K and V once';

// ours, reference and tfjs all see heads as the batch axis: [heads, n, d] (= [1, heads, n, d]).
// q4: the queries of a step of NQ_WIDE tokens (speculative decoding, or a prompt's last chunk).
const NQ_WIDE = 4;

function decodeTask(n) {
  const { heads, d } = DECODE;
  return {
    n, q: random(heads * d, 31), k: random(heads * n * d, 32), v: random(heads * n * d, 33),
    q4: random(heads * NQ_WIDE * d, 34),
  };
}

// Query i of nq sees the first n - nq + i + 1 positions (causal against the newest), as
// KVCache.attend: d2l's per-query valid lengths in the reference.
function reference({ n, k, v }, q, nq) {
  const { heads, d } = DECODE;
  const validLens = Int32Array.from({ length: heads * nq }, (_, s) => n - nq + (s % nq) + 1);
  return scaledDotProductAttention({ data: q, shape: [heads, nq, d] }, { data: k, shape: [heads, n, d] },
    { data: v, shape: [heads, n, d] }, { validLens }).output.data;
}

const TFJS = 'tfjs-wasm (resident';

function tfjsRunners(tf, { n, q, k, v }) {
  const { heads, d } = DECODE;
  const Q = tf.tensor3d(q, [heads, 1, d]);
  const K = tf.tensor3d(k, [heads, n, d]);
  const KT = tf.transpose(K, [0, 2, 1]);
  const V = tf.tensor3d(v, [heads, n, d]);
  const scale = tf.scalar(1 / Math.sqrt(d));
  const runner = (runner, scores) => ({
    runner,
    fn: () => {
      const out = tf.tidy(() => tf.matMul(tf.softmax(tf.mul(scores(), scale)), V));
      const data = out.dataSync();
      out.dispose();
      return data;
    },
  });
  return {
    runners: [runner(`${TFJS}, matMul transposeB)`, () => tf.matMul(Q, K, false, true)),
      runner(`${TFJS} Kᵀ, matMul)`, () => tf.matMul(Q, KT))],
    release: () => tf.dispose([Q, K, KT, V, scale]),
  };
}

async function run({ quick, log, builds }) {
  const { simd } = await builds();
  const { heads, d } = DECODE;
  let tf = null;
  try {
    tf = await loadTfjsWasm();
  } catch (error) {
    log(`tfjs-wasm (decode): skipped (${oneLine(error)})`);
  }
  const sizes = quick ? [1024] : [1024, 4096, 16384];
  const results = [];
  for (const n of sizes) {
    const task = decodeTask(n);
    const want = reference(task, task.q, 1);
    const cache = new simd.KVCache({ batch: 1, heads, headDim: d, valueDim: d, capacity: n });
    let tfjs = null;
    try {
      cache.append({ data: task.k, shape: [1, heads, n, d] }, { data: task.v, shape: [1, heads, n, d] });
      const q = { data: task.q, shape: [1, heads, 1, d] };
      const scale = 1 / Math.sqrt(d);
      const attend = () => cache.attend(q, { scale }).output.data;
      expectClose(`ours: KVCache.attend at n = ${n} vs the float64 reference`, attend(), want);
      const q4 = { data: task.q4, shape: [1, heads, NQ_WIDE, d] };
      const attendWide = () => cache.attend(q4, { scale }).output.data;
      expectClose(`ours: KVCache.attend nq = ${NQ_WIDE} at n = ${n} vs the float64 reference`, attendWide(),
        reference(task, task.q4, NQ_WIDE));
      const copy = new Float32Array(task.k.length + task.v.length);
      const runners = [
        { runner: OURS, fn: attend },
        { runner: `ours: KVCache.attend, nq = ${NQ_WIDE}`, fn: attendWide, nq: NQ_WIDE },
        { runner: COPY, fn: () => { copy.set(task.k); copy.set(task.v, task.k.length); } },
      ];
      if (tf) {
        tfjs = tfjsRunners(tf, task);
        for (const { runner, fn } of tfjs.runners) expectClose(`${runner} at n = ${n} vs the float64 reference`, fn(), want);
        runners.push(...tfjs.runners);
      }
      const timed = await measureInTurns(runners, { samples: 7 });
      runners.forEach(({ runner, nq = 1 }, i) => results.push({ runner, n, heads, d, nq, ms: timed[i].ms }));
    } finally {
      cache.dispose();
      tfjs?.release();
    }
  }
  const goals = sizes.flatMap((n) => {
    const ms = (name) => results.find((r) => r.runner === name && r.n === n)?.ms;
    const ours = ms(OURS), copy = ms(COPY), wide = ms(`${OURS}, nq = ${NQ_WIDE}`);
    const peer = Math.min(...results.filter((r) => r.n === n && r.runner.startsWith(TFJS)).map((r) => r.ms));
    return [
      measured('decodePerCopy', `n = ${n}`, ours / copy, `attend ${ours.toFixed(3)} ms, copy ${copy.toFixed(3)} ms; ` +
        `nq = ${NQ_WIDE} in one call ${wide.toFixed(3)} ms = ${(wide / ours).toFixed(2)}× nq = 1 (K and V read once for all ${NQ_WIDE})`),
      measured('decodeVsTfjs', `n = ${n}`, peer / ours, peer === Infinity ? 'tfjs-wasm did not run' : `tfjs-wasm ${peer.toFixed(3)} ms (the faster of its two forms)`),
    ];
  });
  const table = ratioTable(`KV-cache decode, ${heads} heads, d = ${d}, nq = 1 (and nq = ${NQ_WIDE} in one call), n cached positions: ` +
    'ms per call and time ÷ one copy of K and V', results, COPY);
  return { results, tables: [table], goals };
}

const section = { name: 'decode', run };
export default section;

await runAlone(import.meta, section);
