// Attention in plain JavaScript (Float32Array, the obvious loops): the baseline a user has
// without wasm. One copy, shared by the page's benchmark worker
// (web/src/sections/benchmark/worker.js) and the Node benchmark
// (scripts/bench/attention/sdpa.js).
export function plainJsAttention(q, k, v, n, m, d) {
  const out = new Float32Array(n * d);
  const scores = new Float32Array(m);
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let j = 0; j < m; j++) {
      let dot = 0;
      for (let t = 0; t < d; t++) dot += q[i * d + t] * k[j * d + t];
      scores[j] = dot * scale;
      if (scores[j] > max) max = scores[j];
    }
    let sum = 0;
    for (let j = 0; j < m; j++) sum += scores[j] = Math.exp(scores[j] - max);
    for (let j = 0; j < m; j++) {
      const w = scores[j] / sum;
      for (let t = 0; t < d; t++) out[i * d + t] += w * v[j * d + t];
    }
  }
  return out;
}
