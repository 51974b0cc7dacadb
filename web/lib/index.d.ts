// attention-wasm: attention mechanisms compiled to WebAssembly (SIMD where available).
// Tensors are row-major (C order) float32: { data, shape }. Batched inputs are [B, n, d].
// Every function validates its arguments and throws a TypeError (wrong kind of value) or a
// RangeError (wrong shape or value) naming the argument, expected vs given. Each argument and
// option is read exactly once (getters run once; later changes to the caller's objects do not
// matter). Any genuine typed array of the named type is accepted: subclasses, arrays from another
// realm, and Node's Buffer where a Uint8Array is expected; a Proxy of a typed array, an object
// that only inherits a typed array's prototype, and a detached buffer are a TypeError. Results are fresh JS-owned arrays, never views into the wasm heap.
// A call whose buffers together exceed the wasm heap's limit (4 GiB less 64 MiB) is a
// RangeError before anything is allocated; a failed allocation inside the core is a RangeError
// starting "out of memory".

export interface Tensor<T extends ArrayLike<number> = Float32Array> {
  data: T;
  shape: number[];
}

/** Valid lengths (d2l): one per batch row [B] or one per query [B, nq]; each in [0, nk]. */
export type ValidLens = Int32Array | number[] | Tensor<Int32Array>;

/**
 * A mask over scores: Uint8Array = boolean (1 = masked out, as PyTorch's bool attn_mask),
 * Float32Array = additive (added to the scores). Shape [nq, nk] (broadcast) or one block per
 * score matrix; a bare typed array is read by its length.
 */
export type ScoreMask = Uint8Array | Float32Array | Tensor<Uint8Array> | Tensor<Float32Array>;

export type Kernel = 'gaussian' | 'boxcar' | 'epanechnikov' | 'constant';
export type ScoreFunction = 'dot' | 'scaled-dot' | 'neg-sq-dist' | 'additive' | 'general';

export interface AttentionResult {
  /** [B, nq, dv], or [B, H, nq, dv] for 4-D inputs. */
  output: Tensor;
  /** [B, nq, nk] (or [B, H, nq, nk]) attention weights before dropout, present when requested. */
  weights?: Tensor;
  /**
   * [B, nq] (or [B, H, nq]), with `returnLse: true`: the log of each row's softmax denominator,
   * log(Σⱼ exp(sᵢⱼ) + exp(sink)) over the final scores (FlashAttention's softmax_lse).
   */
  lse?: Tensor;
}

/** Gradients of sum(output ⊙ gradOutput) for scaled dot-product attention, shaped like q, k, v. */
export interface AttentionGradients {
  dq: Tensor;
  dk: Tensor;
  dv: Tensor;
  /** [H] (H = 1 for 3-D inputs), when `sinks` were given: the sinks' gradient, summed over the batch. */
  dsinks?: Tensor;
}

/** Additive attention's gradients: the inputs', and the parameters' (dWq [h, dq], dWk [h, dk], dwv [h]). */
export interface AdditiveAttentionGradients extends AttentionGradients {
  dWq: Tensor;
  dWk: Tensor;
  dwv: Tensor;
}

/** The options of a backward pass: the forward's, whose semantics it reproduces (weights aside). */
export type ScaledDotProductBackwardOptions = Omit<ScaledDotProductOptions, 'weights' | 'returnLse'>;
export type AdditiveBackwardOptions = Omit<AdditiveOptions, 'weights'>;

export interface MultiHeadGradients {
  /** Shaped like query, key and value. Self-attention (one tensor x passed three times): dx = dQuery + dKey + dValue. */
  dQuery: Tensor;
  dKey: Tensor;
  dValue: Tensor;
  /** Under the state-dict names loadStateDict takes, shaped like the parameters. */
  dParameters: Record<string, Tensor>;
}

/** The result when the weights were asked for (`weights: true`; multi-head: unless `needWeights: false`). */
export interface AttentionResultWithWeights extends AttentionResult {
  weights: Tensor;
}

/** Every mask option may also be null, meaning no such mask (PyTorch's None). */
export interface MaskOptions {
  validLens?: ValidLens | null;
  /** Query i sees only keys j <= i. */
  causal?: boolean | null;
  /**
   * The score a masked position gets before the softmax. Default -1e6 (d2l): a fully masked
   * row becomes uniform. -Infinity makes it NaN, as PyTorch does. It must be a number float32
   * can hold (|fill| <= 3.4e38) or -Infinity: -1e39 (which float32 would turn into -Infinity),
   * +Infinity and NaN are RangeErrors.
   */
  fill?: number | null;
}

/** The options both attention functions take. */
export interface AttentionOptions extends MaskOptions {
  /** [nq, nk] or [B, nq, nk]; for 4-D inputs also [B, H, nq, nk]. */
  mask?: ScoreMask | null;
  /** Default 1 / sqrt(d). */
  scale?: number;
  /** Inverted dropout on the weights, in [0, 1); default 0. */
  dropout?: number;
  /** Dropout's random stream: the same seed drops the same weights. Default 0. */
  seed?: number;
  /**
   * Also return the weights. Default false. Scaled dot-product attention (and everything built on
   * it) makes weights below 2^-100 of their row's largest exactly 0, here and in what it pools:
   * they would make subnormal products, which x86 computes slowly, and they change no output by
   * more than n · 2^-100 · max|v|. Additive attention keeps every weight.
   */
  weights?: boolean;
}

/** One number per query head (H numbers; 1 for 3-D inputs), each finite. */
export type PerHead = number[] | Float32Array;

/**
 * Scaled dot-product attention's options: the shared ones and the score modifiers of current
 * models. The score s = scale · q·k becomes, in this order: softcap, ALiBi, `mask` added (a
 * float mask), then keys hidden by validLens, a boolean `mask`, causal and window take `fill`;
 * then the sink joins the softmax.
 */
