// `npm run bench`: one run, side by side, float32, single thread but for section 6:
//   1. attention O = softmax(Q Kᵀ/√d) V on [1, n, d]: our SIMD build with its relaxed-SIMD loops
//      (the default load; Node 20 needs --experimental-wasm-relaxed-simd, which npm run bench
//      passes, Node 24 no flag) and without them (SIMD128 only), our scalar build, plain JS, the
//      peers that are installed (peers.js), and the native build;
//   2. multi-head self-attention (torch.nn.MultiheadAttention, E = 512, 8 heads, with the four
//      projections): ours vs onnxruntime-web running the same projections around the
//      com.microsoft MultiHeadAttention op, and around a graph of standard ops;
//   3. long sequences: our SIMD build at n = 32768, d = 64, the peers tried there too, and the
//      wasm memory our module reached (peak WebAssembly.Memory size) at n = 8192 and 32768 (run
//      after sections 4 and 5: a peer that fails there may be unusable afterwards);
//   4. gradients (backward.js): our backward beside our forward and tfjs-wasm's tf.grads on
//      [1, n, 64], and n = 16384 on a fresh instance with its wasm memory;
//   5. masked.js, modern.js, weights.js, decode.js, peak.js: causal and validLens = n/4 against
//      our unmasked time and the peers, grouped K/V heads against repeated ones, a sliding window
//      against dense causal and each score modifier against the plain forward, weights: true
//      against without, KV-cache decode against one copy of K
//      and V and against tfjs-wasm, SDPA against the 2x16 GEMM micro-kernel measured in-process;
//      seq2seq.js: a training step of d2l's encoder-decoder with Bahdanau attention, ours beside
//      PyTorch CPU with one thread; transformer.js: d2l 11.7's Transformer, its training step
//      beside PyTorch on 1 and 2 threads and against the micro-kernel, cached greedy decoding
//      against re-running the prefix, and the peak heap of training; causal-lm.js: a GPT-2-like
//      CausalLM's training step beside PyTorch CPU on one thread, and generate() through the KV
//      caches against re-running the prefix;
//   6. threads (threads.js): ours on 1, 2 and every core against onnxruntime-web at the same
//      thread count, a process per count;
//   7. engines (engines.js): Firefox against Chromium, headless, in turns: the micro-kernel, one
//      step of the fused forward and its parts, and our SDPA with relaxed SIMD on and off;
//   8. one summary line per performance goal.
// Every runner's output is checked (float64 reference, or our output) before it is timed; a
// disagreement (max abs diff > 1e-3) throws. Writes JSON and an SVG chart to build/bench/.
// --quick: n ∈ {128, 512}, d = 64, multi-head at n = 128 only, no long sequences.

// fresh.js pairs each load of our package with its WebAssembly.Memory (captured by
// tests/js/wasm-memory.js, which it imports before anything is loaded).
import { loadFresh as loadOurs } from './fresh.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { plainJsAttention } from '../../web/shared/plain-js-attention.js';
import { uniforms as random } from '../../web/shared/random.js';
import { multiHeadAttention } from '../../tests/js/reference.js';
import { attentionTask, checked, checkRows, expectClose, loadMhaPeers, loadPeers, loadTfjsWasm, MHA_CHECK_N, oneLine, PeerMismatchError } from './peers.js';
import { nativeResults } from './native.js';
import { renderChart } from './chart.js';
import { printTable } from './table.js';
import { runBackwardSection } from './backward.js';
import { runSeq2SeqSection } from './seq2seq.js';
import { runTransformerSection } from './transformer.js';
import { runCausalLMSection } from './causal-lm.js';
import { runMaskedSection } from './masked.js';
import { runModernSection } from './modern.js';
import { runWeightsSection } from './weights.js';
import { runDecodeSection } from './decode.js';
import { runPeakSection } from './peak.js';
import { runThreadsSection } from './threads.js';
import { runEnginesSection } from './engines.js';
import { attentionFlops, mhaFlops, measureInTurns } from './timing.js';

