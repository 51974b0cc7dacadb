// One thread count of the modern section's peer (modern.js): `node gqa-peer.js T` loads our
// package with { threads: T } and onnxruntime-web's GroupQueryAttention op (com.microsoft) with
// numThreads = T, which ORT fixes once per process, hence a process per count. It checks the
// two outputs agree, times them in turns at H = 32, Hkv = 8, d = 128, n = 512, causal, and
// prints one JSON line: { threads, peerMs, oursMs } (medians of 3 samples), or { threads, error }
// when the peer does not run. n = 512: the peer's CPU kernel took 4.3 s a call there on one
// thread (2026-11-26), and would take about a minute at n = 2048.
import { loadAttention } from '../../../dist/index.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { loadGqaPeer } from '../peers/onnxruntime.js';
import { expectClose, oneLine } from '../shared/check.js';

const threads = Number(process.argv[2]);
const attn = await loadAttention({ threads });
if (attn.threads !== threads) throw new Error(`asked for ${threads} threads, got ${attn.threads} (${attn.threadsReason})`);
const [H, Hkv, d, n] = [32, 8, 128, 512];
const tensor = (shape, seed) => ({ data: random(shape.reduce((a, b) => a * b), seed), shape });
const [q, k, v] = [tensor([1, H, n, d], 13), tensor([1, Hkv, n, d], 14), tensor([1, Hkv, n, d], 15)];
const ours = () => attn.scaledDotProductAttention(q, k, v, { causal: true }).output.data;
let line;
try {
  const peer = await loadGqaPeer({ threads });
  try {
    const { run, heads } = await peer.make(q, k, v);
    expectClose('onnxruntime-web GroupQueryAttention vs ours', heads(await run()), ours());
    const [theirs, mine] = await measureInTurns([{ fn: run, async: true }, { fn: ours }], { samples: 3, sampleMs: 50 });
    line = { threads, peerMs: theirs.ms, oursMs: mine.ms };
  } finally {
    await peer.release();
  }
} catch (error) {
  line = { threads, error: `onnxruntime-web GroupQueryAttention did not run (${oneLine(error)})` };
}
console.log(JSON.stringify(line));
process.exit(0); // ORT's and our workers would otherwise keep the process alive