export interface ScaledDotProductOptions extends AttentionOptions {
  /**
   * A sliding window (FlashAttention's window_size): key j is visible to query i iff
   * i − left ≤ j ≤ i + right, query i sitting at position i as with `causal`; −1 leaves a side
   * unbounded. Integers ≥ −1. Blocks wholly outside the window are skipped: O(n·w) work.
   */
  window?: [left: number, right: number] | null;
  /** Logit softcapping (Gemma 2): s ← c · tanh(s / c), c a finite number > 0. */
  softcap?: number | null;
  /** ALiBi: s ← s − slopeₕ · |i − j|, one slope per query head. */
  alibiSlopes?: PerHead | null;
  /**
   * Attention sinks (gpt-oss): one more logit per query head in each row's softmax denominator,
   * pooling nothing; a row's weights then sum to 1 − exp(sinkₕ − lse).
   */
  sinks?: PerHead | null;
  /** Also return `lse`. Default false. */
  returnLse?: boolean;
}

/** Additive scores w_vᵀ tanh(W_q q + W_k k) are not scaled: there is no `scale` option. */
export interface AdditiveOptions extends Omit<AttentionOptions, 'scale'> {
  /** [h, dq] (PyTorch nn.Linear layout [out, in]). */
  Wq: Tensor;
  /** [h, dk] */
  Wk: Tensor;
  /** [h] */
  wv: Tensor;
}

export interface ScoreOptions {
  /** Default 'scaled-dot'. */
  fn?: ScoreFunction;
  /** additive: w_vᵀ tanh(W_q q + W_k k) with Wq [h, dq], Wk [h, dk], wv [h]. */
  Wq?: Tensor;
  Wk?: Tensor;
  wv?: Tensor;
  /** general: qᵀ W k with W [dq, dk]. */
  W?: Tensor;
}

export interface KernelRegressionOptions {
  /** [n, dx] or [n] */
  keys: Tensor;
  /** [n, dy] or [n] */
  values: Tensor;
  /** [m, dx] or [m] */
  queries: Tensor;
  /** Default 'gaussian'. */
  kernel?: Kernel;
  /** sigma > 0; default 1. */
  bandwidth?: number;
  /** Also return the [m, n] weights. Default false; without them no [m, n] result is copied out. */
  weights?: boolean;
}

export interface MultiHeadConfig {
  embedDim: number;
  /** Must divide embedDim. */
  numHeads: number;
  /** Key width; default embedDim. */
  kdim?: number;
  /** Value width; default embedDim. */
  vdim?: number;
  /** Projection biases; default true. */
  bias?: boolean;
}

export interface MultiHeadForwardOptions extends MaskOptions {
  /** [B, S], 1 = padding (PyTorch's key_padding_mask). */
  keyPaddingMask?: Uint8Array | Tensor<Uint8Array> | null;
  /** [L, S] or [B * numHeads, L, S]; Uint8Array boolean or Float32Array additive. */
  attnMask?: ScoreMask | null;
  /** Default true, as PyTorch. */
  needWeights?: boolean;
  /** Default true: weights [B, L, S]; false: [B, numHeads, L, S]. */
  averageAttnWeights?: boolean;
  /** Default -Infinity here (PyTorch): a query that sees no key gives NaN. */
  fill?: number | null;
}

/**
 * Rotary position embeddings applied by a KVCache (see RotaryOptions for the formulas): append()
 * rotates the keys at their true positions length, length + 1, ... before storing them, and
 * attend() rotates the queries at theirs, so that q and k go in unrotated.
 */
export interface KVCacheRotary {
  /** Default 10000; finite and > 0 (Llama 3's rope_theta is 500000). */
  base?: number;
  /** The features that rotate, the first `dim` of each row: even, in [2, headDim]. Default headDim. */
  dim?: number;
  /** false (default): pairs (k, k + dim/2), Hugging Face Llama; true: adjacent pairs (2k, 2k + 1), GPT-J. */
  interleaved?: boolean;
}

export interface KVCacheConfig {
  batch: number;
  /** Query heads: the heads of the q that attend() takes. */
  heads: number;
  /** Width of the keys (and of the queries attend() takes). */
  headDim: number;
  /** Width of the values; default headDim. */
  valueDim?: number;
  /** Positions reserved up front; default 0. append() grows past it geometrically. */
  capacity?: number;
  /**
   * K/V heads held (grouped-query attention; 1 is multi-query): a divisor of heads, default
   * heads. Query head h reads K/V head ⌊h / (heads / kvHeads)⌋; the cache stores heads / kvHeads
   * times less than one K/V head per query head would.
   */
  kvHeads?: number;
  /**
   * A sliding window (Mistral's): each query sees the last `window` positions up to its own,
   * itself included (scaledDotProductAttention's window: [window − 1, 0]). The cache then drops
   * the positions no later query can see, so its memory stays O(window) however long the
   * generation; `length` still counts every position appended. An integer ≥ 0; 0 (default): no
   * window.
   */
  window?: number;
  /** Rotary positions applied by the cache; undefined or null (default): none. */
  rotary?: KVCacheRotary | null;
  /**
   * How keys and values are stored: 'f32' (default), or 'f16', IEEE half precision (rounded to
   * nearest, ties to even): half the memory, widened to float32 as attend() reads them, so the
   * result is float32 attention over the half-rounded keys and values.
   */
  dtype?: 'f32' | 'f16';
}