const started = performance.now();
const quick = process.argv.includes('--quick');
const sizes = quick ? [128, 512] : [128, 512, 1024, 2048, 8192];
const widths = quick ? [64] : [64, 128];
const MHA = { embedDim: 512, numHeads: 8 };
const mhaSizes = quick ? [128] : [128, 512, 1024];
const LONG_N = 32768, LONG_D = 64;
const GOAL = 1.35; // our SIMD build's GFLOP/s over the best peer's
const SIMD = 'ours: wasm relaxed SIMD', SIMD128 = 'ours: wasm SIMD128', SCALAR = 'ours: wasm scalar';

const MiB = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
// An error in one line, build-machine paths cut ('/mnt/.../onnxruntime/core/...' → 'onnxruntime/core/...').
const brief = (e) => String(e?.message ?? e).split('\n')[0].replace(/\/\S*?\/(onnxruntime\/)/g, '$1').slice(0, 300);
const fmt = (x, digits = 1) => (x === undefined ? '—' : x.toFixed(digits));

const { attn: simd, memory: simdMemory } = await loadOurs();
const { attn: scalar } = await loadOurs({ simd: false });
if (simd.backend !== 'wasm-simd') throw new Error(`the SIMD build did not load (backend ${simd.backend})`);
if (!simd.relaxedSimd) throw new Error('relaxed SIMD did not load: Node 20 needs --experimental-wasm-relaxed-simd (npm run bench passes it)');
const { attn: simd128 } = await loadOurs({ relaxedSimd: false });

// ---- 1. attention [1, n, d] --------------------------------------------------------------------
const peers = await loadPeers();
const peerNames = new Set(peers.map((p) => p.name));
const runners = [
  ...[{ name: SIMD, make: (t) => () => simd.scaledDotProductAttention(t.q, t.k, t.v).output.data },
    { name: SIMD128, make: (t) => () => simd128.scaledDotProductAttention(t.q, t.k, t.v).output.data },
    { name: SCALAR, make: (t) => () => scalar.scaledDotProductAttention(t.q, t.k, t.v).output.data },
    { name: 'plain JS', make: (t) => () => plainJsAttention(t.q.data, t.k.data, t.v.data, t.n, t.n, t.d), maxN: 2048 },
  ].map(checked), // peers come checked already
  ...peers,
];

// Prepares every runner for one task (make() runs it once and checks it), measures them all with
// their samples taken in turns, and releases them. A peer that fails to run is skipped with a
// line; one that runs but disagrees with the reference stops the benchmark.
async function measureRunners(list, task, label, options) {
  const ready = [];
  try {
    for (const runner of list) {
      try {
        ready.push({ runner, fn: await runner.make(task) });
      } catch (error) {
        if (error instanceof PeerMismatchError) throw error;
        console.log(`${runner.name} at ${label}: skipped (${oneLine(error)})`);
        await runner.release?.();
      }
    }
    const timed = await measureInTurns(ready.map(({ runner, fn }) => ({ fn, async: runner.async })), options);
    return ready.map(({ runner }, i) => ({ runner: runner.name, ms: timed[i].ms }));
  } finally {
    for (const { runner } of ready) {
      try { await runner.release?.(); } catch (error) { console.log(`${runner.name}: release failed (${oneLine(error)})`); }
    }
  }
}

const results = [];
for (const d of widths) {
  for (const n of sizes) {
    const flops = attentionFlops(n, n, d);
    const list = runners.filter((runner) => !(runner.maxN && n > runner.maxN));
    const timed = await measureRunners(list, attentionTask(n, d), `n = ${n}, d = ${d}`, { samples: n >= 4096 ? 3 : 7 });
    for (const { runner, ms } of timed) results.push({ runner, n, d, ms, gflops: flops / ms / 1e6 });
  }
}
results.push(...nativeResults(sizes, widths));

