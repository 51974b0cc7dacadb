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
//     n = 512, causal, against ours on 1 and 2 threads (gqa-peer.js, a process per count).
// Every pair is checked to agree before it is timed: GQA with the repeated call and the peer's,
// the window on a few rows against the reference over the keys the window leaves.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { scaledDotProductAttention } from '../../../harness/reference.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { expectClose, queryRows } from '../shared/check.js';
import { runAlone } from '../shared/standalone.js';

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

const PEER = fileURLToPath(new URL('gqa-peer.js', import.meta.url));

// gqa-peer.js's line for `threads`, run on the parent's Node and flags.
function peerRun(threads) {
  const child = spawnSync(process.execPath, [...process.execArgv, PEER, String(threads)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) return { error: `gqa-peer.js ${threads} exited with ${child.status}` };
  return JSON.parse(child.stdout.trim().split('\n').pop());
}

// a and b timed in turns: { goal (goals.js), at, name (what ÷ what), ms, baselineMs, ratio }.
async function pair({ goal, at, name }, a, b, samples) {
  const [x, y] = await measureInTurns([{ fn: a }, { fn: b }], { samples, sampleMs: 50 });
  return { goal, at, name, ms: x.ms, baselineMs: y.ms, ratio: x.ms / y.ms };
}

async function run({ quick, builds }) {
  const { simd } = await builds();
  const results = [];
  const peerNotes = [];

  const gqaN = quick ? 512 : 2048;
  {
    const [H, Hkv, d] = [32, 8, 128];
    const q = tensor([1, H, gqaN, d], 1), k = tensor([1, Hkv, gqaN, d], 2), v = tensor([1, Hkv, gqaN, d], 3);
    const kFull = repeatHeads(k, H / Hkv), vFull = repeatHeads(v, H / Hkv);
    const grouped = () => simd.scaledDotProductAttention(q, k, v, { causal: true }).output.data;
    const repeated = () => simd.scaledDotProductAttention(q, kFull, vFull, { causal: true }).output.data;
    expectClose('GQA vs repeated K/V', grouped(), repeated());
    results.push(await pair({ goal: 'gqaPrefill', at: `n = ${gqaN}`,
      name: `GQA prefill H = ${H}, Hkv = ${Hkv}, d = ${d}, n = ${gqaN}, causal ÷ K/V repeated to ${H} heads` }, grouped, repeated, 3));
  }
  // The peer on 1 and 2 threads, each count in a process of its own (gqa-peer.js).
  for (const threads of [1, 2]) {
    const line = peerRun(threads), count = threads === 1 ? '1 thread' : `${threads} threads`;
    if (line.error) {
      peerNotes.push({ at: `n = 512, ${count}`, note: line.error });
      continue;
    }
    results.push({
      goal: 'gqaVsPeer', at: `n = 512, ${count}`,
      name: `onnxruntime-web GroupQueryAttention ÷ ours, H = 32, Hkv = 8, d = 128, n = 512, causal, ${count}`,
      ms: line.peerMs, baselineMs: line.oursMs, ratio: line.peerMs / line.oursMs,
    });
  }

  const [windowN, w] = quick ? [4096, 256] : [16384, 1024];
  {
    const [H, d] = [8, 64];
    const t = { q: tensor([1, H, windowN, d], 4), k: tensor([1, H, windowN, d], 5), v: tensor([1, H, windowN, d], 6) };
    const windowed = () => simd.scaledDotProductAttention(t.q, t.k, t.v, { causal: true, window: [w - 1, 0] }).output.data;
    const dense = () => simd.scaledDotProductAttention(t.q, t.k, t.v, { causal: true }).output.data;
    checkWindow(windowed(), t, windowN, d, w - 1);
    results.push(await pair({ goal: 'slidingWindow', at: `w = ${w}, n = ${windowN}`,
      name: `causal window w = ${w} at n = ${windowN}, H = ${H}, d = ${d} ÷ dense causal` }, windowed, dense, quick ? 3 : 2));
  }

  const n = quick ? 512 : 2048;
  {
    const q = tensor([1, 1, n, 64], 7), k = tensor([1, 1, n, 64], 8), v = tensor([1, 1, n, 64], 9);
    const plain = () => simd.scaledDotProductAttention(q, k, v).output.data;
    for (const [label, options] of [['softcap 30', { softcap: 30 }], ['ALiBi', { alibiSlopes: [0.0625] }], ['a sink', { sinks: [0.5] }]]) {
      const modified = () => simd.scaledDotProductAttention(q, k, v, options).output.data;
      results.push(await pair({ goal: 'scoreModifier', at: `${label}, n = ${n}`, name: `${label} at n = ${n}, d = 64 ÷ the plain fused forward` },
        modified, plain, 7));
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
      const shape = `H = ${H}, Hkv = ${Hkv}, d = ${d}, n = ${decodeN}`, at = `n = ${decodeN}`;
      const entry = (goal, what, x, y) => ({ goal, at, name: `decode one token, ${shape}, ${what}`, ms: x.ms, baselineMs: y.ms, ratio: x.ms / y.ms });
      results.push(entry('gqaDecodePerCopy', 'float32 cache ÷ one copy of its K and V', f32, copy),
        entry('f16Cache', 'f16 cache ÷ float32 cache', f16, f32), entry('rotaryCache', 'rotary cache ÷ float32 cache', rotary, f32));
    } finally {
      for (const c of Object.values(caches)) c.dispose();
    }
  }

  const goals = results.map((r) => measured(r.goal, r.at, r.ratio, `${r.ms.toFixed(2)} ms ÷ ${r.baselineMs.toFixed(2)} ms`));
  for (const { at, note } of peerNotes) goals.push(measured('gqaVsPeer', at, null, note));
  const table = {
    title: 'Modern attention: grouped K/V heads, score modifiers and decoding, each ÷ the call it replaces, single thread',
    header: ['what', 'ms', 'baseline ms', 'ratio'],
    rows: results.map((r) => [r.name, r.ms.toFixed(2), r.baselineMs.toFixed(2), r.ratio.toFixed(2)]),
  };
  return { results, tables: [table], goals };
}

const section = { name: 'modern', run };
export default section;

await runAlone(import.meta, section);