/** A KVCache's configuration, every default resolved. */
export interface KVCacheSettings {
  readonly batch: number;
  readonly heads: number;
  readonly headDim: number;
  readonly valueDim: number;
  readonly kvHeads: number;
  /** 0: no window. */
  readonly window: number;
  /** null: no rotary positions. Usable as applyRotary's options. */
  readonly rotary: Readonly<Required<KVCacheRotary>> | null;
  readonly dtype: 'f32' | 'f16';
}

/**
 * attend()'s options: the scale and the score modifiers of scaledDotProductAttention (same
 * formulas, same order), except the window, which is the cache's configuration.
 */
export interface KVCacheAttendOptions {
  /** Default 1 / sqrt(headDim). */
  scale?: number;
  /** Logit softcapping (Gemma 2): s ← c · tanh(s / c), c a finite number > 0. */
  softcap?: number | null;
  /**
   * ALiBi: s ← s − slopeₕ · |i − j|, one slope per query head, i and j the true positions of
   * the query and the key (length − nq + i for query i of nq), also after the window has
   * dropped older positions.
   */
  alibiSlopes?: PerHead | null;
  /** Attention sinks (gpt-oss): one more logit per query head in each row's softmax denominator. */
  sinks?: PerHead | null;
  /** Also return `lse` [batch, heads, nq]. Default false. */
  returnLse?: boolean;
}

/**
 * Keys and values of the positions seen so far, resident in the wasm heap for incremental
 * (autoregressive) decoding: append() copies in only the new positions, attend() only the
 * queries. Query i of nq sits at position length − nq + i and computes
 * softmax over j of (s_ij), s_ij = scale · q_i·k_j modified as KVCacheAttendOptions says, for the
 * positions j ≤ its own (within the window, if any), then pools the values: the rows of
 * scaledDotProductAttention over the whole sequence with causal: true. Wrong shapes throw a
 * RangeError naming the argument; so does a cache whose storage would pass the 4 GiB heap, and
 * the cache is then left as it was.
 */
export interface KVCache {
  readonly config: KVCacheSettings;
  /** Positions appended so far (with a window, more than the cache still holds). */
  readonly length: number;
  /**
   * The oldest position still held: 0 without a window; with one it moves up as the cache drops
   * the positions no later query sees (it keeps at least the last window − 1 before an append).
   */
  readonly firstPosition: number;
  /** The bytes its keys and values take in the wasm heap now (its capacity's worth; half for 'f16'). */
  readonly byteLength: number;
  /**
   * k [batch, kvHeads, t, headDim], v [batch, kvHeads, t, valueDim]: t new positions (with
   * rotary, the keys unrotated: the cache rotates them at positions length .. length + t − 1).
   */
  append(k: Tensor, v: Tensor): this;
  /**
   * q [batch, heads, nq, headDim] -> output [batch, heads, nq, valueDim] (and lse [batch,
   * heads, nq] with returnLse). Query i of nq sees positions up to length − nq + i: causal
   * against the newest nq (nq <= length); with a window, the first query's window must still
   * be held (length − nq − window + 1 ≥ firstPosition, or ≤ 0), else a RangeError naming q.
   */
  attend(q: Tensor, options: KVCacheAttendOptions & { returnLse: true }): AttentionResult & { lse: Tensor };
  attend(q: Tensor, options?: KVCacheAttendOptions): AttentionResult;
  /**
   * Keeps the first n positions (firstPosition <= n <= length), e.g. dropping rejected draft
   * tokens. With a window the positions before firstPosition are gone, so n cannot go below it,
   * and a query at position p needs p − window + 1 ≥ firstPosition: rolling back to the length
   * before the last append loses nothing later queries need; truncating further back leaves the
   * queries whose window reaches before firstPosition refused until appends move past them.
   */
  truncate(n: number): this;
  /** Drops every position (keeps the storage). */
  clear(): this;
  /** Frees the wasm memory; later use throws a TypeError "KVCache: used after dispose()". */
  dispose(): void;
}

/** mha.forward's options with a cache: incremental self-attention, causal, no weights. */
export interface MultiHeadCachedOptions {
  /** From createCache (or a KVCache of numHeads heads of width embedDim / numHeads). */
  cache: KVCache;
  /** Implied by the cache. */
  causal?: true;
  /** A cached forward returns no weights. */
  needWeights?: false;
}

export interface MultiHeadAttention {
  readonly config: Readonly<Required<MultiHeadConfig>>;
  /** The state-dict entries this configuration expects, with shapes. */
  readonly parameters: { name: string; shape: number[] }[];
  /**
   * Loads torch.nn.MultiheadAttention weights by their state-dict names: in_proj_weight
   * [3E, E] (or q_proj_weight / k_proj_weight / v_proj_weight when kdim or vdim differ),
   * in_proj_bias [3E], out_proj.weight [E, E], out_proj.bias [E]. All entries are required.
   * All or nothing: every entry is read once and checked before any weight is replaced, so a
   * load that throws leaves the instance as it was.
   * Takes readSafetensors' result as it is; an entry whose data is not a Float32Array throws a
   * TypeError naming it.
   */
  loadStateDict(dict: Record<string, Tensor<Float32Array | Int32Array | Uint8Array>>): this;
  /** Re-draws parameters as PyTorch initialises them (Xavier-uniform), from a seed. */
  resetParameters(seed?: number): this;
  /**
   * query [B, L, E], key [B, S, kdim] (default query), value [B, S, vdim] (default key).
   * Self-attention: forward(x). Cross-attention: forward(x, memory).
   */
  /**
   * Incremental self-attention: query [B, t, E], key [B, t, kdim], value [B, t, vdim] hold the t
   * new positions (forward(x, x, x, { cache })). Their projected keys and values are appended
   * to the cache, and new position i attends to every cached position before it and the new
   * ones up to i: decoding a sequence in chunks gives forward() of it with causal: true.
   * B must be the cache's batch. After an error the cache is as it was.
   */
  forward(query: Tensor, key: Tensor, value: Tensor, options: MultiHeadCachedOptions): AttentionResult;
  forward(query: Tensor, key?: Tensor, value?: Tensor,
          options?: MultiHeadForwardOptions & { needWeights?: true }): AttentionResultWithWeights;
  forward(query: Tensor, key?: Tensor, value?: Tensor, options?: MultiHeadForwardOptions): AttentionResult;
  /**
   * Gradients of sum(forward(query, key, value, options).output ⊙ gradOutput): gradOutput is
   * [B, L, E]; the masks and fill of `options` act as in forward. The heads' attention runs
   * flash-style (no [L, S] matrix per head is kept).
   */
  backward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    gradOutput: Tensor,
    options?: Omit<MultiHeadForwardOptions, 'needWeights' | 'averageAttnWeights'>,
  ): MultiHeadGradients;
  /** The parameters under their state-dict names, as fresh tensors (loadStateDict takes them back). */
  stateDict(): Record<string, Tensor>;
  /**
   * An empty KVCache for forward(x, x, x, { cache }): batch rows, numHeads heads of width
   * embedDim / numHeads, room for `capacity` positions before it grows (default 0).
   */
  createCache(options: { batch: number; capacity?: number }): KVCache;
  /**
   * Frees the wasm memory; the instance cannot be used afterwards (a TypeError
   * "MultiHeadAttention: used after dispose()", also when dispose() runs during a call, e.g. from
   * a getter of an argument).
   */
  dispose(): void;
}