// Table: one row per shape, GFLOP/s per runner, then our SIMD build's ratio to each.
{
  const names = [...new Set(results.map((r) => r.runner))];
  const lookup = (name, n, d) => results.find((r) => r.runner === name && r.n === n && r.d === d);
  const rows = [];
  for (const d of widths) {
    for (const n of sizes) {
      const ours = lookup(SIMD, n, d)?.gflops;
      const cells = names.map((x) => lookup(x, n, d)?.gflops);
      rows.push([d, n, ...cells.map((g) => fmt(g)), ...cells.slice(1).map((g) => (g === undefined ? '—' : (ours / g).toFixed(2)))]);
    }
  }
  printTable(`GFLOP/s for attention on [1, n, d] (4·n²·d flops), single thread, Node ${process.versions.node}`,
    ['d', 'n', ...names, ...names.slice(1).map((x) => `SIMD ÷ ${x}`)], rows);
}

// ---- 2. multi-head self-attention, E = 512, 8 heads ------------------------------------------------
// Seeded weights in torch.nn.MultiheadAttention's state-dict layout (Linear weights [out, in]),
// scaled as PyTorch initialises them (Xavier-uniform in_proj, 1/√E out_proj); random biases so
// that they are exercised too.
const E = MHA.embedDim;
const mhaDict = {
  in_proj_weight: { data: random(3 * E * E, 101, Math.sqrt(6 / (4 * E))), shape: [3 * E, E] },
  in_proj_bias: { data: random(3 * E, 102, 0.1), shape: [3 * E] },
  'out_proj.weight': { data: random(E * E, 103, 1 / Math.sqrt(E)), shape: [E, E] },
  'out_proj.bias': { data: random(E, 104, 0.1), shape: [E] },
};
const ourMha = [[SIMD, simd], [SCALAR, scalar]].map(([name, attn]) => {
  const module = new attn.MultiHeadAttention(MHA).loadStateDict(mhaDict);
  const forward = (x, n) => module.forward({ data: x, shape: [1, n, E] }, undefined, undefined, { needWeights: false }).output.data;
  return { name, module, forward };
});
{
  const n = MHA_CHECK_N, x = random(n * E, 105);
  const want = multiHeadAttention(mhaDict, MHA, { data: x, shape: [1, n, E] }).output.data;
  for (const { name, forward } of ourMha) expectClose(`${name} multi-head at n = ${n} vs the float64 reference`, forward(x, n), want);
}
const mhaPeers = await loadMhaPeers({ ...MHA, dict: mhaDict }); // each checked against the reference at n = 17
// Our modules as runners like the peers': make() checks the output against our SIMD build's.
const ourMhaRunners = ourMha.map(({ name, forward }) => ({
  name,
  make: ({ n, x, expected }) => {
    expectClose(`${name} multi-head at n = ${n} vs ${SIMD}`, forward(x, n), expected);
    return () => forward(x, n);
  },
}));
const mhaResults = [];
for (const n of mhaSizes) {
  const x = random(n * E, 200 + n);
  const task = { n, x, expected: ourMha[0].forward(x, n) }; // peers compare every element with it
  const flops = mhaFlops(n, E);
  for (const { runner, ms } of await measureRunners([...ourMhaRunners, ...mhaPeers], task, `n = ${n}`)) {
    mhaResults.push({ runner, n, embedDim: E, heads: MHA.numHeads, ms, gflops: flops / ms / 1e6 });
  }
}
for (const { module } of ourMha) module.dispose();

// Table: one row per runner; per n its GFLOP/s, its ms and our SIMD build's ratio to it.
{
  const names = [...new Set(mhaResults.map((r) => r.runner))];
  const lookup = (name, n) => mhaResults.find((r) => r.runner === name && r.n === n);
  const header = ['runner', ...mhaSizes.flatMap((n) => [`n=${n} GFLOP/s`, 'ms', 'SIMD ÷'])];
  const rows = names.map((name) => [name, ...mhaSizes.flatMap((n) => {
    const r = lookup(name, n), ours = lookup(SIMD, n);
    return [fmt(r?.gflops), fmt(r?.ms, 2), r && ours ? (ours.gflops / r.gflops).toFixed(2) : '—'];
  })]);
  printTable(`Multi-head self-attention, x [1, n, ${E}], ${MHA.numHeads} heads, needWeights: false ` +
    `(4·2·n·E² + 4·n²·E flops), single thread`, header, rows);
}

