// The computation behind section 4 (self-, cross- and multi-head attention), apart from its view:
// the sentence's inputs, the designed heads, a seeded nn.MultiheadAttention layer, and
// cross-attention between two sentences, all through the package. Plain data in and out, so that
// it runs (and is tested) without a page.

import { tensor } from '../../../shared/tensors.js';
import { hashString, normals } from '../../../shared/random.js';

export const MAX_TOKENS = 24;
export const SAME_WORD_SCALE = 12;
export const LOOKUP_SCALE = 30;

const DESIGNED_HEADS = {
  prev: ['previous token', 'A boolean mask leaves one key per query: j = i − 1 (the first token keeps itself).'],
  same: ['same word', `Q = K = word embeddings e(w) without positions, scale ${SAME_WORD_SCALE}: every occurrence of the query's word shares the weight.`],
  uniform: ['uniform average', 'Scale 0: every score is 0 and the softmax gives 1/n — average pooling.'],
  lookup: ['hard lookup', `Every query is e(target), scale ${LOOKUP_SCALE}: a database lookup of one key, whatever the query.`],
};

/** Lower-cased words (letters, digits, apostrophes), at most MAX_TOKENS. */
export const tokenize = (text) => (text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []).slice(0, MAX_TOKENS);

/** A seeded unit vector of width d per word: the same word, the same embedding. */
export function wordEmbedding(word, d) {
  const z = normals(d, hashString(word));
  const norm = Math.hypot(...z);
  return z.map((v) => v / norm);
}

/**
 * The heads of a model's self() result, each with the name and the sentence its caption shows:
 * [{ id, name, info, weights }], the designed heads first.
 */
export function namedHeads({ target, designed, randomHeads }, { d, h, seed }) {
  const named = designed.map(({ id, weights }) => {
    const [name, info] = DESIGNED_HEADS[id];
    return { id, name, info: id === 'lookup' ? info.replace('target', `'${target}'`) : info, weights };
  });
  const random = randomHeads.map(({ id, weights }, i) => ({
    id, name: `random head ${i + 1}`,
    info: `nn.MultiheadAttention head ${i + 1} of ${randomHeads.length}, seed ${seed}: d/h = ${d / h} wide.`,
    weights,
  }));
  return [...named, ...random];
}

/**
 * The section's model: word embeddings (cached), inputs X = s (√d E + P) with P the positional
 * encoding when `pe`, the designed heads and a seeded MultiHeadAttention layer (kept while d, h
 * and its seed stay). dispose() frees the layer.
 * Settings: { d, h, seed, scale, pe, causal, lookup }.
 */
export function createMultiHeadModel(attn) {
  const embeddings = new Map();
  const embedding = (word, d) => {
    const key = `${d}|${word}`;
    if (!embeddings.has(key)) embeddings.set(key, wordEmbedding(word, d));
    return embeddings.get(key);
  };
  // E: [1, n, d] word embeddings; X: [1, n, d] = s (√d E + P).
  const inputs = (tokens, { d, scale, pe }) => {
    const n = tokens.length;
    const E = new Float32Array(n * d);
    tokens.forEach((w, i) => E.set(embedding(w, d), i * d));
    const P = pe ? attn.positionalEncoding(n, d).data : null;
    const X = E.map((e, k) => scale * (Math.sqrt(d) * e + (P ? P[k] : 0)));
    return { E: tensor(E, [1, n, d]), X: tensor(X, [1, n, d]) };
  };
  let mha = null;
  let mhaKey = '';
  const layer = ({ d, h, seed }) => {
    const key = `${d}|${h}|${seed}`;
    if (key !== mhaKey) {
      mha?.dispose();
      mha = new attn.MultiHeadAttention({ embedDim: d, numHeads: h }).resetParameters(seed);
      mhaKey = key;
    }
    return mha;
  };

  /**
   * Self-attention over `tokens`: the designed heads { id: prev | same | uniform | lookup,
   * weights [n, n] } (lookup's `target` is settings.lookup if the sentence has it, else its third
   * word), and the random layer's heads { id: r0…, weights [n, n] } with its shapes.
   */
  function self(tokens, settings) {
    const n = tokens.length;
    const { d } = settings;
    const { E, X } = inputs(tokens, settings);
    const sdpa = (q, k, options) =>
      attn.scaledDotProductAttention(q, k, X, { ...options, causal: settings.causal, weights: true }).weights.data;
    const prevMask = new Uint8Array(n * n).fill(1);
    for (let i = 0; i < n; i++) prevMask[i * n + Math.max(0, i - 1)] = 0;
    const target = tokens.includes(settings.lookup) ? settings.lookup : tokens[Math.min(2, n - 1)];
    const lookupQueries = new Float32Array(n * d);
    for (let i = 0; i < n; i++) lookupQueries.set(embedding(target, d), i * d);
    const designed = [
      { id: 'prev', weights: sdpa(X, X, { mask: { data: prevMask, shape: [n, n] } }) },
      { id: 'same', weights: sdpa(E, E, { scale: SAME_WORD_SCALE }) },
      { id: 'uniform', weights: sdpa(X, X, { scale: 0 }) },
      { id: 'lookup', weights: sdpa(tensor(lookupQueries, [1, n, d]), E, { scale: LOOKUP_SCALE }) },
    ];
    const random = layer(settings).forward(X, X, X, { averageAttnWeights: false, causal: settings.causal });
    const [, numHeads, L, S] = random.weights.shape;
    const randomHeads = Array.from({ length: numHeads }, (_, i) => ({
      id: `r${i}`, weights: random.weights.data.subarray(i * L * S, (i + 1) * L * S),
    }));
    return { target, designed, randomHeads, weightShape: random.weights.shape, outputShape: random.output.shape };
  }

  /** Cross-attention, queries from tokens b, keys and values from tokens a: the same-word head and the random layer's mean weights [nb, na]. */
  function cross(a, b, settings) {
    const A = inputs(a, settings);
    const B = inputs(b, settings);
    const same = attn.scaledDotProductAttention(B.E, A.E, A.X, { scale: SAME_WORD_SCALE, weights: true });
    const random = layer(settings).forward(B.X, A.X, A.X);
    return { same: same.weights.data, random: random.weights.data, outputShape: random.output.shape };
  }

  return { self, cross, dispose: () => mha?.dispose() };
}