/**
 * Token ids, row-major [B, T], one Int32Array row per sequence (d2l's padded batches).
 * Every id must lie in [0, vocabulary size): a RangeError names the tensor otherwise.
 */
export type Tokens = Tensor<Int32Array>;

/**
 * What Seq2SeqAttention and Transformer share, so that code moves from one to the other: the
 * state dict under d2l's names, the loss with every parameter's gradient, and the training step.
 */
export interface EncoderDecoderModel {
  /** The state-dict entries this configuration has, in order, with shapes. */
  readonly parameters: { name: string; shape: number[] }[];
  /**
   * d2l's Seq2Seq.loss (cross-entropy averaged over the labels of tgtOutput [B, Tt] other than
   * `pad`; at least one must remain) and its gradient for every parameter, under the state-dict
   * names. Dropout (if configured) is on, as in training. Changes no weight.
   */
  lossAndGradients(src: Tokens, srcValidLens: Int32Array | Tensor<Int32Array>, tgtInput: Tokens, tgtOutput: Tokens,
                   options: { pad: number }): { loss: number; gradients: Record<string, Tensor> };
  /**
   * One training step: lossAndGradients' gradients, their global norm clipped to `clip` as
   * torch.nn.utils.clip_grad_norm_ does (default 0: no clipping), then one torch.optim.Adam
   * step with PyTorch's defaults and learning rate `lr` (default 1e-3); the optimiser's state is
   * kept across steps. Returns the loss before the step.
   */
  trainStep(src: Tokens, srcValidLens: Int32Array | Tensor<Int32Array>, tgtInput: Tokens, tgtOutput: Tokens,
            options: { pad: number; lr?: number; clip?: number }): number;
  /**
   * Loads weights by d2l's state-dict names (PyTorch's `model.state_dict()`, e.g. through
   * safetensors and readSafetensors). Every entry is required, unknown ones are a RangeError,
   * and the load is all or nothing. The optimiser's state is kept.
   */
  loadStateDict(dict: Record<string, Tensor<Float32Array | Int32Array | Uint8Array>>): this;
  /** The parameters under d2l's names, as fresh tensors (loadStateDict takes them back). */
  stateDict(): Record<string, Tensor>;
  /** Frees the wasm memory; a later call is a TypeError "<class>: used after dispose()". */
  dispose(): void;
}

export interface Seq2SeqConfig {
  /** Source vocabulary size (d2l's `len(src_vocab)`). */
  srcVocabSize: number;
  /** Target vocabulary size; the logits' last axis. */
  tgtVocabSize: number;
  /** Width of both embeddings. */
  embedSize: number;
  /** GRU hidden width H (also the attention's width). */
  numHiddens: number;
  /** GRU layers of the encoder and of the decoder; default 1. */
  numLayers?: number;
  /** Dropout between GRU layers and on the attention weights, in [0, 1), training only; default 0. */
  dropout?: number;
  /** Seed of the initialisation and of the dropout streams; default 0. */
  seed?: number;
  /** true (default): d2l's Seq2SeqAttentionDecoder; false: its plain Seq2SeqDecoder. */
  attention?: boolean;
}

export interface Seq2SeqForwardResult {
  /** [B, Tt, tgtVocabSize], before the softmax. */
  logits: Tensor;
  /** [B, Tt, Ts]: step t's additive-attention weights over the source (before dropout); null with `attention: false`. */
  attention: Tensor | null;
}

export interface Seq2SeqTranslation {
  /** [B, maxLen] greedy tokens; after a row's first eos, eos again (d2l would keep predicting). */
  tokens: Tokens;
  /** [B]: each row's tokens up to and including its first eos (maxLen if it has none). */
  lengths: Int32Array;
  /** [B, maxLen, Ts]: the weights each output token attended with (rows after eos are 0); null with `attention: false`. */
  attention: Tensor | null;
}

/**
 * d2l's RNN encoder-decoder with Bahdanau attention (d2l 11.4, PyTorch version), trained and run
 * in wasm. Encoder: nn.Embedding then a multi-layer nn.GRU over the whole padded source.
 * Decoder: starts from the encoder's final state; at each step the query is the top layer's
 * previous state, keys = values = the encoder's top outputs, additive attention masked by
 * srcValidLens (fill -1e6), and the GRU reads concat(context, embedding); logits = dense(top
 * state). The state dict uses d2l's module paths (`encoder.embedding.weight`,
 * `encoder.rnn.weight_ih_l0`, ..., `decoder.attention.W_q.weight`, `decoder.dense.bias`), so a
 * PyTorch state dict of d2l's model loads here and this one loads there.
 */
