// Checking gradients against double precision: central finite differences of a reference loss,
// the tolerance of the gradients issue, and the dropout factors a forward applied (so that a
// reference can reproduce a forward or backward with dropout). Shared by gradients.test.js and
// the API fuzzer.

import * as ref from '../../harness/reference.js';

export const toDouble = (t) => ({ data: Float64Array.from(t.data), shape: [...t.shape] });
export const dot = (a, b) => a.data.reduce((sum, x, i) => sum + x * b.data[i], 0);

/**
 * d loss / d x by central differences, x { data: Float64Array } perturbed in place and restored.
 * `indices` limits it to some entries (the others stay 0).
 */
export function numericGradient(x, loss, step = 1e-6, indices = x.data.keys()) {
  const gradient = new Float64Array(x.data.length);
  for (const i of indices) {
    const saved = x.data[i];
    x.data[i] = saved + step;
    const up = loss();
    x.data[i] = saved - step;
    const down = loss();
    x.data[i] = saved;
    gradient[i] = (up - down) / (2 * step);
  }
  return { data: gradient, shape: [...x.shape] };
}

/** The rule: every entry within 2e-4 of the largest |entry| of `want`. */
export function assertGradient(got, want, label) {
  const largest = want.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  ref.assertClose(got, want, { atol: 2e-4 * largest + 1e-7, rtol: 0, label });
}

/**
 * The dropout factors (0 or 1 / (1 - p)) that attention `fn` ('scaledDotProductAttention' or
 * 'additiveAttention') of `attn` applied to its weights for q, k and these options: with v the
 * identity, (P * F) v is P * F itself. A weight of 0 gets factor 1 (it contributes nothing).
 */
export function dropoutFactors(attn, q, k, options, fn = 'scaledDotProductAttention') {
  const [batch] = q.shape;
  const nk = k.shape[1];
  const identity = new Float32Array(batch * nk * nk);
  for (let b = 0; b < batch; b++) for (let j = 0; j < nk; j++) identity[(b * nk + j) * nk + j] = 1;
  const { output, weights } = attn[fn](q, k, ref.tensor(identity, [batch, nk, nk]), { ...options, weights: true });
  return Float64Array.from(weights.data, (p, i) => (p === 0 ? 1 : output.data[i] / p));
}
