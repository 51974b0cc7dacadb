// The computation behind section 3 (scoring functions), apart from its view: the 2-D example's
// scores and weights for every scoring function, the √d experiment, and d2l's masked softmax,
// all through the package. Plain data in and out, so that it runs (and is tested) without a page.

import { tensor } from '../../../shared/tensors.js';
import { normals, uniform } from '../../../shared/random.js';

export const SCORE_FUNCTIONS = ['dot', 'scaled-dot', 'neg-sq-dist', 'additive', 'general'];
export const KEYS = [[2.0, 0.4], [0.7, 1.1], [-0.7, 1.7], [-1.5, -0.3], [0.2, -1.3], [1.3, -0.6]];
export const HIDDEN = 8;
// Additive attention's parameters, drawn once from a fixed seed (PyTorch layout [out, in]).
export const ADDITIVE = (() => {
  const z = normals(HIDDEN * 5, 11);
  return {
    Wq: tensor(z.slice(0, 2 * HIDDEN), [HIDDEN, 2]),
    Wk: tensor(z.slice(2 * HIDDEN, 4 * HIDDEN), [HIDDEN, 2]),
    wv: tensor(z.slice(4 * HIDDEN), [HIDDEN]),
  };
})();
export const SAMPLES = 64; // queries and keys in the √d experiment: 64 × 64 = 4096 dot products
export const D_EXPONENTS = Array.from({ length: 11 }, (_, i) => i); // d = 1 … 1024
export const MASK_BATCH = 2;
export const MASK_QUERIES = 2;
export const MASK_KEYS = 10;
// The masked-softmax example's scores [MASK_BATCH, MASK_QUERIES, MASK_KEYS], uniform in [0, 1).
export const MASK_SCORES = (() => {
  const rand = uniform(7);
  return tensor(Float32Array.from({ length: MASK_BATCH * MASK_QUERIES * MASK_KEYS }, rand), [MASK_BATCH, MASK_QUERIES, MASK_KEYS]);
})();

export const mean = (a) => a.reduce((s, x) => s + x, 0) / a.length;

export const std = (a) => {
  const m = mean(a);
  return Math.sqrt(a.reduce((s, x) => s + (x - m) ** 2, 0) / a.length);
};

const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const small = (x) => (x < 1e-3 ? x.toExponential(1) : x.toFixed(3));

/** The mean over rows of each row's largest entry, for weights [rows, cols]. */
export function rowMaxMean(weights, cols) {
  let total = 0;
  const rows = weights.length / cols;
  for (let r = 0; r < rows; r++) {
    let m = 0;
    for (let c = 0; c < cols; c++) m = Math.max(m, weights[r * cols + c]);
    total += m;
  }
  return total / rows;
}

/**
 * The 2-D example: a query at angle theta (degrees) and length r against KEYS (rescaled to their
 * mean length with `equalKeys`); the general score's W rotates by phi degrees. Returns qv, keys,
 * perFunction [{ fn, scores, weights }] (one score call and one softmax per function) and the
 * Gaussian kernel's weights (σ = 1) for comparison.
 */
export function planeScores(attn, { theta, r, phi, equalKeys }) {
  const angle = (theta * Math.PI) / 180;
  const qv = [r * Math.cos(angle), r * Math.sin(angle)];
  const meanNorm = mean(KEYS.map(([x, y]) => Math.hypot(x, y)));
  const keys = KEYS.map(([x, y]) => {
    const s = equalKeys ? meanNorm / Math.hypot(x, y) : 1;
    return [x * s, y * s];
  });
  const q = tensor(qv, [1, 1, 2]);
  const k = tensor(keys.flat(), [1, KEYS.length, 2]);
  const p = (phi * Math.PI) / 180;
  const W = tensor([Math.cos(p), -Math.sin(p), Math.sin(p), Math.cos(p)], [2, 2]);
  const perFunction = SCORE_FUNCTIONS.map((fn) => {
    const scores = attn.score(q, k, { fn, ...ADDITIVE, W });
    return { fn, scores: scores.data, weights: attn.softmax(scores).data };
  });
  const gaussian = attn.kernelRegression({
    keys: tensor(keys.flat(), [KEYS.length, 2]), values: tensor(new Float32Array(KEYS.length), [KEYS.length]),
    queries: tensor(qv, [1, 2]), kernel: 'gaussian', bandwidth: 1, weights: true,
  }).weights.data;
  return { qv, keys, perFunction, gaussian };
}