export interface Seq2SeqAttention extends EncoderDecoderModel {
  /** The configuration with its defaults filled in. */
  readonly config: Readonly<Required<Seq2SeqConfig>>;
  /**
   * Teacher-forced forward, no dropout: src [B, Ts], srcValidLens [B] (each in [0, Ts]),
   * tgtInput [B, Tt] (bos then the target shifted right, as d2l's batches).
   */
  forward(src: Tokens, srcValidLens: Int32Array | Tensor<Int32Array>, tgtInput: Tokens): Seq2SeqForwardResult;
  /**
   * Greedy decoding of the whole batch, as d2l's predict_step: from `bos`, each step feeds back
   * the most likely token, for maxLen steps (no dropout).
   */
  translate(src: Tokens, srcValidLens: Int32Array | Tensor<Int32Array>,
            options: { bos: number; eos: number; maxLen: number }): Seq2SeqTranslation;
  /**
   * Loads weights by d2l's state-dict names (PyTorch's `model.state_dict()`, e.g. through
   * safetensors and readSafetensors); d2l's `encoder.rnn.rnn.*` spelling (its d2l.GRU wrapper)
   * is read as `encoder.rnn.*`. Every entry is required, unknown ones are a RangeError, and the
   * load is all or nothing. The optimiser's state is kept.
   */
  loadStateDict(dict: Record<string, Tensor<Float32Array | Int32Array | Uint8Array>>): this;
}

export interface TransformerConfig {
  /** Source vocabulary size. */
  srcVocabSize: number;
  /** Target vocabulary size; the logits' last axis. */
  tgtVocabSize: number;
  /** Model width H (embeddings, attention, AddNorm); numHeads must divide it. */
  numHiddens: number;
  /** The position-wise FFN's hidden width. */
  ffnNumHiddens: number;
  /** Attention heads of every multi-head attention layer. */
  numHeads: number;
  /** Encoder blocks, and decoder blocks. */
  numBlks: number;
  /** Dropout on the positional encodings, the attention weights and in every AddNorm, in [0, 1), training only; default 0. */
  dropout?: number;
  /** Seed of the initialisation and of the dropout streams; default 0. */
  seed?: number;
}

/** Attention weights before dropout: one [B, numHeads, Tq, Tk] tensor per block. */
export interface TransformerAttentionMaps {
  /** The encoder's self-attention, [B, heads, Ts, Ts] per block. */
  encoder: Tensor[];
  /** The decoder's causal self-attention, [B, heads, Tt, Tt] per block. */
  decoderSelf: Tensor[];
  /** The decoder's attention over the source, [B, heads, Tt, Ts] per block. */
  decoderCross: Tensor[];
}

export interface TransformerTranslation {
  /** [B, maxLen] greedy tokens; after a row's first eos, eos again. */
  tokens: Tokens;
  /** [B]: each row's tokens up to and including its first eos (maxLen if it has none). */
  lengths: Int32Array;
  /** Each step's attention over the source, [B, heads, maxLen, Ts] per decoder block; rows after eos are 0. */
  attention: { decoderCross: Tensor[] };
}

/**
 * d2l's Transformer (d2l 11.7, PyTorch version), trained and run in wasm: an encoder of numBlks
 * blocks (self-attention masked by srcValidLens, AddNorm, position-wise FFN, AddNorm) and a
 * decoder of numBlks blocks (causal self-attention, AddNorm, attention over the encoder's output,
 * AddNorm, FFN, AddNorm), embeddings scaled by sqrt(numHiddens) plus sinusoidal positions, and a
 * dense layer to the target vocabulary. Attention is d2l's MultiHeadAttention (W_q, W_k, W_v,
 * W_o without bias; masked scores filled with -1e6). State-dict names are d2l's
 * (`encoder.blks.block0.attention.W_q.weight`, `decoder.blks.block1.addnorm3.ln.bias`,
 * `decoder.dense.weight`, ...). Two of d2l's behaviours differ on purpose: the decoder is causal
 * in every mode, and greedy decoding adds position t's encoding at step t (d2l adds position 0's
 * at every step), so cached decoding equals the forward over the prefix.
 */
export interface Transformer extends EncoderDecoderModel {
  /** The configuration with its defaults filled in. */
  readonly config: Readonly<Required<TransformerConfig>>;
  /**
   * Teacher-forced forward (causal, no dropout): src [B, Ts], srcValidLens [B] (each in
   * [0, Ts]), tgtInput [B, Tt] (bos then the target shifted right) -> logits [B, Tt,
   * tgtVocabSize] and every attention map.
   */
  forward(src: Tokens, srcValidLens: Int32Array | Tensor<Int32Array>, tgtInput: Tokens):
    { logits: Tensor; attention: TransformerAttentionMaps };
  /**
   * Greedy decoding of the whole batch: from `bos`, each step feeds back the most likely token,
   * for maxLen steps (no dropout). Each decoder block keeps its keys and values in a KV cache,
   * so a step attends only the new token's query.
   */
  translate(src: Tokens, srcValidLens: Int32Array | Tensor<Int32Array>,
            options: { bos: number; eos: number; maxLen: number }): TransformerTranslation;
}

