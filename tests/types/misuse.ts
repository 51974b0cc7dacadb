// Misuse the .d.ts must reject: each `@ts-expect-error` line has to be a type error, or tsc
// fails with "Unused '@ts-expect-error' directive". The lines without one must compile.
import { loadAttention, readSafetensors, type EncoderDecoderModel, type Tensor } from 'attention-wasm';

const attn = await loadAttention({ simd: false });
const t = (shape: number[]): Tensor => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape });
const q = t([1, 2, 4]);

// @ts-expect-error: an unknown loader option
await loadAttention({ simd: false, workers: 2 });
// @ts-expect-error: threads is 'auto' or a number
await loadAttention({ threads: 'many' });
// @ts-expect-error: the thread count is read-only
attn.threads = 4;
// @ts-expect-error: the backend is one of two strings
const backend: 'native' = attn.backend;

// @ts-expect-error: a misspelled option (validLen for validLens)
attn.scaledDotProductAttention(q, q, q, { validLen: [1] });
// @ts-expect-error: dropout is a number
attn.scaledDotProductAttention(q, q, q, { dropout: '0.1' });
// @ts-expect-error: v is required
attn.scaledDotProductAttention(q, q);
// @ts-expect-error: data must be a Float32Array, not a plain array
attn.softmax({ data: [1, 2, 3], shape: [3] });
// @ts-expect-error: a tensor needs its shape
attn.softmax({ data: new Float32Array(3) });
// Without `weights: true` the weights may be absent...
// @ts-expect-error: 'weights' is possibly undefined
attn.scaledDotProductAttention(q, q, q).weights.shape;
// ...with it they are not.
attn.scaledDotProductAttention(q, q, q, { weights: true }).weights.shape;
// @ts-expect-error: a window has a left and a right side
attn.scaledDotProductAttention(q, q, q, { window: [4] });
// @ts-expect-error: softcap is a number
attn.scaledDotProductAttention(q, q, q, { softcap: '30' });
// @ts-expect-error: additive attention takes no score modifiers
attn.additiveAttention(q, q, q, { Wq: t([2, 4]), Wk: t([2, 4]), wv: t([2]), sinks: [0] });
// @ts-expect-error: 'lse' is possibly undefined without returnLse
attn.scaledDotProductAttention(q, q, q).lse.shape;
// @ts-expect-error: a cache stores 'f32' or 'f16'
new attn.KVCache({ batch: 1, heads: 2, headDim: 4, dtype: 'bf16' });
// @ts-expect-error: the cache's window is its configuration, not attend's
new attn.KVCache({ batch: 1, heads: 2, headDim: 4 }).attend(t([1, 2, 1, 4]), { window: [3, 0] });

// @ts-expect-error: not a similarity kernel
attn.kernelRegression({ keys: t([3]), values: t([3]), queries: t([2]), kernel: 'gaussain' });
// @ts-expect-error: keys, values and queries are required
attn.kernelRegression({ keys: t([3]), values: t([3]) });
// @ts-expect-error: bandwidths is a list
attn.leaveOneOut({ keys: t([3]), values: t([3]), bandwidths: 0.5 });
// @ts-expect-error: not a score function
attn.score(q, q, { fn: 'cosine' });
// @ts-expect-error: valid lengths are integers, not floats
attn.maskedSoftmax(q, new Float32Array([1]));
// @ts-expect-error: additive attention needs its parameters
attn.additiveAttention(q, q, q, { validLens: [1] });
// @ts-expect-error: additive scores are not scaled
attn.additiveAttention(q, q, q, { Wq: q, Wk: q, wv: q, scale: 2 });

// @ts-expect-error: the config needs numHeads
new attn.MultiHeadAttention({ embedDim: 4 });
// @ts-expect-error: PyTorch's spelling is not the JS one (embedDim)
new attn.MultiHeadAttention({ embed_dim: 4, numHeads: 2 });
const mha = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
// Weights are returned unless needWeights is false.
mha.forward(q).weights.shape;
// @ts-expect-error: 'weights' is possibly undefined
mha.forward(q, q, q, { needWeights: false }).weights.shape;
// @ts-expect-error: keyPaddingMask is boolean (Uint8Array), not float
mha.forward(q, q, q, { keyPaddingMask: new Float32Array(2) });
// @ts-expect-error: a state dict holds tensors, not arrays
mha.loadStateDict({ in_proj_weight: [1, 2, 3] });
mha.loadStateDict(readSafetensors(new Uint8Array(0)));
// @ts-expect-error: readSafetensors takes bytes, not a path
readSafetensors('mha.safetensors');
// @ts-expect-error: the result is a record of tensors
readSafetensors(new Uint8Array(0)).in_proj_weight.dtype;
// @ts-expect-error: the config is read-only
mha.config.embedDim = 8;

// @ts-expect-error: a KV cache needs headDim
new attn.KVCache({ batch: 1, heads: 2 });
// @ts-expect-error: PyTorch-style spelling is not the JS one (headDim)
new attn.KVCache({ batch: 1, heads: 2, head_dim: 4 });
const cache = mha.createCache({ batch: 1, capacity: 16 });
// Incremental self-attention returns the output only...
mha.forward(q, q, q, { cache }).output.shape;
// @ts-expect-error: ...never weights
mha.forward(q, q, q, { cache }).weights.shape;
// @ts-expect-error: a cache cannot be combined with weights
mha.forward(q, q, q, { cache, needWeights: true });
// @ts-expect-error: createCache needs the batch
mha.createCache({ capacity: 16 });
// @ts-expect-error: length is read-only
cache.length = 0;
// @ts-expect-error: attend takes a scale option, not a bare number
cache.attend(t([1, 2, 1, 2]), 0.5);
cache.append(t([1, 2, 3, 2]), t([1, 2, 3, 2])).truncate(1).clear();
cache.attend(t([1, 2, 1, 2]), { scale: 0.5 }).output.shape;
cache.dispose();
mha.dispose();

