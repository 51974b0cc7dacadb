// Independent double-precision references for the attention-wasm API, written from the
// definitions (d2l, PyTorch docs), not from the package's code: plain loops over Float64Array.
// Tensors are { data, shape } in row-major order, as in the package. Also: the seeded generator
// for inputs and a closeness assertion for float32 results against double references.
// The one home of these references: the JS tests (tests/js) and the benchmark (scripts/bench),
// which check every result against them, import this file. It imports nothing of the package,
// so the tests' consumer folder links this folder rather than copying it (scripts/test-js.sh).

import assert from 'node:assert/strict';

import { uniform } from '../web/shared/random.js';

// ---------------------------------------------------------------------------------------------
// Inputs

/**
 * mulberry32 (the page's generator, web/shared/random.js: one generator for the page, the tests
 * and the benchmarks): mulberry32(seed) returns () => uniform in [0, 1).
 */
export const mulberry32 = uniform;

export const sizeOf = (shape) => shape.reduce((a, b) => a * b, 1);

export const tensor = (data, shape, ArrayType = Float32Array) => ({
  data: data instanceof ArrayType ? data : ArrayType.from(data),
  shape: [...shape],
});

/** A float32 tensor of the given shape, uniform in [lo, hi). */
export function randomTensor(rng, shape, lo = -1, hi = 1) {
  const data = new Float32Array(sizeOf(shape));
  for (let i = 0; i < data.length; i++) data[i] = lo + (hi - lo) * rng();
  return { data, shape: [...shape] };
}

/** A Uint8Array of 0/1 with the given probability of 1. */
export function randomBits(rng, count, probability = 0.3) {
  return Uint8Array.from({ length: count }, () => (rng() < probability ? 1 : 0));
}

const dataOf = (x) => (ArrayBuffer.isView(x) || Array.isArray(x) ? x : x.data);

// ---------------------------------------------------------------------------------------------
// Softmax and masks

/** Softmax of one row (array-like of numbers) into a new Float64Array, max-subtracted. */
export function softmaxRow(row) {
  const out = new Float64Array(row.length);
  let max = -Infinity;
  for (const value of row) max = Math.max(max, value);
  let sum = 0;
  for (let i = 0; i < row.length; i++) {
    out[i] = Math.exp(row[i] - max); // all -Infinity: exp(NaN) = NaN, as PyTorch
    sum += out[i];
  }
  for (let i = 0; i < row.length; i++) out[i] /= sum;
  return out;
}

/** Softmax along the last axis. */
export function softmax(x) {
  const cols = x.shape[x.shape.length - 1];
  const out = new Float64Array(x.data.length);
  for (let start = 0; cols > 0 && start < x.data.length; start += cols) {
    out.set(softmaxRow(Array.from(x.data.subarray(start, start + cols))), start);
  }
  return { data: out, shape: [...x.shape] };
}

/**
 * Masks score matrices in place: scores [M, nq, nk] as a Float64Array, M = batch * heads.
 * Additive masks are added first; then every hidden position is *replaced* by `fill`.
 * validLens: [batch] or [batch * nq]; boolMask / additive: data of [nq, nk] (broadcast) or
 * [M, nq, nk]; keyPadding: [batch, nk] (1 = padding); causal: key j is hidden from query i when j > i.
 * `hidden` (optional, a Uint8Array of scores' length) gets 1 where a score was replaced.
 */