const mainMemory = { peakBytes: simdMemory.buffer.byteLength };
console.log(`Wasm memory of the SIMD instance used for tables 1 and 2, after all its runs: ${MiB(mainMemory.peakBytes)}`);

// ---- 4. gradients -----------------------------------------------------------------------------
const backward = await runBackwardSection({ simd, scalar, loadFresh: loadOurs, random, quick });
{
  const names = [...new Set(backward.results.map((r) => r.runner))];
  const ns = [...new Set(backward.results.map((r) => r.n))];
  const lookup = (name, n) => backward.results.find((r) => r.runner === name && r.n === n);
  const rows = names.map((name) => [name, ...ns.flatMap((n) => {
    const r = lookup(name, n), ours = lookup('ours: SIMD backward', n);
    return [fmt(r?.gflops), fmt(r?.ms, 2), r ? (r.ms / ours.ms).toFixed(2) : '—'];
  })]);
  printTable('Backward of attention on [1, n, 64]: GFLOP/s (10·n²·d for a backward, 4·n²·d for the forward row), ms, ' +
    'and time ÷ our SIMD backward\'s, single thread', ['runner', ...ns.flatMap((n) => [`n=${n} GFLOP/s`, 'ms', '÷ ours'])], rows);
}

// ---- 5. masked, weights, decode, peak ---------------------------------------------------------------
// Times and each row's time ÷ the baseline row's at the same n.
function ratioTable(title, list, baseline) {
  const names = [...new Set(list.map((r) => r.runner))];
  const ns = [...new Set(list.map((r) => r.n))];
  const at = (name, n) => list.find((r) => r.runner === name && r.n === n);
  printTable(title, ['runner', ...ns.flatMap((n) => [`n=${n} ms`, `÷ ${baseline}`])], names.map((name) => [name, ...ns.flatMap((n) => {
    const r = at(name, n), base = at(baseline, n);
    return r ? [fmt(r.ms, 3), base ? (r.ms / base.ms).toFixed(2) : '—'] : ['—', '—'];
  })]));
}
const masked = await runMaskedSection({ simd, peers, measureRunners, quick });
ratioTable('Masked attention on [1, n, 64]: ms and time ÷ our unmasked time (peers unmasked), single thread', masked.results, 'ours: unmasked');
console.log('\nModern attention (modern.js): grouped K/V heads and score modifiers, time ÷ the call each replaces, single thread');
const modern = await runModernSection({ simd, quick });
const weights = await runWeightsSection({ simd, quick });
ratioTable('weights: true on [1, n, 64]: ms and time ÷ the time without weights', weights.results, 'ours: without weights');
const decode = await runDecodeSection({ simd, loadTfjs: loadTfjsWasm, quick });
if (decode.results.length) {
  ratioTable('KV-cache decode, 12 heads, d = 64, nq = 1 (and nq = 4 in one call), n cached positions: ms per call and time ÷ one copy of K and V',
    decode.results, 'copy K and V once');
}
const peak = await runPeakSection({ builds: [[SIMD, simd], [SIMD128, simd128]], results, quick });
console.log('\n2x16 GEMM micro-kernel (cpp/bench/microkernel_loop.hpp in wasm, this process) and SDPA, GFLOP/s:');
for (const [name, microkernel] of Object.entries(peak.microkernels)) {
  console.log(`  ${name}: micro-kernel ${microkernel.gflops.toFixed(1)}; SDPA ` +
    `${peak.results.filter((r) => r.runner === name).map((r) => `n = ${r.n}: ${r.gflops.toFixed(1)}`).join(', ')}`);
}

const seq2seq = await runSeq2SeqSection({ simd, scalar, quick });
printTable(seq2seq.table.title, seq2seq.table.header, seq2seq.table.rows);
const transformer = await runTransformerSection({ simd, scalar, quick });
for (const { title, header, rows } of transformer.tables) printTable(title, header, rows);