const tokens = (B: number, T: number): Tensor<Int32Array> => ({ data: new Int32Array(B * T), shape: [B, T] });
const s2s = new attn.Seq2SeqAttention({ srcVocabSize: 7, tgtVocabSize: 8, embedSize: 4, numHiddens: 6 });
// @ts-expect-error: the config needs the vocabulary sizes
new attn.Seq2SeqAttention({ embedSize: 4, numHiddens: 6 });
// @ts-expect-error: d2l's Python spelling is not the JS one (numHiddens)
new attn.Seq2SeqAttention({ srcVocabSize: 7, tgtVocabSize: 8, embedSize: 4, num_hiddens: 6 });
// @ts-expect-error: token ids are an Int32Array, not float
s2s.forward(t([2, 5]), new Int32Array(2), tokens(2, 4));
// @ts-expect-error: valid lengths are an Int32Array (or a tensor of one), not a plain array
s2s.forward(tokens(2, 5), [5, 3], tokens(2, 4));
// @ts-expect-error: 'attention' is possibly null (attention: false gives none)
s2s.forward(tokens(2, 5), new Int32Array(2), tokens(2, 4)).attention.shape;
// @ts-expect-error: the loss needs the labels
s2s.lossAndGradients(tokens(2, 5), new Int32Array(2), tokens(2, 4), { pad: 0 });
// @ts-expect-error: pad is required
s2s.trainStep(tokens(2, 5), new Int32Array(2), tokens(2, 4), tokens(2, 4), { lr: 0.01 });
// @ts-expect-error: trainStep returns the loss, a number
s2s.trainStep(tokens(2, 5), new Int32Array(2), tokens(2, 4), tokens(2, 4), { pad: 0 }).loss;
// @ts-expect-error: translate needs maxLen
s2s.translate(tokens(2, 5), new Int32Array(2), { bos: 1, eos: 2 });
const translation = s2s.translate(tokens(2, 5), new Int32Array(2), { bos: 1, eos: 2, maxLen: 4 });
const firstLength: number = translation.lengths[0];
// @ts-expect-error: lengths is an Int32Array, not a tensor
translation.lengths.shape;
// @ts-expect-error: the config is read-only
s2s.config.numLayers = 3;
const gradient: Tensor = s2s.lossAndGradients(tokens(2, 5), new Int32Array(2), tokens(2, 4), tokens(2, 4), { pad: 0 })
  .gradients['decoder.dense.bias'];
s2s.loadStateDict(readSafetensors(new Uint8Array(0))).dispose();

const transformer = new attn.Transformer({ srcVocabSize: 7, tgtVocabSize: 8, numHiddens: 8, ffnNumHiddens: 12, numHeads: 2, numBlks: 2 });
// @ts-expect-error: the config needs the FFN's width
new attn.Transformer({ srcVocabSize: 7, tgtVocabSize: 8, numHiddens: 8, numHeads: 2, numBlks: 2 });
const maps = transformer.forward(tokens(2, 5), new Int32Array(2), tokens(2, 4)).attention;
const crossShape: number[] = maps.decoderCross[0].shape;
// @ts-expect-error: the maps are per block: an array, not one tensor
maps.encoder.shape;
// @ts-expect-error: translation gives the cross-attention only
transformer.translate(tokens(2, 5), new Int32Array(2), { bos: 1, eos: 2, maxLen: 4 }).attention.decoderSelf[0];
const transformerLoss: number = transformer.trainStep(tokens(2, 5), new Int32Array(2), tokens(2, 4), tokens(2, 4), { pad: 0, lr: 0.0015, clip: 1 });
// Code moves between the two models through their shared interface.
const models: EncoderDecoderModel[] = [transformer, s2s];
transformer.dispose();

const lm = attn.CausalLM.llama({ vocabSize: 13, hiddenSize: 8, numLayers: 2, numHeads: 4, numKvHeads: 2, intermediateSize: 12 });
// @ts-expect-error: a norm the model does not have
attn.CausalLM.gpt2({ vocabSize: 11, hiddenSize: 8, numLayers: 1, numHeads: 2, norm: 'batch' });
// @ts-expect-error: the config needs its sizes
new attn.CausalLM({ format: 'llama' });
const lmMaps: Tensor[] | undefined = lm.forward(tokens(2, 5), { attention: true, headMask: new Float32Array(8).fill(1) }).attention;
// @ts-expect-error: a head mask is a tensor or a Float32Array, not a number[]
lm.forward(tokens(2, 5), { headMask: [1, 0, 1, 1, 1, 1, 1, 1] });
// @ts-expect-error: dropout is a rate
attn.CausalLM.gpt2({ vocabSize: 11, hiddenSize: 8, numLayers: 1, numHeads: 2, maxPositions: 4, dropout: true });
const lmLoss: number = lm.trainStep(tokens(2, 6), { lr: 1e-3, betas: [0.9, 0.95], weightDecay: 0.1, clip: 1 });
// @ts-expect-error: betas are a pair
lm.trainStep(tokens(2, 6), { betas: 0.9 });
const continued: Int32Array = lm.generate(tokens(2, 3), { maxNewTokens: 4, temperature: 0.8, topK: 5, topP: 0.9, seed: 1 }).tokens.data;
// @ts-expect-error: how many tokens to generate is required
lm.generate(tokens(2, 3), { temperature: 0 });
lm.loadStateDict(readSafetensors(new Uint8Array(0))).dispose();

export {};