export function maskScores(scores, { batch, heads = 1, nq, nk, validLens, boolMask, additive, keyPadding, causal = false, fill = -1e6, hidden: replaced }) {
  const M = batch * heads;
  const lens = validLens == null ? null : Array.from(dataOf(validLens));
  const bools = boolMask == null ? null : dataOf(boolMask);
  const adds = additive == null ? null : dataOf(additive);
  const padding = keyPadding == null ? null : dataOf(keyPadding);
  for (let s = 0; s < M; s++) {
    const b = Math.floor(s / heads);
    for (let i = 0; i < nq; i++) {
      for (let j = 0; j < nk; j++) {
        const at = (s * nq + i) * nk + j;
        const inBlock = i * nk + j;
        if (adds) scores[at] += adds.length === nq * nk ? adds[inBlock] : adds[s * nq * nk + inBlock];
        let hidden = false;
        if (lens) hidden ||= j >= (lens.length === batch ? lens[b] : lens[b * nq + i]);
        if (bools) hidden ||= (bools.length === nq * nk ? bools[inBlock] : bools[s * nq * nk + inBlock]) !== 0;
        if (padding) hidden ||= padding[b * nk + j] !== 0;
        if (causal) hidden ||= j > i;
        if (hidden) {
          scores[at] = fill;
          if (replaced) replaced[at] = 1;
        }
      }
    }
  }
  return scores;
}

/** d2l's masked_softmax: x [B, nq, nk], validLens [B] or [B, nq]; masked scores become fill. */
export function maskedSoftmax(x, validLens, { fill = -1e6 } = {}) {
  const [batch, nq, nk] = x.shape;
  const scores = Float64Array.from(x.data);
  if (validLens != null) maskScores(scores, { batch, nq, nk, validLens, fill });
  return softmax({ data: scores, shape: x.shape });
}

// ---------------------------------------------------------------------------------------------
// Products and scores

/** [B, n, k] x [B, k, m] -> [B, n, m] */
export function bmm(a, b) {
  const [batch, n, k] = a.shape;
  const m = b.shape[2];
  const out = new Float64Array(batch * n * m);
  for (let s = 0; s < batch; s++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        let sum = 0;
        for (let t = 0; t < k; t++) sum += a.data[(s * n + i) * k + t] * b.data[(s * k + t) * m + j];
        out[(s * n + i) * m + j] = sum;
      }
    }
  }
  return { data: out, shape: [batch, n, m] };
}

/** y = W x for W [out, in] (PyTorch Linear layout) and x a row (array-like of `in` numbers). */
function linear(W, x, outDim, inDim, bias) {
  const y = new Float64Array(outDim);
  for (let o = 0; o < outDim; o++) {
    let sum = bias ? bias[o] : 0;
    for (let t = 0; t < inDim; t++) sum += W[o * inDim + t] * x[t];
    y[o] = sum;
  }
  return y;
}

const row = (t, s, i) => {
  const [, n, d] = t.shape;
  return t.data.subarray((s * n + i) * d, (s * n + i + 1) * d);
};

/**
 * Scores [B, nq, nk]: 'dot' q.k; 'scaled-dot' q.k / sqrt(d); 'neg-sq-dist' -|q-k|^2 / 2;
 * 'additive' wv . tanh(Wq q + Wk k) (Wq [h, dq], Wk [h, dk], wv [h]); 'general' q^T W k (W [dq, dk]).
 */
export function score(q, k, { fn = 'scaled-dot', Wq, Wk, wv, W } = {}) {
  const [batch, nq, dq] = q.shape;
  const [, nk, dk] = k.shape;
  const out = new Float64Array(batch * nq * nk);
  const hidden = wv ? wv.data.length : 0;
  for (let s = 0; s < batch; s++) {
    const pk = fn === 'additive' ? Array.from({ length: nk }, (_, j) => linear(Wk.data, row(k, s, j), hidden, dk)) : null;
    for (let i = 0; i < nq; i++) {
      const qi = row(q, s, i);
      const pq = fn === 'additive' ? linear(Wq.data, qi, hidden, dq) : null;
      const qW = fn === 'general' ? Float64Array.from({ length: dk }, (_, c) => {
        let sum = 0;
        for (let t = 0; t < dq; t++) sum += qi[t] * W.data[t * dk + c];
        return sum;
      }) : null;
      for (let j = 0; j < nk; j++) {
        const kj = row(k, s, j);
        let value = 0;
        if (fn === 'dot' || fn === 'scaled-dot') {
          for (let t = 0; t < dq; t++) value += qi[t] * kj[t];
          if (fn === 'scaled-dot' && dq > 0) value /= Math.sqrt(dq);
        } else if (fn === 'neg-sq-dist') {
          for (let t = 0; t < dq; t++) value += (qi[t] - kj[t]) ** 2;
          value *= -0.5;
        } else if (fn === 'additive') {
          for (let h = 0; h < hidden; h++) value += wv.data[h] * Math.tanh(pq[h] + pk[j][h]);
        } else if (fn === 'general') {
          for (let t = 0; t < dk; t++) value += qW[t] * kj[t];
        } else {
          throw new Error(`reference: unknown score function ${fn}`);
        }
        out[(s * nq + i) * nk + j] = value;
      }
    }
  }
  return { data: out, shape: [batch, nq, nk] };
}