console.log('\nCausalLM (causal-lm.js): a GPT-2-like training step against PyTorch CPU, cached generation against re-running the prefix and against PyTorch's cache');
const causalLM = await runCausalLMSection({ simd, quick });
for (const { title, header, rows } of causalLM.tables) printTable(title, header, rows);

// ---- 3. long sequences (last of the timed sections) ---------------------------------------------
// Last because trying the peers at n = 32768 can leave their wasm instances broken: tfjs-wasm's
// then fails every later call with "memory access out of bounds".
// Each measurement on a fresh instance of our SIMD build, so that memory.buffer.byteLength after
// the run is the peak that run needed (wasm memory only grows), initial heap included.
let long = null;
if (!quick) {
  long = { n: LONG_N, d: LONG_D, flops: attentionFlops(LONG_N, LONG_N, LONG_D), memory: {}, peers: [] };
  const rows = (n) => [0, 1, n >> 1, n - 1];
  for (const n of [8192, LONG_N]) {
    const { attn, memory } = await loadOurs();
    const initial = memory.buffer.byteLength;
    const t = attentionTask(n, LONG_D);
    const times = [];
    let out;
    for (let i = 0; i < (n === LONG_N ? 2 : 1); i++) {
      const start = performance.now();
      out = attn.scaledDotProductAttention(t.q, t.k, t.v).output.data;
      times.push(performance.now() - start);
    }
    checkRows(`${SIMD} at n = ${n}`, out, t, rows(n));
    long.memory[n] = { initialBytes: initial, peakBytes: memory.buffer.byteLength, ms: times };
  }
  const ours = long.memory[LONG_N];
  long.ours = { completed: true, ms: ours.ms, gflops: long.flops / Math.min(...ours.ms) / 1e6, peakBytes: ours.peakBytes };

  // Peers: tried at n = 32768 unless their n = 8192 time says it would take minutes.
  const t = attentionTask(LONG_N, LONG_D);
  for (const peer of peers) {
    const at8192 = results.find((r) => r.runner === peer.name && r.n === 8192 && r.d === LONG_D);
    const entry = { runner: peer.name };
    if (peer.maxN && peer.maxN < LONG_N) {
      Object.assign(entry, { status: 'skipped', note: `known limit n ≤ ${peer.maxN} (see peers.js)` });
    } else if (!at8192) {
      Object.assign(entry, { status: 'skipped', note: 'no n = 8192 time to extrapolate from' });
    } else if (at8192.ms > 2000) {
      const estimate = at8192.ms * (LONG_N / 8192) ** 2;
      Object.assign(entry, { status: 'skipped', note: `n = 8192 took ${(at8192.ms / 1000).toFixed(1)} s, n = ${LONG_N} would take ~${(estimate / 1000).toFixed(0)} s` });
    } else {
      try {
        const fn = await peer.make(t); // one run, rows checked
        const start = performance.now();
        await fn();
        const ms = performance.now() - start;
        Object.assign(entry, { status: 'completed', ms, gflops: long.flops / ms / 1e6 });
      } catch (error) {
        if (error instanceof PeerMismatchError) throw error;
        Object.assign(entry, { status: 'failed', error: brief(error) });
      } finally {
        try { await peer.release?.(); } catch { /* a failed peer may not release cleanly */ }
      }
    }
    long.peers.push(entry);
  }

  console.log(`\nLong sequences: attention [1, ${LONG_N}, ${LONG_D}] (${(long.flops / 1e9).toFixed(0)} GFLOP), single thread`);
  console.log(`  ${SIMD}: completed, ${ours.ms.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(' and ')} ` +
    `(${long.ours.gflops.toFixed(1)} GFLOP/s, best of ${ours.ms.length}), output rows checked`);
  for (const p of long.peers) {
    const what = p.status === 'completed' ? `completed, ${(p.ms / 1000).toFixed(2)} s (${p.gflops.toFixed(1)} GFLOP/s)`
      : p.status === 'failed' ? `failed: ${p.error}` : `skipped: ${p.note}`;
    console.log(`  ${p.runner}: ${what}`);
  }
  console.log(`  (for scale: a materialised ${LONG_N} x ${LONG_N} float32 score matrix is ${(LONG_N * LONG_N * 4 / 2 ** 30).toFixed(1)} GiB; wasm32 memory is at most 4 GiB)`);
  console.log(`Wasm memory of our SIMD module (WebAssembly.Memory size, fresh instance per run; initial ${MiB(long.memory[8192].initialBytes)}):`);
  for (const n of [8192, LONG_N]) {
    const m = long.memory[n];
    console.log(`  n = ${n}, d = ${LONG_D}: peak ${MiB(m.peakBytes)} (run took ${(Math.min(...m.ms) / 1000).toFixed(2)} s)`);
  }
}
// ---- 6. threads (threads.js): each thread count in a process of its own, after every single-thread
// section, so that no worker of ours or of a peer runs beside them ------------------------------------
const threads = await runThreadsSection({ quick });

// ---- 7. engines (engines.js): in the browsers, after every Node section ---------------------------
const engines = await runEnginesSection({ quick });

// ---- 8. goals --------------------------------------------------------------------------------------
const summary = [];
const goalLine = (label, list, n, extra = (r) => r.n === n) => {
  const ours = list.find((r) => r.runner === SIMD && extra(r));
  const best = list.filter((r) => !r.runner.startsWith('ours') && r.runner !== 'plain JS' && extra(r))
    .sort((a, b) => b.gflops - a.gflops)[0];
  if (!ours || !best) return `${label}: not measured in this run`;
  const ratio = ours.gflops / best.gflops;
  return `${label}: ours SIMD ${ours.gflops.toFixed(1)} GFLOP/s, best peer ${best.gflops.toFixed(1)} (${best.runner}), ` +
    `ratio ${ratio.toFixed(2)} (goal ≥ ${GOAL}: ${ratio >= GOAL ? 'met' : 'NOT met'})`;
};
for (const n of [512, 1024, 2048, 8192]) {
  summary.push(goalLine(`attention n = ${n} (goal for n ≥ 512), d = 64`, results, n, (r) => r.n === n && r.d === 64));
}
summary.push(goalLine(`MHA E = ${E}, ${MHA.numHeads} heads, n = 512`, mhaResults, 512));
if (long) {
  summary.push(`long n = ${LONG_N}, d = ${LONG_D}: ours SIMD completed in ${(Math.min(...long.ours.ms) / 1000).toFixed(2)} s ` +
    `(${long.ours.gflops.toFixed(1)} GFLOP/s), peak wasm memory ${MiB(long.ours.peakBytes)} (n = 8192: ${MiB(long.memory[8192].peakBytes)}); ` +
    `peers: ${long.peers.map((p) => `${p.runner} ${p.status}`).join(', ')}`);
}
summary.push(...backward.summary, ...masked.summary, ...modern.summary, ...weights.summary, ...decode.summary, ...peak.summary,
  ...seq2seq.summary, ...transformer.summary, ...causalLM.summary, ...threads.summary, ...engines.summary);
console.log('\nSummary');
for (const s of summary) console.log(`  ${s}`);

mkdirSync('build/bench', { recursive: true });
writeFileSync('build/bench/results.json', JSON.stringify({
  node: process.versions.node, date: new Date().toISOString(), quick, results,
  mha: { ...MHA, flops: '4·2·n·E² + 4·n²·E', results: mhaResults }, long,
  backward: { flops: '10·n²·d (forward rows: 4·n²·d)', results: backward.results, long: backward.long }, memory: { mainSimdInstance: mainMemory },
  masked: masked.results, modern: modern.results, weights: weights.results, decode: decode.results,
  peak: { microkernels: peak.microkernels, sdpa: peak.results }, seq2seq: seq2seq.results, transformer: transformer.results, causalLM: causalLM.results, threads: threads.results, engines: engines.results, summary,
}, null, 2));
writeFileSync('build/bench/chart.svg', renderChart([
  ...widths.map((d) => ({ title: `attention [1, n, ${d}], GFLOP/s (higher is better)`, results: results.filter((r) => r.d === d) })),
  { title: `multi-head self-attention, E = ${E}, ${MHA.numHeads} heads, GFLOP/s`, results: mhaResults },
]));
console.log(`wrote build/bench/results.json and build/bench/chart.svg (${((performance.now() - started) / 1000).toFixed(0)} s in all)`);