/**
 * What the plane's weights show, in words: how far softmax(−½‖q − kᵢ‖²) is from the Gaussian
 * kernel's weights (σ = 1) and from softmax(qᵀkᵢ), for planeScores' result.
 */
export function planeIdentities({ perFunction, gaussian }, equalKeys) {
  const weightsOf = (fn) => perFunction.find((x) => x.fn === fn).weights;
  const neg = weightsOf('neg-sq-dist');
  return `softmax(−½‖q − kᵢ‖²) vs the Gaussian kernel's weights (σ = 1): max |Δ| = ${small(maxAbsDiff(neg, gaussian))}. `
    + `softmax(qᵀkᵢ) vs softmax(−½‖q − kᵢ‖²): max |Δ| = ${small(maxAbsDiff(neg, weightsOf('dot')))}`
    + (equalKeys ? ' — equal key lengths: the ‖kᵢ‖² term cancels.' : ' — the keys differ in length, so ½‖kᵢ‖² does not cancel.');
}

/**
 * The √d experiment: SAMPLES random queries against SAMPLES random keys of width d (seeded, kept
 * per d). at(d): the scores with and without the 1/√d scaling and their softmax; curve(): the
 * mean largest weight per query for every d of D_EXPONENTS, computed once.
 */
export function sqrtDExperiment(attn) {
  const samples = new Map(); // d -> { q, k }
  const sampleFor = (d) => {
    if (!samples.has(d)) {
      samples.set(d, {
        q: tensor(normals(SAMPLES * d, 1000 + d), [1, SAMPLES, d]),
        k: tensor(normals(SAMPLES * d, 2000 + d), [1, SAMPLES, d]),
      });
    }
    return samples.get(d);
  };
  let curve = null;
  return {
    at(d) {
      const { q, k } = sampleFor(d);
      const raw = attn.score(q, k, { fn: 'dot' });
      const scaled = attn.score(q, k, { fn: 'scaled-dot' });
      return { d, raw: raw.data, scaled: scaled.data, rawSoft: attn.softmax(raw).data, scaledSoft: attn.softmax(scaled).data };
    },
    curve() {
      curve ??= D_EXPONENTS.map((e) => {
        const { rawSoft, scaledSoft } = this.at(2 ** e);
        return { d: 2 ** e, raw: rowMaxMean(rawSoft, SAMPLES), scaled: rowMaxMean(scaledSoft, SAMPLES) };
      });
      return curve;
    },
  };
}

/** The √d experiment at one d, in words: the spread of the scores and the softmax's saturation. */
export function sqrtDSummary({ d, raw, scaled, rawSoft, scaledSoft }) {
  const rawMax = rowMaxMean(rawSoft, SAMPLES);
  const scaledMax = rowMaxMean(scaledSoft, SAMPLES);
  return `d = ${d}: std of qᵀk = ${std(raw).toFixed(2)} (√d = ${Math.sqrt(d).toFixed(2)}); `
    + `std of qᵀk/√d = ${std(scaled).toFixed(2)}. Mean largest softmax weight: ${rawMax.toFixed(2)} unscaled, ${scaledMax.toFixed(2)} scaled.`;
}

/** d2l's masked softmax of MASK_SCORES with valid lengths [len1, len2] and fill '-1e6' | '-inf'. */
export function maskedExample(attn, lens, fill) {
  const validLens = Int32Array.from(lens);
  const masked = attn.maskedSoftmax(MASK_SCORES, validLens, { fill: fill === '-inf' ? -Infinity : -1e6 });
  return { lens: validLens, masked: masked.data };
}