// ---------------------------------------------------------------------------------------------
// Attention

// A mask option as the API takes it (bare typed array or tensor), split into bool / additive.
function splitMask(mask) {
  if (mask == null) return {};
  const data = dataOf(mask);
  return data instanceof Uint8Array ? { boolMask: data } : { additive: data };
}

// Masks scores [M, nq, nk] (Float64Array), softmaxes each row, pools v [M, nk, dv].
function attend(scores, v, maskOptions) {
  const [M, nk, dv] = v.shape;
  const { nq } = maskOptions;
  maskScores(scores, { ...maskOptions, nk });
  const weights = softmax({ data: scores, shape: [M, nq, nk] });
  const output = bmm(weights, { data: v.data, shape: [M, nk, dv] });
  return { output, weights };
}

const attentionScale = (q, scale) => scale ?? (q.shape[2] > 0 ? 1 / Math.sqrt(q.shape[2]) : 1);

/**
 * softmax(mask(q k^T * scale)) v; scale defaults to 1/sqrt(d); masked scores become fill
 * (default -1e6, d2l). Options: validLens, mask (Uint8Array bool / Float32Array additive, bare
 * or tensor, [nq, nk] or [B, nq, nk]), causal, scale, fill.
 */
export function scaledDotProductAttention(q, k, v, { validLens, mask, causal, scale, fill = -1e6 } = {}) {
  const [batch, nq] = q.shape;
  const s = attentionScale(q, scale);
  const scores = score(q, k, { fn: 'dot' }).data.map((x) => x * s);
  return attend(scores, v, { batch, nq, validLens, causal, fill, ...splitMask(mask) });
}

/**
 * Gradients of sum(O * gradOutput) for O = (P * F) v, P = the weights of
 * scaledDotProductAttention(q, k, v, options), F the dropout factors (an array like P; none: 1),
 * by the chain rule: dv = (P F)^T dO; dP = (dO v^T) F; dS = P (dP - rowsum(P dP)), 0 where the
 * mask replaced the score by fill (a constant); dq = scale dS k; dk = scale dS^T q.
 */
