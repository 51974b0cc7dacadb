// The modern-attention section of `npm run bench`: grouped-query heads and the score modifiers
// in our fused kernel, each timed side by side with the call it replaces, single thread:
//   - GQA prefill (H = 32, Hkv = 8, d = 128, causal) against the same call on K and V repeated to
//     32 heads, the way a caller without GQA must pass them;
//   - a causal sliding window against dense causal attention at the same n (H = 8, d = 64);
//   - softcap, ALiBi and sinks each against the plain fused forward ([1, 1, n, 64]);
//   - decoding one token from a KVCache of grouped heads (H = 32, Hkv = 8, d = 128) against
//     copying its K and V once (the memory traffic a decode cannot avoid), and the same cache
//     stored as halves (dtype 'f16') and with rotary positions against the float32 one;
//   - the peer: onnxruntime-web's com.microsoft GroupQueryAttention at H = 32, Hkv = 8, d = 128,
//     n = 512, causal, one thread.
// Every pair is checked to agree before it is timed: GQA with the repeated call and the peer's,
// the window on a few rows against the reference over the keys the window leaves.
import { pathToFileURL } from 'node:url';

import { scaledDotProductAttention } from '../../tests/js/reference.js';
import { uniforms as random } from '../../web/shared/random.js';
import { goal } from './goal.js';
import { measureInTurns } from './timing.js';
import { loadFresh } from './fresh.js';
import { expectClose, loadGqaPeer, oneLine, queryRows } from './peers.js';

export const MODERN_GOALS = { gqa: 0.85, window: 0.1, modifier: 1.15, decodePerCopy: 2, f16: 0.65, rotary: 1.1, peer: 1.45 };

const tensor = (shape, seed) => ({ data: random(shape.reduce((a, b) => a * b), seed), shape });

// [B, h, n, d] with each head repeated `times` times in a row (repeat_interleave on the heads).
function repeatHeads({ data, shape: [b, h, n, d] }, times) {
  const block = n * d, out = new Float32Array(b * h * times * block);
  for (let m = 0; m < b * h * times; m++) {
    const source = Math.floor(m / times);
    out.set(data.subarray(source * block, (source + 1) * block), m * block);
  }
  return { data: out, shape: [b, h * times, n, d] };
}

// Rows of one head's output against the reference over keys [i - left, i] alone.
function checkWindow(out, { q, k, v }, n, d, left) {
  const head = (x) => x.data.subarray(0, n * d);
  for (const i of [0, left, n >> 1, n - 1]) {
    const first = Math.max(0, i - left);
    const keys = (x) => ({ data: head(x).subarray(first * d, (i + 1) * d), shape: [1, i + 1 - first, d] });
    const want = scaledDotProductAttention(queryRows(head(q), d, [i]), keys(k), keys(v)).output.data;
    expectClose(`window row ${i}`, out.subarray(i * d, (i + 1) * d), want);
  }
}

async function pair(name, a, b, samples) {
  const [x, y] = await measureInTurns([{ fn: a }, { fn: b }], { samples, sampleMs: 50 });
  return { name, ms: x.ms, baselineMs: y.ms, ratio: x.ms / y.ms };
}

