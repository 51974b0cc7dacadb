// Every performance goal of the project, in one place: the issue that set it, what is measured,
// and the comparison that meets it. The sections (sections.js lists them) measure their goals by
// name with `measured` below; the summary of a run (shared/report.js) prints each goal's
// measurements, and status.js turns the runs' results into docs/performance.md's status table.
// A goal changed here changes both, and a goal a section names that is not here is an error.
//
// Each goal: { issue, section (the one that measures it), what (the ratio, as a reader of the
// summary needs it), relation ('≥' or '≤'), target }. Every goal is a ratio of two times or of
// two throughputs measured side by side in one run.

export const GOALS = Object.freeze({
  // ---- attention (attention/sdpa.js, mha.js, peak.js) ---------------------------------------
  attentionVsPeers: {
    issue: 5, section: 'sdpa', relation: '≥', target: 1.35,
    what: "attention [1, n, 64], n ≥ 512: ours (relaxed SIMD) ÷ the best peer, GFLOP/s",
  },
  mhaVsPeers: {
    issue: 5, section: 'mha', relation: '≥', target: 1.35,
    what: "multi-head self-attention, E = 512, 8 heads, n = 512: our GFLOP/s ÷ onnxruntime-web's best",
  },
  sdpaVsPeers: {
    issue: 12, section: 'peak', relation: '≥', target: 1.45,
    what: 'attention [1, n, 64], n = 512 and 1024: ours (relaxed SIMD) ÷ the best of onnxruntime-web and tfjs-wasm',
  },
  sdpaPerMicrokernel: {
    issue: 12, section: 'peak', relation: '≥', target: 0.9,
    what: 'attention [1, n, 64]: our GFLOP/s ÷ the 2x16 GEMM micro-kernel\'s, each build against the micro-kernel built alike',
  },
  // ---- masks, weights, gradients, decode (attention/masked.js, weights.js, backward.js, decode.js)
  maskedCausal: {
    issue: 12, section: 'masked', relation: '≤', target: 0.55,
    what: 'causal attention [1, n, 64] ÷ our unmasked time',
  },
  maskedQuarter: {
    issue: 12, section: 'masked', relation: '≤', target: 0.35,
    what: 'attention [1, n, 64] with validLens = n/4 ÷ our unmasked time',
  },
  weights: {
    issue: 12, section: 'weights', relation: '≤', target: 1.7,
    what: 'weights: true on [1, n, 64], n ≥ 2048 ÷ the same call without',
  },
  backwardVsForward: {
    issue: 10, section: 'backward', relation: '≤', target: 3.5,
    what: 'the attention backward on [1, n, 64] ÷ our forward\'s time',
  },
  backwardVsTfjs: {
    issue: 10, section: 'backward', relation: '≥', target: 1.5,
    what: 'tfjs-wasm tf.grads of the same attention ÷ our backward\'s time',
  },
  decodePerCopy: {
    issue: 12, section: 'decode', relation: '≤', target: 2,
    what: 'KV-cache decode, 12 heads, d = 64, one query: KVCache.attend ÷ copying K and V once',
  },
  decodeVsTfjs: {
    issue: 12, section: 'decode', relation: '≥', target: 3,
    what: 'KV-cache decode, 12 heads, d = 64, one query: tfjs-wasm over resident tensors ÷ ours',
  },
  // ---- modern attention (attention/modern.js) -------------------------------------------------
  gqaPrefill: {
    issue: 31, section: 'modern', relation: '≤', target: 0.85,
    what: 'GQA prefill, H = 32, Hkv = 8, d = 128, causal ÷ the same call on K and V repeated to 32 heads',
  },
  slidingWindow: {
    issue: 31, section: 'modern', relation: '≤', target: 0.1,
    what: 'a causal window w = 1024 at n = 16384 (H = 8, d = 64) ÷ dense causal',
  },
  scoreModifier: {
    issue: 31, section: 'modern', relation: '≤', target: 1.15,
    what: 'softcap, ALiBi, a sink, each at n = 2048, d = 64 ÷ the plain fused forward',
  },
  gqaDecodePerCopy: {
    issue: 31, section: 'modern', relation: '≤', target: 2,
    what: 'decoding one token from a grouped-head cache (H = 32, Hkv = 8, d = 128, n = 16384) ÷ one copy of its K and V',
  },
  f16Cache: {
    issue: 31, section: 'modern', relation: '≤', target: 0.65,
    what: "the same decode from a cache of halves (dtype: 'f16') ÷ the float32 cache",
  },
  rotaryCache: {
    issue: 31, section: 'modern', relation: '≤', target: 1.1,
    what: 'the same decode from a cache with rotary positions ÷ without',
  },
  gqaVsPeer: {
    issue: 31, section: 'modern', relation: '≥', target: 1.45,
    what: "onnxruntime-web's GroupQueryAttention ÷ our GQA prefill, H = 32, Hkv = 8, d = 128, n = 512, causal, both on 1 thread and both on 2",
  },
  // ---- kernel regression (attention/regression.js) ------------------------------------------
  regressionRate: {
    issue: 32, section: 'regression', relation: '≥', target: 1,
    what: 'kernelRegression and leaveOneOut, Gaussian, d = 1, n = m = 8192, one thread: kernel evaluations per second ÷ 500 M',
  },
  regressionLarge: {
    issue: 32, section: 'regression', relation: '≤', target: 1,
    what: 'a 33000 × 33000 Gaussian kernelRegression and leaveOneOut at d = 1 (σ = 0.1, data in [−1, 1)), one thread: its time ÷ 5 s',
  },
  regressionVsAttention: {
    issue: 32, section: 'regression', relation: '≥', target: 0.5,
    what: "kernelRegression, Gaussian, queries, keys and values [1024, 64], one thread: SDPA's time on the same shapes ÷ its time",
  },
  // ---- the building blocks one at a time (attention/primitives.js) ----------------------------
  primitivesPerCopies: {
    issue: 32, section: 'primitives', relation: '≤', target: 1.5,
    what: 'softmax and maskedSoftmax on [8, 512, 512] and [1, 2048, 2048], one thread: time ÷ copying the same bytes into the wasm heap and out, as every call does',
  },
  primitivesPerMicrokernel: {
    issue: 32, section: 'primitives', relation: '≥', target: 0.8,
    what: "score (scaled dot, d = 64) and bmm ([.., n, n] × [.., n, 64]) on the same shapes, one thread: GFLOP/s ÷ the 2x16 GEMM micro-kernel's",
  },
  // ---- training steps (training/seq2seq.js, transformer.js, causal-lm.js) ----------------------
  seq2seqVsPyTorch: {
    issue: 11, section: 'seq2seq', relation: '≥', target: 3,
    what: "Seq2Seq (Bahdanau) training step: PyTorch CPU's time ÷ ours, one thread",
  },
  transformerVsPyTorch: {
    issue: 21, section: 'transformer', relation: '≥', target: 3,
    what: "Transformer (d2l 11.7) training step: PyTorch CPU's time ÷ ours, at equal thread counts",
  },
  transformerPerMicrokernel: {
    issue: 21, section: 'transformer', relation: '≥', target: 0.5,
    what: "Transformer training step: its products' GFLOP/s ÷ the 2x16 GEMM micro-kernel's",
  },
  transformerCachedDecoding: {
    issue: 21, section: 'transformer', relation: '≥', target: 3,
    what: 'Transformer greedy decoding of 20 tokens: re-running forward() over the prefix ÷ cached translate()',
  },
  causalLMVsPyTorch: {
    issue: 34, section: 'causalLM', relation: '≥', target: 3,
    what: "CausalLM (GPT-2-like) training step: PyTorch CPU's time ÷ ours, one thread",
  },
  causalLMCachedGeneration: {
    issue: 34, section: 'causalLM', relation: '≥', target: 10,
    what: 'CausalLM greedy generation of 256 tokens: re-running the prefix ÷ generate() with its KV caches',
  },
  causalLMGenerationVsPyTorch: {
    issue: 34, section: 'causalLM', relation: '≥', target: 3,
    what: 'CausalLM tokens per second with KV caches: ours ÷ PyTorch CPU with its own cache, one thread',
  },
  // ---- threads (threads/threads.js) -------------------------------------------------------------
  twoThreadsAttention: {
    issue: 20, section: 'threads', relation: '≥', target: 1.8,
    what: '2 threads ÷ 1: SDPA dense and causal and its backward at n ≥ 1024, multi-head attention at n ≥ 512',
  },
  twoThreadsDecodeSeq2Seq: {
    issue: 20, section: 'threads', relation: '≥', target: 1.5,
    what: "2 threads ÷ 1: KV-cache decode at n = 16384, a Seq2Seq training step at d2l's size",
  },
  twoThreadsCausalLM: {
    issue: 34, section: 'threads', relation: '≥', target: 1.7,
    what: '2 threads ÷ 1: a CausalLM training step at the GPT-2-like size',
  },
  twoThreadsRegression: {
    issue: 32, section: 'threads', relation: '≥', target: 1.8,
    what: '2 threads ÷ 1: Gaussian kernelRegression and leaveOneOut at d = 1, n ≥ 4096',
  },
  threadsVsPeer: {
    issue: 20, section: 'threads', relation: '≥', target: 1.45,
    what: 'SDPA [1, n, 64], n = 1024 and 4096, both on 2 threads: onnxruntime-web\'s time ÷ ours',
  },
  threadsHeap: {
    issue: 20, section: 'threads', relation: '≤', target: 1.5,
    what: 'peak wasm heap of attention [1, 32768, 64]: 2 threads ÷ 1',
  },
  threadsContention: {
    issue: 32, section: 'contention', relation: '≥', target: 0.9,
    what: "each threads workload on 'auto' threads beside one busy loop per core: its speed ÷ one thread's",
  },
  // ---- scaling past this machine (threads/scaling.js) ---------------------------------------------
  scalingAttention: {
    issue: 32, section: 'scaling', relation: '≥', target: 6,
    what: 'predicted speedup at 8 threads: SDPA and its backward at n ≥ 2048, multi-head attention at n ≥ 1024',
  },
  scalingTraining: {
    issue: 32, section: 'scaling', relation: '≥', target: 4,
    what: "predicted speedup at 8 threads: a Transformer training step at d2l's size",
  },
  // ---- engines (engines/engines.js) -------------------------------------------------------------
  firefoxVsChromium: {
    issue: 22, section: 'engines', relation: '≥', target: 0.85,
    what: "our SDPA [1, n, 64], one thread: Firefox's speed ÷ Chromium's",
  },
  webkitVsChromium: {
    issue: 33, section: 'engines', relation: '≥', target: 0.85,
    what: "our SDPA [1, n, 64], SIMD128, one thread: WebKit's (JavaScriptCore) speed ÷ Chromium's",
  },
});

/** Whether `value` meets goal `id`. */
export function isMet(id, value) {
  const { relation, target } = GOALS[id];
  return relation === '≤' ? value <= target : value >= target;
}

/**
 * One measurement of goal `id` for the summary and results.json: where it was measured (`at`,
 * e.g. 'n = 1024'), the ratio (null when it could not be measured), and optionally the figures
 * behind it or why it is missing (`detail`).
 */
export function measured(id, at, value, detail) {
  if (!(id in GOALS)) throw new Error(`goal '${id}' is not in scripts/bench/goals.js`);
  return { goal: id, at, value: Number.isFinite(value) ? value : null, ...(detail ? { detail } : {}) };
}

/** "1.53× (≥ 1.45: met)", or "not measured". */
export function verdict(id, value) {
  if (value === null || value === undefined) return 'not measured';
  const { relation, target } = GOALS[id];
  return `${value.toFixed(2)}× (${relation} ${target}: ${isMet(id, value) ? 'met' : 'NOT met'})`;
}