export function scaledDotProductAttentionBackward(q, k, v, gradOutput, { validLens, mask, causal, scale, fill = -1e6 } = {}, factors = null) {
  const [batch, nq, d] = q.shape;
  const [, nk, dv] = v.shape;
  const s = attentionScale(q, scale);
  const scores = score(q, k, { fn: 'dot' }).data.map((x) => x * s);
  const hidden = new Uint8Array(scores.length);
  maskScores(scores, { batch, nq, nk, validLens, causal, fill, hidden, ...splitMask(mask) });
  const P = softmax({ data: scores, shape: [batch, nq, nk] }).data;
  const dq = new Float64Array(batch * nq * d);
  const dk = new Float64Array(batch * nk * d);
  const dvOut = new Float64Array(batch * nk * dv);
  const dP = new Float64Array(nk);
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < nq; i++) {
      const at = (b * nq + i) * nk;
      const g = row(gradOutput, b, i);
      let D = 0;
      for (let j = 0; j < nk; j++) {
        const f = factors ? factors[at + j] : 1;
        const vj = row(v, b, j);
        let t = 0;
        for (let c = 0; c < dv; c++) {
          t += g[c] * vj[c];
          dvOut[(b * nk + j) * dv + c] += P[at + j] * f * g[c];
        }
        dP[j] = t * f;
        D += P[at + j] * dP[j];
      }
      const qi = row(q, b, i);
      for (let j = 0; j < nk; j++) {
        const dS = hidden[at + j] ? 0 : P[at + j] * (dP[j] - D) * s;
        const kj = row(k, b, j);
        for (let c = 0; c < d; c++) {
          dq[(b * nq + i) * d + c] += dS * kj[c];
          dk[(b * nk + j) * d + c] += dS * qi[c];
        }
      }
    }
  }
  return {
    dq: { data: dq, shape: [batch, nq, d] },
    dk: { data: dk, shape: [batch, nk, d] },
    dv: { data: dvOut, shape: [batch, nk, dv] },
  };
}

/** d2l's AdditiveAttention (without dropout): scores wv . tanh(Wq q + Wk k), then as SDPA. */
export function additiveAttention(q, k, v, { Wq, Wk, wv, validLens, mask, causal, fill = -1e6 } = {}) {
  const [batch, nq] = q.shape;
  const scores = score(q, k, { fn: 'additive', Wq, Wk, wv }).data;
  return attend(scores, v, { batch, nq, validLens, causal, fill, ...splitMask(mask) });
}

// ---------------------------------------------------------------------------------------------
// Nadaraya-Watson

export const KERNELS = {
  gaussian: (u) => Math.exp(-(u * u) / 2),
  boxcar: (u) => (u <= 1 ? 1 : 0),
  epanechnikov: (u) => Math.max(0, 1 - u),
  constant: () => 1,
};

const asMatrix = (t) => (t.shape.length === 1 ? { data: t.data, shape: [t.shape[0], 1] } : t);

// Kernel weights [m, n], each row scaled by a constant that normalisation cancels: the Gaussian
// row in log-sum-exp form, exp(-(d^2 - min d^2) / (2 sigma^2)), so that a small bandwidth leaves
// the nearest key weight 1 instead of underflowing every weight to 0 (d / sigma > ~38 in double).
// With `skipDiagonal` (leave-one-out: the queries are the keys) entry (i, i) is 0.
function kernelMatrix(queries, keys, kernel, bandwidth, skipDiagonal = false) {
  const [m, dx] = queries.shape;
  const [n] = keys.shape;
  const K = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    const row = K.subarray(i * n, (i + 1) * n);
    for (let j = 0; j < n; j++) {
      let sq = 0;
      for (let t = 0; t < dx; t++) sq += (queries.data[i * dx + t] - keys.data[j * dx + t]) ** 2;
      if (skipDiagonal && i === j) row[j] = kernel === 'gaussian' ? -Infinity : 0;
      else row[j] = kernel === 'gaussian' ? -sq / (2 * bandwidth * bandwidth) : KERNELS[kernel](Math.sqrt(sq) / bandwidth);
    }
    if (kernel === 'gaussian') {
      const max = row.reduce((a, b) => Math.max(a, b), -Infinity);
      for (let j = 0; j < n; j++) row[j] = max === -Infinity ? 0 : Math.exp(row[j] - max);
    }
  }
  return K;
}

