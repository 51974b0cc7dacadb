// The peer libraries of the attention benchmark, each computing O = softmax(Q Kᵀ/√d) V on Q, K, V
// of [n, d] float32, wasm SIMD: tfjs-wasm (tfjs.js) and onnxruntime-web (onnxruntime.js).
// loadPeers() returns their runners { name, make: async (task) → fn, release?, maxN?, async? },
// each checked on every row at n = 33 against the double-precision reference before it is
// returned, its make() re-checking a few rows at the benchmarked size (shared/check.js). A peer
// that cannot load or run here is logged in one line and left out; one that disagrees with the
// reference stops the benchmark.
import { PeerMismatchError, attentionTask, checkRows, checked, oneLine } from '../shared/check.js';
import { ortAttentionRunners } from './onnxruntime.js';
import { tfjsAttentionRunners } from './tfjs.js';

// `threads` > 1 loads onnxruntime-web alone, on that many threads: tfjs-wasm has no threads in
// Node (its probe reports no thread support there, tensorflow/tfjs#3830).
export async function loadPeers({ log = console.log, threads = 1 } = {}) {
  const peers = [];
  const small = attentionTask(33, 64, 7);
  const libraries = [['tfjs-backend-wasm', tfjsAttentionRunners], ['onnxruntime-web', ortAttentionRunners]];
  for (const [label, load] of threads === 1 ? libraries : libraries.slice(1)) {
    let runners;
    try {
      runners = await load({ threads });
    } catch (e) {
      log(`peers: leaving out ${label}: ${oneLine(e)}`);
      continue;
    }
    for (const runner of runners.map(checked)) {
      try {
        const fn = await runner.make(small);
        checkRows(runner.name, await fn(), small, [...Array(small.n).keys()]); // every row at n = 33
      } catch (e) {
        if (e instanceof PeerMismatchError) throw e;
        log(`peers: leaving out ${runner.name}: ${oneLine(e)}`);
        continue;
      } finally {
        await runner.release?.();
      }
      peers.push(runner);
    }
  }
  return peers;
}