/** CausalLM's configuration; the presets CausalLM.gpt2() and CausalLM.llama() fill the shape. */
export interface CausalLMConfig {
  /** Whose checkpoint names and layouts: GPT2LMHeadModel's (default) or LlamaForCausalLM's. */
  format?: 'gpt2' | 'llama';
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  /** A divisor of hiddenSize. */
  numHeads: number;
  /** K/V heads for grouped-query attention, a divisor of numHeads (default numHeads). */
  numKvHeads?: number;
  /** The MLP's width; 0 (default) leaves the MLP out: an attention-only model. */
  intermediateSize?: number;
  /** Rows of the learned position table (positions 'learned': required, the longest T). */
  maxPositions?: number;
  /** Default 'learned' (not in the llama format). */
  positions?: 'learned' | 'rotary' | 'none';
  /** Rotary positions' base (default 10000); head_dim must be even. */
  rotaryBase?: number;
  /** Default 'layer' (LayerNorm with bias); 'rms' is Llama's RMSNorm. */
  norm?: 'layer' | 'rms';
  normEps?: number;
  /** Default 'gelu' (GPT-2's tanh form); 'swiglu' (llama format) is down(silu(gate(x)) * up(x)). */
  mlp?: 'gelu' | 'swiglu';
  /** Biases on the projections (default true). */
  bias?: boolean;
  /** The unembedding is the token embedding (default true). */
  tieEmbeddings?: boolean;
  /** > 0: each token sees itself and the window - 1 tokens before it (default 0: all before it). */
  window?: number;
  /**
   * Dropout in [0, 1), in lossAndGradients and trainStep only (a fresh stream per call): GPT-2's
   * three kinds at one rate, on the embeddings, every attention's weights and both residual
   * branches of every layer; default 0.
   */
  dropout?: number;
  /** The initialisation's seed (GPT-2's: N(0, 0.02^2), residual projections scaled down), and the dropout streams'. */
  seed?: number;
}

/** AdamW's options for CausalLM.trainStep. */
export interface AdamWOptions {
  /** Default 1e-3. */
  lr?: number;
  /** Default [0.9, 0.999]. */
  betas?: [number, number];
  /** Default 1e-8. */
  eps?: number;
  /** Decoupled, on the tensors of 2 or more dims (default 0). */
  weightDecay?: number;
  /** The gradients' global norm is clipped to this first (default 0: no clipping). */
  clip?: number;
  /** Targets equal to pad are left out of the loss. */
  pad?: number;
}

/**
 * A decoder-only language model in GPT-2's and Llama's shapes, its parameters under Hugging
 * Face's names and layouts: pre-norm blocks x + attention(norm1(x)), x + mlp(norm2(x)), a final
 * norm, logits by the (tied) unembedding; causal attention with grouped-query heads, rotary
 * positions and a sliding window through the fused kernel.
 */
export interface CausalLM {
  /** The configuration with its defaults filled in. */
  readonly config: Readonly<Required<CausalLMConfig>>;
  /** The parameters, in Hugging Face's order, with shapes (a tied model has no lm_head here). */
  readonly parameters: { name: string; shape: number[] }[];
  /** AdamW steps taken so far. */
  readonly optimizerSteps: number;
  /**
   * tokens [B, T] -> logits [B, T, vocabSize]; with attention, one [B, numHeads, T, T] map per
   * layer. headMask, [numLayers, numHeads] finite factors (a tensor, or a bare Float32Array of
   * numLayers * numHeads), multiplies each head's attention weights and so its output (Hugging
   * Face's head_mask): 0 ablates the head.
   */
  forward(tokens: Tokens, options?: { attention?: boolean; headMask?: Tensor | Float32Array }): { logits: Tensor; attention?: Tensor[] };
  /**
   * tokens [B, T + 1] -> the mean next-token cross-entropy of tokens[:, 1:] given tokens[:, :T]
   * (targets equal to pad left out) and every parameter's gradient; with dropout, as in
   * training (a fresh stream per call).
   */
  lossAndGradients(tokens: Tokens, options?: { pad?: number }): { loss: number; gradients: Record<string, Tensor> };
  /** One clipped AdamW step; returns the loss before it. */
  trainStep(tokens: Tokens, options?: AdamWOptions): number;
  /**
   * Continues prompt [B, T0] by maxNewTokens tokens with a KV cache per layer. temperature 0 is
   * greedy; otherwise a draw from softmax(logits / temperature) over the topK most likely
   * (default 0: all), then over the most likely whose probabilities before them sum to less
   * than topP (default 1). The same seed gives the same tokens. A row ends at its first eos.
   * headMask, as forward's, generates with heads ablated.
   */
  generate(prompt: Tokens, options: {
    maxNewTokens: number; temperature?: number; topK?: number; topP?: number; seed?: number; eos?: number;
    headMask?: Tensor | Float32Array;
  }): { tokens: Tensor<Int32Array>; lengths: Int32Array };
  /**
   * Loads Hugging Face's state dict (e.g. a checkpoint through readSafetensors); all or nothing.
   * A tied model takes lm_head.weight only with the embedding's values, or without it.
   */
  loadStateDict(dict: Record<string, Tensor<Float32Array | Int32Array | Uint8Array>>): this;
  /** The state dict under Hugging Face's names; a tied model lists lm_head.weight too. */
  stateDict(): Record<string, Tensor>;
  /** Frees the wasm memory; a later call is a TypeError "CausalLM: used after dispose()". */
  dispose(): void;
}

/** The CausalLM class: `new attn.CausalLM(config)`, or a preset with its sizes. */
export interface CausalLMClass {
  new (config: CausalLMConfig): CausalLM;
  /** GPT-2's shape: learned positions, LayerNorm, GELU, biases, tied embeddings. */
  gpt2(overrides: Partial<CausalLMConfig>): CausalLM;
  /** Llama's shape: rotary positions, RMSNorm (1e-6), SwiGLU, no biases, untied. */
  llama(overrides: Partial<CausalLMConfig>): CausalLM;
}