// Normalises each row of K [m, n] and pools values [n, dy]; a row with zero total gives zero
// weights and a NaN output (no key reaches the query).
function normaliseAndPool(K, m, n, values) {
  const dy = values.shape[1];
  const output = new Float64Array(m * dy);
  for (let i = 0; i < m; i++) {
    let total = 0;
    for (let j = 0; j < n; j++) total += K[i * n + j];
    if (!(total > 0)) {
      output.fill(NaN, i * dy, (i + 1) * dy);
      continue;
    }
    for (let j = 0; j < n; j++) K[i * n + j] /= total;
    for (let c = 0; c < dy; c++) {
      let sum = 0;
      for (let j = 0; j < n; j++) sum += K[i * n + j] * values.data[j * dy + c];
      output[i * dy + c] = sum;
    }
  }
  return output;
}

/** The similarity kernel at distances >= 0 (any shape), in double. */
export function kernelValues({ distances, kernel = 'gaussian', bandwidth = 1 }) {
  return { data: Float64Array.from(distances.data, (d) => KERNELS[kernel](d / bandwidth)), shape: [...distances.shape] };
}

/** Nadaraya-Watson: keys [n, dx] | [n], values [n, dy] | [n], queries [m, dx] | [m]. */
export function kernelRegression({ keys, values, queries, kernel = 'gaussian', bandwidth = 1 }) {
  const k = asMatrix(keys);
  const v = asMatrix(values);
  const q = asMatrix(queries);
  const [m] = q.shape;
  const [n] = k.shape;
  const K = kernelMatrix(q, k, kernel, bandwidth);
  const output = normaliseAndPool(K, m, n, v);
  return { output: { data: output, shape: [m, v.shape[1]] }, weights: { data: K, shape: [m, n] } };
}

/**
 * Leave-one-out error per bandwidth: the mean over keys of |value - prediction without it|^2;
 * Infinity when some key is reached by no other key (or n < 2). best: the bandwidth of the
 * first smallest finite error, NaN if none.
 */
export function leaveOneOut({ keys, values, kernel = 'gaussian', bandwidths }) {
  const k = asMatrix(keys);
  const v = asMatrix(values);
  const [n] = k.shape;
  const dy = v.shape[1];
  const errors = [];
  let best = NaN;
  let bestError = Infinity;
  for (const bandwidth of bandwidths) {
    const K = kernelMatrix(k, k, kernel, bandwidth, true);
    const predictions = normaliseAndPool(K, n, n, v);
    let error = Infinity;
    if (n >= 2 && predictions.every(Number.isFinite)) {
      let sum = 0;
      for (let i = 0; i < n * dy; i++) sum += (predictions[i] - v.data[i]) ** 2;
      error = sum / n;
    }
    errors.push(error);
    if (error < bestError) {
      bestError = error;
      best = bandwidth;
    }
  }
  return { errors: Float64Array.from(errors), best };
}

// ---------------------------------------------------------------------------------------------
// Multi-head attention

/**
 * torch.nn.MultiheadAttention(batch_first=True, dropout=0) forward, from a PyTorch state dict.
 * config { embedDim, numHeads, kdim, vdim, bias }; query [B, L, E], key [B, S, kdim],
 * value [B, S, vdim]. Options: keyPaddingMask [B, S] (1 = padding), attnMask [L, S] or
 * [B * H, L, S] (Uint8Array bool: 1 = not allowed; Float32Array: added), validLens, causal,
 * fill (default -Infinity: masked scores become -inf, so fully masked rows are NaN),
 * averageAttnWeights (default true).
 */