/** Returns { results: [{ name, ms, baselineMs, ratio }], summary: string[] }. */
export async function runModernSection({ simd, quick }) {
  const results = [];
  let peerResult = null, peerNote = null;

  const gqaN = quick ? 512 : 2048;
  {
    const [H, Hkv, d] = [32, 8, 128];
    const q = tensor([1, H, gqaN, d], 1), k = tensor([1, Hkv, gqaN, d], 2), v = tensor([1, Hkv, gqaN, d], 3);
    const kFull = repeatHeads(k, H / Hkv), vFull = repeatHeads(v, H / Hkv);
    const grouped = () => simd.scaledDotProductAttention(q, k, v, { causal: true }).output.data;
    const repeated = () => simd.scaledDotProductAttention(q, kFull, vFull, { causal: true }).output.data;
    expectClose('GQA vs repeated K/V', grouped(), repeated());
    results.push(await pair(`GQA prefill H = ${H}, Hkv = ${Hkv}, d = ${d}, n = ${gqaN}, causal ÷ K/V repeated to ${H} heads`,
      grouped, repeated, 3));
    // The peer on one thread, as ours here (a process of its own would be needed for 2: ORT fixes
    // its thread count at its first session), at n = 512: its CPU kernel took 4.3 s a call there
    // (2026-11-26), and would take about a minute at n = 2048.
    try {
      const peer = await loadGqaPeer({ threads: 1 });
      try {
        const peerN = 512;
        const [pq, pk, pv] = [tensor([1, H, peerN, d], 13), tensor([1, Hkv, peerN, d], 14), tensor([1, Hkv, peerN, d], 15)];
        const ours = () => simd.scaledDotProductAttention(pq, pk, pv, { causal: true }).output.data;
        const { run, heads } = await peer.make(pq, pk, pv);
        expectClose('onnxruntime-web GroupQueryAttention vs ours', heads(await run()), ours());
        const [theirs, mine] = await measureInTurns([{ fn: run, async: true }, { fn: ours }], { samples: 3, sampleMs: 50 });
        peerResult = {
          name: `onnxruntime-web GroupQueryAttention ÷ ours, H = ${H}, Hkv = ${Hkv}, d = ${d}, n = ${peerN}, causal, 1 thread`,
          ms: theirs.ms, baselineMs: mine.ms, ratio: theirs.ms / mine.ms,
        };
      } finally {
        await peer.release();
      }
    } catch (error) {
      peerNote = `onnxruntime-web GroupQueryAttention: not measured (${oneLine(error)})`;
    }
  }

  const [windowN, w] = quick ? [4096, 256] : [16384, 1024];
  {
    const [H, d] = [8, 64];
    const t = { q: tensor([1, H, windowN, d], 4), k: tensor([1, H, windowN, d], 5), v: tensor([1, H, windowN, d], 6) };
    const windowed = () => simd.scaledDotProductAttention(t.q, t.k, t.v, { causal: true, window: [w - 1, 0] }).output.data;
    const dense = () => simd.scaledDotProductAttention(t.q, t.k, t.v, { causal: true }).output.data;
    checkWindow(windowed(), t, windowN, d, w - 1);
    results.push(await pair(`causal window w = ${w} at n = ${windowN}, H = ${H}, d = ${d} ÷ dense causal`, windowed, dense, quick ? 3 : 2));
  }

  const n = quick ? 512 : 2048;
  {
    const q = tensor([1, 1, n, 64], 7), k = tensor([1, 1, n, 64], 8), v = tensor([1, 1, n, 64], 9);
    const plain = () => simd.scaledDotProductAttention(q, k, v).output.data;
    for (const [label, options] of [['softcap 30', { softcap: 30 }], ['ALiBi', { alibiSlopes: [0.0625] }], ['a sink', { sinks: [0.5] }]]) {
      const modified = () => simd.scaledDotProductAttention(q, k, v, options).output.data;
      results.push(await pair(`${label} at n = ${n}, d = 64 ÷ the plain fused forward`, modified, plain, 7));
    }
  }

  const decodeN = quick ? 2048 : 16384;
  {
    const [H, Hkv, d] = [32, 8, 128];
    const chunk = 1024;
    const k = random(Hkv * decodeN * d, 10), v = random(Hkv * decodeN * d, 11), q = tensor([1, H, 1, d], 12);
    // [1, Hkv, decodeN, d] appended a chunk of positions at a time.
    const slice = (x, p) => {
      const data = new Float32Array(Hkv * chunk * d);
      for (let h = 0; h < Hkv; h++) data.set(x.subarray((h * decodeN + p) * d, (h * decodeN + p + chunk) * d), h * chunk * d);
      return { data, shape: [1, Hkv, chunk, d] };
    };
    const cache = (options) => {
      const c = new simd.KVCache({ batch: 1, heads: H, kvHeads: Hkv, headDim: d, capacity: decodeN, ...options });
      for (let p = 0; p < decodeN; p += chunk) c.append(slice(k, p), slice(v, p));
      return c;
    };
    const caches = { f32: cache({}), f16: cache({ dtype: 'f16' }), rotary: cache({ rotary: {} }) };
    try {
      const copyK = new Float32Array(k.length), copyV = new Float32Array(v.length);
      const entries = [
        () => { copyK.set(k); copyV.set(v); },
        ...Object.values(caches).map((c) => () => c.attend(q).output.data),
      ];
      const [copy, f32, f16, rotary] = await measureInTurns(entries.map((fn) => ({ fn })), { samples: 7, sampleMs: 50 });
      const at = `H = ${H}, Hkv = ${Hkv}, d = ${d}, n = ${decodeN}`;
      results.push({ name: `decode one token, ${at}, float32 cache ÷ one copy of its K and V`, ms: f32.ms, baselineMs: copy.ms, ratio: f32.ms / copy.ms });
      results.push({ name: `decode one token, ${at}, f16 cache ÷ float32 cache`, ms: f16.ms, baselineMs: f32.ms, ratio: f16.ms / f32.ms });
      results.push({ name: `decode one token, ${at}, rotary cache ÷ float32 cache`, ms: rotary.ms, baselineMs: f32.ms, ratio: rotary.ms / f32.ms });
    } finally {
      for (const c of Object.values(caches)) c.dispose();
    }
  }

  for (const r of [...results, peerResult].filter(Boolean)) {
    console.log(`  ${r.name}: ${r.ms.toFixed(2)} ms ÷ ${r.baselineMs.toFixed(2)} ms = ${r.ratio.toFixed(2)}`);
  }
  const [gqa, windowed, softcap, alibi, sink, perCopy, f16, rotary] = results;
  const summary = [
    `modern: ${gqa.name}: ${goal(gqa.ratio, '≤', MODERN_GOALS.gqa)}`,
    `modern: ${windowed.name}: ${goal(windowed.ratio, '≤', MODERN_GOALS.window)}`,
    ...[softcap, alibi, sink].map((r) => `modern: ${r.name}: ${goal(r.ratio, '≤', MODERN_GOALS.modifier)}`),
    `modern: ${perCopy.name}: ${goal(perCopy.ratio, '≤', MODERN_GOALS.decodePerCopy)}`,
    `modern: ${f16.name}: ${goal(f16.ratio, '≤', MODERN_GOALS.f16)}`,
    `modern: ${rotary.name}: ${goal(rotary.ratio, '≤', MODERN_GOALS.rotary)}`,
    peerResult ? `modern: ${peerResult.name}: ${goal(peerResult.ratio, '≥', MODERN_GOALS.peer)}` : `modern: ${peerNote}`,
  ];
  return { results, summary };
}

// Run alone: node --experimental-wasm-relaxed-simd scripts/bench/modern.js [--quick]
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { attn } = await loadFresh();
  const { summary } = await runModernSection({ simd: attn, quick: process.argv.includes('--quick') });
  for (const line of summary) console.log(line);
}