/**
 * Positions for rotary embeddings: n entries (every batch row) as an Int32Array or number[], or a
 * tensor of shape [n] or [B, n] (one row of positions per batch row, shared by its heads). Each an
 * integer >= 0.
 */
export type RotaryPositions = Int32Array | number[] | Tensor<Int32Array>;

/**
 * Rotary position embeddings (RoPE, RoFormer): pair k < dim/2 of the row at position p turns by
 * θ = p · base^(-2k/dim). Half-split pairs (the default, Hugging Face Llama's rotate_half):
 *   out[k] = x[k] cos θ − x[k + dim/2] sin θ,  out[k + dim/2] = x[k + dim/2] cos θ + x[k] sin θ;
 * interleaved pairs (GPT-J, Meta's original Llama):
 *   out[2k] = x[2k] cos θ − x[2k+1] sin θ,     out[2k+1] = x[2k+1] cos θ + x[2k] sin θ.
 * Features from dim on pass through unchanged. Angles are computed in double precision, so
 * positions up to 2^20 and beyond keep float32's accuracy.
 */
export interface RotaryOptions {
  /** Default: offset, offset + 1, ..., offset + n − 1 for every batch row. */
  positions?: RotaryPositions;
  /** The first position when `positions` is not given (a KV cache's length). Default 0. */
  offset?: number;
  /** Default 10000; finite and > 0. */
  base?: number;
  /** The features that rotate, the first `dim` of each row: even, in [2, d]. Default d. */
  dim?: number;
  /** false (default): pairs (k, k + dim/2); true: adjacent pairs (2k, 2k + 1). */
  interleaved?: boolean;
}

export interface Attention {
  readonly backend: 'wasm-simd' | 'wasm';
  /**
   * Whether the SIMD build runs its matrix-product loops with relaxed SIMD's fused multiply-add
   * (a second, 5 KB module): true where the engine validates relaxed SIMD (Chromium, Node 24;
   * Node 20 only with --experimental-wasm-relaxed-simd) unless loadAttention was given
   * relaxedSimd: false.
   */
  readonly relaxedSimd: boolean;
  /** The threads the core's kernels run on, the calling thread included (1 after dispose()). */
  readonly threads: number;
  /** null when `threads` is what the load asked for; otherwise why it is fewer. */
  readonly threadsReason: ThreadsReason | null;
  /**
   * The micro-kernels: the loops of the matrix products and of the score modifiers, by element
   * type, loop, tile (rows x columns) and instruction set, as XNNPACK names its kernels (not the similarity kernels of
   * `kernelRegression`): e.g. 'f32_gemm_panels_2x16__wasmrelaxedsimd_fma'
   * (relaxed SIMD), '__wasmsimd' (SIMD128) or '__scalar'.
   */
  readonly microkernels: readonly string[];
  /**
   * Ends the threaded build's workers (a no-op on one thread); the module goes on computing on
   * the calling thread. Not needed for a Node process to exit: idle workers do not hold it.
   */
  dispose(): void;
  /** Nadaraya-Watson: output [m, dy], weights [m, n]. A query no key reaches gives NaN. */
  kernelRegression(options: KernelRegressionOptions): { output: Tensor; weights?: Tensor };
  /**
   * Leave-one-out cross-validation error per bandwidth (mean squared error of predicting each
   * value from the others); `best` is the bandwidth with the smallest error (NaN if none is
   * finite: a key no other key reaches makes the error Infinity).
   */
  leaveOneOut(options: { keys: Tensor; values: Tensor; kernel?: Kernel; bandwidths: number[] | Float32Array }): {
    errors: Float32Array;
    best: number;
  };
  /**
   * The similarity kernel itself, elementwise, shaped like `distances` (each >= 0, else a
   * RangeError): gaussian exp(-(d/σ)²/2), boxcar [d/σ <= 1], epanechnikov max(0, 1 - d/σ),
   * constant 1; σ = `bandwidth`, default 1, and `kernel` default 'gaussian'.
   */
  kernelValues(options: { distances: Tensor; kernel?: Kernel; bandwidth?: number }): Tensor;
  /** Softmax along the last axis, max-subtracted (logits of ±1e4 stay finite). */
  softmax(x: Tensor): Tensor;
  /** x [B, nq, nk]; masked scores are replaced by `fill` (default -1e6) before the softmax. */
  maskedSoftmax(x: Tensor, validLens?: ValidLens | null, options?: { fill?: number }): Tensor;
  /** Scores [B, nq, nk] of q [B, nq, dq] against k [B, nk, dk]. */
  score(q: Tensor, k: Tensor, options?: ScoreOptions): Tensor;
  /** [B, n, k] x [B, k, m] -> [B, n, m] */
  bmm(a: Tensor, b: Tensor): Tensor;
  /**
   * softmax(mask(q kᵀ · scale)) v with q [B, nq, d], k [B, nk, d], v [B, nk, dv]; or, in the
   * heads layout, q [B, H, nq, d], k [B, Hkv, nk, d], v [B, Hkv, nk, dv] with H a multiple of
   * Hkv (grouped-query attention: query head h reads K/V head ⌊h / (H / Hkv)⌋, as PyTorch's
   * enable_gqa, without copying K or V). validLens are per batch row B.
   */
  scaledDotProductAttention(q: Tensor, k: Tensor, v: Tensor,
                            options: ScaledDotProductOptions & { weights: true }): AttentionResultWithWeights;
  scaledDotProductAttention(q: Tensor, k: Tensor, v: Tensor, options?: ScaledDotProductOptions): AttentionResult;
  /** d2l's AdditiveAttention (Bahdanau): scores w_vᵀ tanh(W_q q + W_k k). */
  additiveAttention(q: Tensor, k: Tensor, v: Tensor,
                    options: AdditiveOptions & { weights: true }): AttentionResultWithWeights;
  additiveAttention(q: Tensor, k: Tensor, v: Tensor, options: AdditiveOptions): AttentionResult;
  /**
   * Gradients of sum(output ⊙ gradOutput) for scaledDotProductAttention(q, k, v, options), with
   * gradOutput shaped like the output: flash-style, a block of queries at a time against every key, never
   * forming an [nq, nk] matrix. Every option acts as in the forward; with dropout the same seed
   * regenerates the forward's mask. A masked score passes no gradient to q or k; with the d2l
   * fill a fully masked row still pools v uniformly, so v gets its gradient. A K/V head's
   * gradients sum over its group of query heads; with `sinks`, dsinks is returned too.
   */
  scaledDotProductAttentionBackward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    gradOutput: Tensor,
    options?: ScaledDotProductBackwardOptions,
  ): AttentionGradients;
  /** Gradients of additiveAttention(q, k, v, options) against gradOutput [B, nq, dv]. */
  additiveAttentionBackward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    gradOutput: Tensor,
    options: AdditiveBackwardOptions,
  ): AdditiveAttentionGradients;
  MultiHeadAttention: new (config: MultiHeadConfig) => MultiHeadAttention;
  Seq2SeqAttention: new (config: Seq2SeqConfig) => Seq2SeqAttention;
  Transformer: new (config: TransformerConfig) => Transformer;
  CausalLM: CausalLMClass;
  KVCache: new (config: KVCacheConfig) => KVCache;
  readSafetensors: typeof readSafetensors;
  writeSafetensors: typeof writeSafetensors;
  /** Sinusoidal encoding [n, d]: P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(same). */
  positionalEncoding(n: number, d: number): Tensor;
  /**
   * Rotary position embeddings of x [B, n, d] or [B, H, n, d] (queries or keys, before their
   * scores): a fresh tensor shaped like x (see RotaryOptions for the formula and the two pairings).
   */
  applyRotary(x: Tensor, options?: RotaryOptions): Tensor;
  /**
   * The gradient of applyRotary: gradOutput (shaped like x) turned by the opposite angles, the
   * rotation's transpose and inverse. The same options as the forward.
   */
  applyRotaryBackward(gradOutput: Tensor, options?: RotaryOptions): Tensor;
}