export function multiHeadAttention(stateDict, config, query, key = query, value = key, options = {}) {
  const { embedDim: E, numHeads: H } = config;
  const kdim = config.kdim ?? E;
  const vdim = config.vdim ?? E;
  const { keyPaddingMask, attnMask, validLens, causal, fill = -Infinity, averageAttnWeights = true } = options;
  const [B, L] = query.shape;
  const S = key.shape[1];
  const hd = E / H;

  let Wq, Wk, Wv;
  if (stateDict.in_proj_weight) {
    const w = stateDict.in_proj_weight.data;
    [Wq, Wk, Wv] = [w.subarray(0, E * E), w.subarray(E * E, 2 * E * E), w.subarray(2 * E * E)];
  } else {
    [Wq, Wk, Wv] = [stateDict.q_proj_weight.data, stateDict.k_proj_weight.data, stateDict.v_proj_weight.data];
  }
  const inBias = stateDict.in_proj_bias?.data;
  const [bq, bk, bv] = inBias ? [inBias.subarray(0, E), inBias.subarray(E, 2 * E), inBias.subarray(2 * E)] : [];

  // x W^T + b for every row of x [B, n, in] -> Float64Array [B, n, E].
  const project = (x, W, b, inDim) => {
    const n = x.shape[1];
    const out = new Float64Array(B * n * E);
    for (let r = 0; r < B * n; r++) out.set(linear(W, x.data.subarray(r * inDim, (r + 1) * inDim), E, inDim, b), r * E);
    return out;
  };
  // [B, n, E] -> [B * H, n, hd]: head h takes columns h*hd .. (h+1)*hd - 1.
  const split = (x, n) => {
    const out = new Float64Array(B * H * n * hd);
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        for (let i = 0; i < n; i++) {
          for (let c = 0; c < hd; c++) out[((b * H + h) * n + i) * hd + c] = x[(b * n + i) * E + h * hd + c];
        }
      }
    }
    return out;
  };
  const q = split(project(query, Wq, bq, E), L);
  const k = split(project(key, Wk, bk, kdim), S);
  const v = split(project(value, Wv, bv, vdim), S);

  const scale = 1 / Math.sqrt(hd);
  const scores = new Float64Array(B * H * L * S);
  for (let s = 0; s < B * H; s++) {
    for (let i = 0; i < L; i++) {
      for (let j = 0; j < S; j++) {
        let dot = 0;
        for (let c = 0; c < hd; c++) dot += q[(s * L + i) * hd + c] * k[(s * S + j) * hd + c];
        scores[(s * L + i) * S + j] = dot * scale;
      }
    }
  }
  const { output: heads, weights } = attend(scores, { data: v, shape: [B * H, S, hd] }, {
    batch: B, heads: H, nq: L, validLens, causal, fill, keyPadding: keyPaddingMask, ...splitMask(attnMask),
  });

  // Merge heads back to [B, L, E], then the output projection.
  const merged = new Float64Array(B * L * E);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < L; i++) {
        for (let c = 0; c < hd; c++) merged[(b * L + i) * E + h * hd + c] = heads.data[((b * H + h) * L + i) * hd + c];
      }
    }
  }
  const output = new Float64Array(B * L * E);
  const outBias = stateDict['out_proj.bias']?.data;
  for (let r = 0; r < B * L; r++) {
    output.set(linear(stateDict['out_proj.weight'].data, merged.subarray(r * E, (r + 1) * E), E, E, outBias), r * E);
  }

  let w = { data: weights.data, shape: [B, H, L, S] };
  if (averageAttnWeights) {
    const mean = new Float64Array(B * L * S);
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        for (let t = 0; t < L * S; t++) mean[b * L * S + t] += weights.data[(b * H + h) * L * S + t] / H;
      }
    }
    w = { data: mean, shape: [B, L, S] };
  }
  return { output: { data: output, shape: [B, L, E] }, weights: w };
}

/** A PyTorch-style state dict with random weights for the given configuration. */
export function randomStateDict(rng, { embedDim: E, kdim = E, vdim = E, bias = true }, scale = 0.5) {
  const dict = {};
  if (kdim === E && vdim === E) {
    dict.in_proj_weight = randomTensor(rng, [3 * E, E], -scale, scale);
  } else {
    dict.q_proj_weight = randomTensor(rng, [E, E], -scale, scale);
    dict.k_proj_weight = randomTensor(rng, [E, kdim], -scale, scale);
    dict.v_proj_weight = randomTensor(rng, [E, vdim], -scale, scale);
  }
  if (bias) dict.in_proj_bias = randomTensor(rng, [3 * E], -scale, scale);
  dict['out_proj.weight'] = randomTensor(rng, [E, E], -scale, scale);
  if (bias) dict['out_proj.bias'] = randomTensor(rng, [E], -scale, scale);
  return dict;
}

