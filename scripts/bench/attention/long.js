// The long-sequence section of `npm run bench` (left out by --quick): our relaxed-SIMD load at
// n = 32768, d = 64, the peers tried there too, and the wasm memory our module reached (its
// WebAssembly.Memory size) at n = 8192 and 32768. Each of our runs is on a fresh instance, so
// that memory.buffer.byteLength after it is the peak that run needed (wasm memory only grows),
// initial heap included. sections.js puts it after every other single-thread section: trying the
// peers at n = 32768 can leave their wasm instances broken (tfjs-wasm's then fails every later
// call with "memory access out of bounds").
import { attentionFlops } from '../../../web/shared/timing.js';
import { PeerMismatchError, attentionTask, checkRows } from '../shared/check.js';
import { OURS } from '../shared/context.js';
import { runAlone } from '../shared/standalone.js';

const N = 32768, D = 64;
const MiB = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
// An error in one line, build-machine paths cut ('/mnt/.../onnxruntime/core/...' → 'onnxruntime/core/...').
const brief = (e) => String(e?.message ?? e).split('\n')[0].replace(/\/\S*?\/(onnxruntime\/)/g, '$1').slice(0, 300);

// Ours at n on a fresh instance: the time of each run, the heap before and after.
async function ours(loadFresh, n) {
  const { attn, memory } = await loadFresh();
  const initialBytes = memory.buffer.byteLength;
  const t = attentionTask(n, D);
  const ms = [];
  let out;
  for (let i = 0; i < (n === N ? 2 : 1); i++) {
    const start = performance.now();
    out = attn.scaledDotProductAttention(t.q, t.k, t.v).output.data;
    ms.push(performance.now() - start);
  }
  checkRows(`${OURS.simd} at n = ${n}`, out, t, [0, 1, n >> 1, n - 1]);
  return { initialBytes, peakBytes: memory.buffer.byteLength, ms };
}

// A peer at n = 32768 unless its n = 8192 time (section sdpa's) says it would take minutes.
async function tryPeer(peer, at8192, t, flops) {
  const entry = { runner: peer.name };
  if (peer.maxN && peer.maxN < N) return { ...entry, status: 'skipped', note: `known limit n ≤ ${peer.maxN} (see peers/)` };
  if (!at8192) return { ...entry, status: 'skipped', note: 'no n = 8192 time to extrapolate from' };
  if (at8192.ms > 2000) {
    const estimate = at8192.ms * (N / 8192) ** 2;
    return { ...entry, status: 'skipped', note: `n = 8192 took ${(at8192.ms / 1000).toFixed(1)} s, n = ${N} would take ~${(estimate / 1000).toFixed(0)} s` };
  }
  try {
    const fn = await peer.make(t); // one run, rows checked
    const start = performance.now();
    await fn();
    const ms = performance.now() - start;
    return { ...entry, status: 'completed', ms, gflops: flops / ms / 1e6 };
  } catch (error) {
    if (error instanceof PeerMismatchError) throw error;
    return { ...entry, status: 'failed', error: brief(error) };
  } finally {
    try { await peer.release?.(); } catch { /* a failed peer may not release cleanly */ }
  }
}

const section = {
  name: 'long',
  async run({ quick, loadFresh, peers, earlier }) {
    if (quick) return { results: null, notes: ['Long sequences: left out by --quick'] };
    const flops = attentionFlops(N, N, D);
    const memory = { 8192: await ours(loadFresh, 8192), [N]: await ours(loadFresh, N) };
    const mine = memory[N];
    const t = attentionTask(N, D);
    const tried = [];
    for (const peer of await peers()) {
      const at8192 = earlier.sdpa?.results.find((r) => r.runner === peer.name && r.n === 8192 && r.d === D);
      tried.push(await tryPeer(peer, at8192, t, flops));
    }
    const gflops = flops / Math.min(...mine.ms) / 1e6;
    const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
    const notes = [
      `Long sequences: attention [1, ${N}, ${D}] (${(flops / 1e9).toFixed(0)} GFLOP), single thread`,
      `  ${OURS.simd}: completed, ${mine.ms.map(seconds).join(' and ')} (${gflops.toFixed(1)} GFLOP/s, best of ${mine.ms.length}), output rows checked`,
      ...tried.map((p) => `  ${p.runner}: ${p.status === 'completed' ? `completed, ${seconds(p.ms)} (${p.gflops.toFixed(1)} GFLOP/s)`
        : p.status === 'failed' ? `failed: ${p.error}` : `skipped: ${p.note}`}`),
      `  (for scale: a materialised ${N} x ${N} float32 score matrix is ${(N * N * 4 / 2 ** 30).toFixed(1)} GiB; wasm32 memory is at most 4 GiB)`,
      `Wasm memory of our relaxed-SIMD load (WebAssembly.Memory size, fresh instance per run; initial ${MiB(memory[8192].initialBytes)}):`,
      ...[8192, N].map((n) => `  n = ${n}, d = ${D}: peak ${MiB(memory[n].peakBytes)} (run took ${seconds(Math.min(...memory[n].ms))})`),
    ];
    return { results: { n: N, d: D, flops, memory, ours: { completed: true, ms: mine.ms, gflops, peakBytes: mine.peakBytes }, peers: tried }, notes };
  },
};
export default section;

await runAlone(import.meta, section);