export interface LoadOptions {
  /** false forces the scalar build; true requires SIMD. Default: SIMD when supported. */
  simd?: boolean;
  /**
   * The SIMD build's matrix-product loops with fused multiply-add, where relaxed SIMD validates (the
   * default); false leaves them out; true requires them (an Error where unsupported or with
   * simd: false). Results differ from the SIMD128 loops in the last bits: FMA rounds once.
   */
  relaxedSimd?: boolean;
  /**
   * Threads, the calling thread included: 'auto' (the default) takes every logical core up to 8
   * (navigator.hardwareConcurrency, os.availableParallelism() in Node); a number takes exactly
   * that many. More than one needs the threaded SIMD build's shared memory: Node, or a page or
   * worker that is crossOriginIsolated (COOP/COEP headers). Where that cannot be had the load runs
   * on one thread and `threadsReason` says why (an explicit count > 1 also warns once); it never
   * throws for it. Results are the same bits for every count. Not 0, negative or fractional (a
   * RangeError) nor any other type (a TypeError).
   */
  threads?: 'auto' | number;
  /**
   * Where the chosen .wasm is hosted, if not beside the package's index.js. It names one file,
   * so `threads` defaults to 1 with it; with an explicit `threads` > 1 it must be
   * attention-simd-mt.wasm (the worker script and glue are then still found beside index.js).
   */
  wasmUrl?: string | URL;
}

/** Why a load runs on fewer threads than it asked for (Attention.threadsReason). */
export type ThreadsReason =
  | 'one thread requested'
  | 'not cross-origin isolated'
  | 'no SharedArrayBuffer or wasm atomics'
  | 'the shared memory could not be allocated'
  | 'no SIMD (the threaded build is a SIMD build)'
  | "capped at the hardware's thread count"
  | 'the worker threads could not be started'
  | 'disposed';

export function loadAttention(options?: LoadOptions): Promise<Attention>;

/** True when this engine validates WebAssembly SIMD128. */
export function simdSupported(): boolean;

/**
 * Parses a .safetensors file. Float tensors (F32, F64, F16, BF16) become Float32Array; I32
 * Int32Array; U8 and BOOL Uint8Array. The result has a null prototype, so any tensor name
 * (`__proto__` too) is an ordinary key. Files that break the format (invalid UTF-8 or JSON,
 * duplicate keys, non-string `__metadata__` values, overlapping tensors or data bytes that no
 * tensor covers) throw a RangeError; a tensor of another dtype throws a TypeError naming it.
 * `bytes` is read where it lies, not copied; anything other than a Uint8Array or ArrayBuffer
 * (of any realm), or one whose memory is detached, is a TypeError naming `bytes`.
 */
export function readSafetensors(bytes: Uint8Array | ArrayBuffer): Record<string, Tensor<Float32Array | Int32Array | Uint8Array>>;

/**
 * Writes a .safetensors file from tensors by name (a state dict): Float32Array data as F32,
 * Int32Array as I32, Uint8Array as U8, in the order given; `metadata` is stored as
 * `__metadata__`. readSafetensors reads it back. A data type it cannot store throws a TypeError,
 * a shape that does not match its data a RangeError.
 */
export function writeSafetensors(
  tensors: Record<string, Tensor<Float32Array | Int32Array | Uint8Array>>,
  options?: { metadata?: Record<string, string> },
): Uint8Array;