// ---------------------------------------------------------------------------------------------
// Positional encoding

/** P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(i / 10000^(2j/d)). */
export function positionalEncoding(n, d) {
  const out = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < d; c++) {
      const j = Math.floor(c / 2);
      const angle = i / 10000 ** ((2 * j) / d);
      out[i * d + c] = c % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  }
  return { data: out, shape: [n, d] };
}

// ---------------------------------------------------------------------------------------------
// Assertions

/** The default tolerance of the numerical contract: 1e-6 absolute + 1e-5 relative. */
export const TIGHT = Object.freeze({ atol: 1e-6, rtol: 1e-5 });

/**
 * A looser tolerance for float32 sums over long rows (~1000 terms): their rounding error grows
 * with the sum of |terms|, ~1e-5 absolute for 1000 terms of size ~0.25, which the tight 1e-6
 * absolute part cannot absorb where the sum cancels to a small value.
 */
export const LOOSE = Object.freeze({ atol: 1e-5, rtol: 1e-4 });

function indexString(flat, shape) {
  if (!shape || shape.length < 2) return `[${flat}]`;
  const index = [];
  let rest = flat;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    index.unshift(shape[axis] === 0 ? 0 : rest % shape[axis]);
    rest = shape[axis] === 0 ? 0 : Math.floor(rest / shape[axis]);
  }
  return `[${index.join(', ')}]`;
}

/**
 * Asserts |got - want| <= atol + rtol * |want| element-wise (NaN must match NaN, infinities
 * must be equal). got / want: tensors { data, shape } (shapes must be equal too) or arrays.
 * The failure message names the first bad index, both values, and how many elements failed.
 */
export function assertClose(got, want, { atol = TIGHT.atol, rtol = TIGHT.rtol, label = 'value' } = {}) {
  const gotData = dataOf(got);
  const wantData = dataOf(want);
  const shape = want.shape ?? got.shape;
  if (got.shape && want.shape) {
    assert.deepEqual(got.shape, want.shape, `${label}: shape ${JSON.stringify(got.shape)} != expected ${JSON.stringify(want.shape)}`);
  }
  assert.equal(gotData.length, wantData.length, `${label}: ${gotData.length} values, expected ${wantData.length}`);
  let first = -1;
  let failures = 0;
  let worst = 0;
  for (let i = 0; i < wantData.length; i++) {
    const g = gotData[i];
    const w = wantData[i];
    let ok;
    if (Number.isNaN(w) || Number.isNaN(g)) ok = Number.isNaN(w) && Number.isNaN(g);
    else if (!Number.isFinite(w) || !Number.isFinite(g)) ok = g === w;
    else {
      const error = Math.abs(g - w);
      ok = error <= atol + rtol * Math.abs(w);
      worst = Math.max(worst, error);
    }
    if (!ok) {
      failures++;
      if (first < 0) first = i;
    }
  }
  if (failures > 0) {
    assert.fail(
      `${label}: ${failures} of ${wantData.length} values differ beyond ${atol} + ${rtol}·|want|; ` +
        `first at ${indexString(first, shape)}: got ${gotData[first]}, want ${wantData[first]} ` +
        `(largest finite error ${worst})`,
    );
  }
}

/** Asserts that each row (last axis) of a tensor sums to 1 within `tolerance`. */
export function assertRowsSumToOne(t, tolerance = 1e-5, label = 'weights') {
  const cols = t.shape[t.shape.length - 1];
  for (let start = 0; cols > 0 && start < t.data.length; start += cols) {
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += t.data[start + j];
    assert.ok(Math.abs(sum - 1) <= tolerance, `${label}: row at offset ${start} sums to ${sum}, expected 1`);
  }
}
