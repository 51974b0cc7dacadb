// A user's page: imports the package by name, lets Vite bundle it, and runs attention.
import { loadAttention } from 'attention-wasm';

const out = document.getElementById('result');
try {
  const results = {};
  for (const simd of [undefined, false]) {
    const attn = await loadAttention(simd === undefined ? {} : { simd });
    const q = { data: new Float32Array([1, 0, 0, 1]), shape: [1, 2, 2] };
    const v = { data: new Float32Array([10, 20, 30, 40]), shape: [1, 2, 2] };
    const { output, weights } = attn.scaledDotProductAttention(q, q, v, { weights: true });
    results[attn.backend] = { output: [...output.data], weights: [...weights.data], threads: attn.threads };
  }
  out.textContent = JSON.stringify(results);
} catch (error) {
  out.textContent = `error: ${error.message}`;
}
