// The page benchmark's decode rows, run inside the worker (worker.js): one token's attention
// against a resident KV cache, GPT-2-small shaped (12 heads, d = 64, nq = 1), at n cached
// positions, beside the time of copying K and V once (Float32Array.set: the memory traffic a
// decode cannot avoid), through attn.KVCache.
import { normals } from '../../../shared/random.js';
import { plainJsAttention } from '../../../shared/plain-js-attention.js';
import { measureInTurns } from '../../../shared/timing.js';

export const DECODE = { heads: 12, d: 64 };

/** Times attend and the copy at n positions; returns { n, heads, d, ms, copyMs, reps, maxDiff }. */
export async function measureDecode(attn, n, { samples, sampleMs, onSample }) {
  const { heads, d } = DECODE;
  const q = normals(heads * d, 4), k = normals(heads * n * d, 5), v = normals(heads * n * d, 6);
  const cache = new attn.KVCache({ batch: 1, heads, headDim: d, valueDim: d, capacity: n });
  try {
    cache.append({ data: k, shape: [1, heads, n, d] }, { data: v, shape: [1, heads, n, d] });
    const query = { data: q, shape: [1, heads, 1, d] };
    const attend = () => cache.attend(query, { scale: 1 / Math.sqrt(d) }).output.data;
    // Checked per head against plain JS over the same keys.
    const out = attend();
    let maxDiff = 0;
    for (let h = 0; h < heads; h++) {
      const rows = (x, r) => x.subarray(h * r * d, (h + 1) * r * d);
      const want = plainJsAttention(rows(q, 1), rows(k, n), rows(v, n), 1, n, d);
      for (let c = 0; c < d; c++) maxDiff = Math.max(maxDiff, Math.abs(out[h * d + c] - want[c]));
    }
    const copy = new Float32Array(k.length + v.length);
    const [timed, copied] = await measureInTurns([
      { fn: attend },
      { fn: () => { copy.set(k); copy.set(v, k.length); } },
    ], { samples, sampleMs, onSample });
    return { n, heads, d, ms: timed.ms, copyMs: copied.ms, reps: timed.reps, maxDiff };
  } finally {
    cache.dispose();
  }
}
