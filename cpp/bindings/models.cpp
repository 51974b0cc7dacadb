// The model classes of the core exposed to JS: each handle holds one C++ model, which JS owns
// and deletes in dispose(). Arguments cross as in embind.cpp; state dicts as one flat buffer
// (binding.hpp).

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <optional>
#include <string>
#include <vector>

#include "attn/attn.hpp"
#include "binding.hpp"

namespace {

// The state-dict entries of a model as plain JS objects [{ name, shape }], for JS to read once.
emscripten::val parameter_specs(const std::vector<attn::ParameterSpec>& specs) {
  emscripten::val list = emscripten::val::array();
  for (const auto& spec : specs) {
    emscripten::val shape = emscripten::val::array();
    for (attn::Index size : spec.shape) shape.call<void>("push", static_cast<double>(size));
    emscripten::val entry = emscripten::val::object();
    entry.set("name", spec.name);
    entry.set("shape", shape);
    list.call<void>("push", entry);
  }
  return list;
}

using namespace binding;

// Holds one attn::KVCache; JS owns the handle and deletes it in dispose(). Keys and values stay
// in the wasm heap between calls: only the new positions and the queries cross.
class KVCacheHandle {
 public:
  // kv_heads 0 means heads, window 0 none; without has_rotary, base, dim and interleaved are not
  // read (rotary dim 0 means all of head_dim).
  // half: keys and values stored as IEEE halves (KVCacheDtype::F16).
  Status init(int batch, int heads, int head_dim, int value_dim, int capacity, int kv_heads,
              int window, bool has_rotary, float rotary_base, int rotary_dim,
              bool rotary_interleaved, bool half) {
    return guarded([&] {
      attn::KVCacheConfig config;
      config.batch = batch;
      config.heads = heads;
      config.head_dim = head_dim;
      config.value_dim = value_dim;
      config.capacity = capacity;
      config.kv_heads = kv_heads;
      config.window = window;
      config.dtype = half ? attn::KVCacheDtype::F16 : attn::KVCacheDtype::F32;
      if (has_rotary) {
        attn::RotaryOptions rotary;
        rotary.base = rotary_base;
        rotary.dim = rotary_dim;
        rotary.interleaved = rotary_interleaved;
        config.rotary = rotary;
      }
      cache_.emplace(config);
    });
  }

  int length() const { return static_cast<int>(cache_->length()); }
  int firstPosition() const { return static_cast<int>(cache_->first_position()); }
  double bytes() const { return cache_->bytes(); }

  // Grows for t more positions before JS copies them into the heap (see reserve_append).
  Status reserve(int t) {
    return guarded([&] { cache_->reserve_append(t); });
  }

  // k [batch, kv_heads, t, head_dim], v [batch, kv_heads, t, value_dim] at the given addresses.
  Status append(uintptr_t k, uintptr_t v, int t) {
    return guarded([&] {
      const auto& c = cache_->config();
      cache_->append(reinterpret_cast<const float*>(k), {c.batch, c.kv_heads, t, c.head_dim},
                     reinterpret_cast<const float*>(v), {c.batch, c.kv_heads, t, c.value_dim});
    });
  }

  // q [batch, heads, nq, head_dim] -> out [batch, heads, nq, value_dim]; the modifiers as
  // AttentionArg carries them (softcap 0: none; alibi_slopes and sinks: `heads` floats, or 0),
  // lse [batch, heads, nq] or 0.
  Status attend(uintptr_t q, int nq, bool has_scale, float scale, float softcap,
                uintptr_t alibi_slopes, uintptr_t sinks, uintptr_t out, uintptr_t lse) const {
    return guarded([&] {
      const auto& c = cache_->config();
      attn::KVCacheAttendOptions options;
      if (has_scale) options.scale = scale;
      if (softcap != 0.0f) options.softcap = softcap;
      options.alibi_slopes = heap_floats(alibi_slopes, c.heads);
      options.sinks = heap_floats(sinks, c.heads);
      cache_->attend(reinterpret_cast<const float*>(q), {c.batch, c.heads, nq, c.head_dim},
                     reinterpret_cast<float*>(out), options, reinterpret_cast<float*>(lse));
    });
  }

  Status truncate(int n) {
    return guarded([&] { cache_->truncate(n); });
  }

  void clear() { cache_->clear(); }

  attn::KVCache& cache() { return *cache_; }

 private:
  std::optional<attn::KVCache> cache_;
};

// Holds one attn::MultiHeadAttention; JS owns the handle and deletes it in dispose().
class MultiHeadHandle {
 public:
  Status init(int embed_dim, int num_heads, int kdim, int vdim, bool bias) {
    return guarded([&] {
      mha_.emplace(attn::MultiHeadConfig{embed_dim, num_heads, kdim, vdim, bias});
    });
  }

  emscripten::val parameterSpecs() const { return parameter_specs(mha_->parameters()); }

  // Every parameter from one flat buffer laid out as stateDict() writes it (JS has checked every
  // entry's name and shape), all or nothing.
  Status loadStateDict(uintptr_t data) {
    return guarded([&] { mha_->load_state_dict(read_entries(mha_->parameters(), data)); });
  }

  Status resetParameters(double seed) {
    return guarded([&] { mha_->reset_parameters(static_cast<uint64_t>(seed)); });
  }

  // Every parameter, in the order parameterSpecs() lists, back to back from `out`.
  Status stateDict(uintptr_t out) const {
    return guarded([&] { copy_entries(mha_->state_dict(), out); });
  }

  // d_parameters go to `grad_parameters` as stateDict() lays parameters out.
  Status backward(TensorArg query, TensorArg key, TensorArg value, TensorArg grad_output,
                  MaskArg mask, TensorArg d_query, TensorArg d_key, TensorArg d_value,
                  uintptr_t grad_parameters) const {
    return guarded([&] {
      attn::MultiHeadForwardOptions options;
      options.mask = mask.to_mask();
      const auto gradients = mha_->backward(copy_in(query), copy_in(key), copy_in(value),
                                            copy_in(grad_output), options);
      copy_out(gradients.d_query.data, d_query.data);
      copy_out(gradients.d_key.data, d_key.data);
      copy_out(gradients.d_value.data, d_value.data);
      copy_entries(gradients.d_parameters, grad_parameters);
    });
  }

  Status forward(TensorArg query, TensorArg key, TensorArg value, MaskArg mask,
                 bool average_weights, TensorArg out, TensorArg weights) const {
    return guarded([&] {
      attn::MultiHeadForwardOptions options;
      options.mask = mask.to_mask();
      options.average_attn_weights = average_weights;
      const attn::MutableBatch weight_view = weights.out();
      mha_->forward(query.in(), key.in(), value.in(), options, out.out(),
                    weights.data ? &weight_view : nullptr);
    });
  }

  // Incremental self-attention: appends the projected keys and values to `cache`.
  Status forwardCached(TensorArg query, TensorArg key, TensorArg value, KVCacheHandle& cache,
                       TensorArg out) const {
    return guarded(
        [&] { mha_->forward(query.in(), key.in(), value.in(), cache.cache(), out.out()); });
  }

 private:
  std::optional<attn::MultiHeadAttention> mha_;
};

// Seq2Seq's configuration as JS names it (web/lib/seq2seq.js).
struct Seq2SeqConfigArg {
  int srcVocabSize = 0, tgtVocabSize = 0, embedSize = 0, numHiddens = 0, numLayers = 1;
  float dropout = 0.0f;
  double seed = 0;  // a JS number; integral values up to 2^53 map one-to-one
  bool attention = true;
};

// Token ids [batch, steps] in the heap.
struct TokenArg {
  uintptr_t data = 0;
  int batch = 0, steps = 0;

  attn::TokenBatch tokens() const { return {reinterpret_cast<const int32_t*>(data), batch, steps}; }
};

std::vector<int32_t> lengths(uintptr_t data, int count) {
  const auto* first = reinterpret_cast<const int32_t*>(data);
  return {first, first + count};
}

// What the two encoder-decoder handles share (attn/encoder_decoder.hpp): the state dict, the
// loss with its gradients, and the training step. Registered once per model as the JS base class
// of its handle.
template <typename Model>
class EncoderDecoderHandle {
 public:
  emscripten::val parameterSpecs() const { return parameter_specs(model_->parameters()); }

  Status loadStateDict(uintptr_t data) {
    return guarded([&] { model_->load_state_dict(read_entries(model_->parameters(), data)); });
  }

  Status stateDict(uintptr_t out) const {
    return guarded([&] { copy_entries(model_->state_dict(), out); });
  }

  // The loss at `loss` (one float), the gradients laid out as stateDict() lays parameters out.
  Status lossAndGradients(TokenArg src, uintptr_t src_valid_lens, TokenArg tgt_input,
                          TokenArg tgt_output, int pad, uintptr_t loss, uintptr_t gradients) {
    return guarded([&] {
      attn::EncoderDecoderLossOptions options;
      options.pad = pad;
      const auto result =
          model_->loss_and_gradients(src.tokens(), lengths(src_valid_lens, src.batch),
                                     tgt_input.tokens(), tgt_output.tokens(), options);
      *reinterpret_cast<float*>(loss) = result.loss;
      copy_entries(result.gradients, gradients);
    });
  }

  Status trainStep(TokenArg src, uintptr_t src_valid_lens, TokenArg tgt_input, TokenArg tgt_output,
                   int pad, float lr, float clip, uintptr_t loss) {
    return guarded([&] {
      attn::EncoderDecoderTrainOptions options;
      options.pad = pad;
      options.lr = lr;
      options.clip = clip;
      *reinterpret_cast<float*>(loss) =
          model_->train_step(src.tokens(), lengths(src_valid_lens, src.batch), tgt_input.tokens(),
                             tgt_output.tokens(), options);
    });
  }

 protected:
  // Greedy tokens [B, max_len] and lengths [B] (int32) out of a translation.
  template <typename Translation>
  static void copy_tokens(const Translation& result, uintptr_t tokens, uintptr_t token_lengths) {
    std::copy(result.tokens.begin(), result.tokens.end(), reinterpret_cast<int32_t*>(tokens));
    std::copy(result.lengths.begin(), result.lengths.end(),
              reinterpret_cast<int32_t*>(token_lengths));
  }

  std::optional<Model> model_;
};

// Holds one attn::Seq2Seq (d2l's encoder-decoder with Bahdanau attention).
class Seq2SeqHandle : public EncoderDecoderHandle<attn::Seq2Seq> {
 public:
  Status init(Seq2SeqConfigArg c) {
    return guarded([&] {
      model_.emplace(attn::Seq2SeqConfig{c.srcVocabSize, c.tgtVocabSize, c.embedSize, c.numHiddens,
                                         c.numLayers, c.dropout, static_cast<uint64_t>(c.seed),
                                         c.attention});
    });
  }

  // logits [B, Tt, V] and attention [B, Tt, Ts] (left alone without attention).
  Status forward(TokenArg src, uintptr_t src_valid_lens, TokenArg tgt_input, uintptr_t logits,
                 uintptr_t attention) const {
    return guarded([&] {
      const auto result =
          model_->forward(src.tokens(), lengths(src_valid_lens, src.batch), tgt_input.tokens());
      copy_out(result.logits.data, logits);
      copy_out(result.attention.data, attention);
    });
  }

  // tokens [B, max_len], lengths [B] (int32), attention [B, max_len, Ts] (left alone without).
  Status translate(TokenArg src, uintptr_t src_valid_lens, int bos, int eos, int max_len,
                   uintptr_t tokens, uintptr_t token_lengths, uintptr_t attention) const {
    return guarded([&] {
      const auto result =
          model_->translate(src.tokens(), lengths(src_valid_lens, src.batch), {bos, eos, max_len});
      copy_tokens(result, tokens, token_lengths);
      copy_out(result.attention.data, attention);
    });
  }
};

// The Transformer's configuration as JS names it (web/lib/transformer.js).
struct TransformerConfigArg {
  int srcVocabSize = 0, tgtVocabSize = 0, numHiddens = 0, ffnNumHiddens = 0, numHeads = 1,
      numBlks = 1;
  float dropout = 0.0f;
  double seed = 0;
};

// Per-block tensors back to back from `out`, in order.
uintptr_t copy_blocks(const std::vector<attn::Tensor3>& blocks, uintptr_t out) {
  for (const attn::Tensor3& t : blocks) {
    copy_out(t.data, out);
    out += t.data.size() * sizeof(float);
  }
  return out;
}

// Holds one attn::Transformer (d2l 11.7).
class TransformerHandle : public EncoderDecoderHandle<attn::Transformer> {
 public:
  Status init(TransformerConfigArg c) {
    return guarded([&] {
      model_.emplace(attn::TransformerConfig{c.srcVocabSize, c.tgtVocabSize, c.numHiddens,
                                             c.ffnNumHiddens, c.numHeads, c.numBlks, c.dropout,
                                             static_cast<uint64_t>(c.seed)});
    });
  }

  // logits [B, Tt, V]; at `attention` every map back to back: the encoder's blocks
  // [B, heads, Ts, Ts], the decoder's self-attention [B, heads, Tt, Tt], its cross-attention
  // [B, heads, Tt, Ts].
  Status forward(TokenArg src, uintptr_t src_valid_lens, TokenArg tgt_input, uintptr_t logits,
                 uintptr_t attention) const {
    return guarded([&] {
      const auto result =
          model_->forward(src.tokens(), lengths(src_valid_lens, src.batch), tgt_input.tokens());
      copy_out(result.logits.data, logits);
      copy_blocks(result.attention.decoder_cross,
                  copy_blocks(result.attention.decoder_self,
                              copy_blocks(result.attention.encoder, attention)));
    });
  }

  // tokens [B, max_len], lengths [B] (int32), the cross-attention of every block back to back
  // [B, heads, max_len, Ts] each.
  Status translate(TokenArg src, uintptr_t src_valid_lens, int bos, int eos, int max_len,
                   uintptr_t tokens, uintptr_t token_lengths, uintptr_t attention) const {
    return guarded([&] {
      const auto result =
          model_->translate(src.tokens(), lengths(src_valid_lens, src.batch), {bos, eos, max_len});
      copy_tokens(result, tokens, token_lengths);
      copy_blocks(result.cross_attention, attention);
    });
  }
};

// CausalLM's configuration as JS names it (web/lib/causal-lm.js), its enums as their index:
// format gpt2 0 | llama 1, positions learned 0 | rotary 1 | none 2, norm layer 0 | rms 1,
// mlp gelu 0 | swiglu 1.
struct CausalLMConfigArg {
  int format = 0, vocabSize = 0, hiddenSize = 0, numLayers = 1, numHeads = 1, numKvHeads = 0,
      intermediateSize = 0, maxPositions = 0, positions = 0, norm = 0, mlp = 0, window = 0;
  float rotaryBase = 10000.0f, normEps = 1e-5f, dropout = 0.0f;
  bool bias = true, tieEmbeddings = true;
  double seed = 0;
};

// Holds one attn::CausalLM. Its state dict crosses as its parameters (a tied model's
// lm_head.weight, the embedding again, is added and checked in JS).
class CausalLMHandle {
 public:
  Status init(CausalLMConfigArg c) {
    return guarded([&] {
      attn::CausalLMConfig config;
      config.format = static_cast<attn::CheckpointFormat>(c.format);
      config.vocab_size = c.vocabSize;
      config.hidden_size = c.hiddenSize;
      config.num_layers = c.numLayers;
      config.num_heads = c.numHeads;
      config.num_kv_heads = c.numKvHeads;
      config.intermediate_size = c.intermediateSize;
      config.max_positions = c.maxPositions;
      config.positions = static_cast<attn::PositionKind>(c.positions);
      config.rotary_base = c.rotaryBase;
      config.norm = static_cast<attn::NormKind>(c.norm);
      config.norm_eps = c.normEps;
      config.mlp = static_cast<attn::MlpKind>(c.mlp);
      config.bias = c.bias;
      config.tie_embeddings = c.tieEmbeddings;
      config.window = c.window;
      config.dropout = c.dropout;
      config.seed = static_cast<uint64_t>(c.seed);
      model_.emplace(config);
    });
  }

  emscripten::val parameterSpecs() const { return parameter_specs(model_->parameters()); }

  Status loadStateDict(uintptr_t data) {
    return guarded([&] { model_->load_state_dict(read_entries(model_->parameters(), data)); });
  }

  Status stateDict(uintptr_t out) const {
    return guarded([&] {
      std::vector<attn::NamedTensor> entries = model_->state_dict();
      entries.resize(model_->parameters().size());  // without a tied lm_head.weight
      copy_entries(entries, out);
    });
  }

  // logits [B, T, V]; with attention non-zero, every layer's map [B, heads, T, T] back to back;
  // head_mask non-zero: [layers, heads] factors on the heads' weights.
  Status forward(TokenArg tokens, uintptr_t head_mask, uintptr_t logits,
                 uintptr_t attention) const {
    return guarded([&] {
      const auto result = model_->forward(tokens.tokens(), attention != 0, head_mask_of(head_mask));
      copy_out(result.logits.data, logits);
      if (attention) copy_blocks(result.attention, attention);
    });
  }

  Status lossAndGradients(TokenArg tokens, int pad, uintptr_t loss, uintptr_t gradients) {
    return guarded([&] {
      const auto result = model_->loss_and_gradients(tokens.tokens(), pad);
      *reinterpret_cast<float*>(loss) = result.loss;
      copy_entries(result.gradients, gradients);
    });
  }

  Status trainStep(TokenArg tokens, float lr, float beta1, float beta2, float eps,
                   float weight_decay, float clip, int pad, uintptr_t loss) {
    return guarded([&] {
      const attn::AdamWOptions options{lr, beta1, beta2, eps, weight_decay, clip};
      *reinterpret_cast<float*>(loss) = model_->train_step(tokens.tokens(), options, pad);
    });
  }

  // tokens [B, T0 + max_new_tokens] and lengths [B] (int32); head_mask as forward's.
  Status generate(TokenArg prompt, int max_new_tokens, float temperature, int top_k, float top_p,
                  double seed, int eos, uintptr_t head_mask, uintptr_t tokens,
                  uintptr_t token_lengths) const {
    return guarded([&] {
      attn::GenerateOptions options;
      options.head_mask = head_mask_of(head_mask);
      options.max_new_tokens = max_new_tokens;
      options.temperature = temperature;
      options.top_k = top_k;
      options.top_p = top_p;
      options.seed = static_cast<uint64_t>(seed);
      options.eos = eos;
      const attn::Generation result = model_->generate(prompt.tokens(), options);
      std::copy(result.tokens.begin(), result.tokens.end(), reinterpret_cast<int32_t*>(tokens));
      std::copy(result.lengths.begin(), result.lengths.end(),
                reinterpret_cast<int32_t*>(token_lengths));
    });
  }

  double optimizerSteps() const { return static_cast<double>(model_->optimizer_steps()); }

 private:
  // The [layers, heads] factors at `head_mask` (JS checked their count), none at 0.
  std::vector<float> head_mask_of(uintptr_t head_mask) const {
    if (!head_mask) return {};
    const auto* factors = reinterpret_cast<const float*>(head_mask);
    return {factors, factors + model_->config().num_layers * model_->config().num_heads};
  }

  std::optional<attn::CausalLM> model_;
};

// The shared functions, on the JS base class of a model's handle.
template <typename Model>
void register_encoder_decoder(const char* name) {
  using Handle = EncoderDecoderHandle<Model>;
  emscripten::class_<Handle>(name)
      .function("parameterSpecs", &Handle::parameterSpecs)
      .function("loadStateDict", &Handle::loadStateDict)
      .function("stateDict", &Handle::stateDict)
      .function("lossAndGradients", &Handle::lossAndGradients)
      .function("trainStep", &Handle::trainStep);
}

}  // namespace

EMSCRIPTEN_BINDINGS(models) {
  using namespace emscripten;
  class_<KVCacheHandle>("KVCache")
      .constructor<>()
      .function("init", &KVCacheHandle::init)
      .function("length", &KVCacheHandle::length)
      .function("firstPosition", &KVCacheHandle::firstPosition)
      .function("bytes", &KVCacheHandle::bytes)
      .function("reserve", &KVCacheHandle::reserve)
      .function("append", &KVCacheHandle::append)
      .function("attend", &KVCacheHandle::attend)
      .function("truncate", &KVCacheHandle::truncate)
      .function("clear", &KVCacheHandle::clear);
  class_<MultiHeadHandle>("MultiHeadAttention")
      .constructor<>()
      .function("init", &MultiHeadHandle::init)
      .function("parameterSpecs", &MultiHeadHandle::parameterSpecs)
      .function("loadStateDict", &MultiHeadHandle::loadStateDict)
      .function("resetParameters", &MultiHeadHandle::resetParameters)
      .function("forward", &MultiHeadHandle::forward)
      .function("forwardCached", &MultiHeadHandle::forwardCached)
      .function("backward", &MultiHeadHandle::backward)
      .function("stateDict", &MultiHeadHandle::stateDict);

  value_object<Seq2SeqConfigArg>("Seq2SeqConfigArg")
      .field("srcVocabSize", &Seq2SeqConfigArg::srcVocabSize)
      .field("tgtVocabSize", &Seq2SeqConfigArg::tgtVocabSize)
      .field("embedSize", &Seq2SeqConfigArg::embedSize)
      .field("numHiddens", &Seq2SeqConfigArg::numHiddens)
      .field("numLayers", &Seq2SeqConfigArg::numLayers)
      .field("dropout", &Seq2SeqConfigArg::dropout)
      .field("seed", &Seq2SeqConfigArg::seed)
      .field("attention", &Seq2SeqConfigArg::attention);
  value_object<TokenArg>("TokenArg")
      .field("data", &TokenArg::data)
      .field("batch", &TokenArg::batch)
      .field("steps", &TokenArg::steps);
  register_encoder_decoder<attn::Seq2Seq>("Seq2SeqBase");
  class_<Seq2SeqHandle, base<EncoderDecoderHandle<attn::Seq2Seq>>>("Seq2Seq")
      .constructor<>()
      .function("init", &Seq2SeqHandle::init)
      .function("forward", &Seq2SeqHandle::forward)
      .function("translate", &Seq2SeqHandle::translate);

  value_object<TransformerConfigArg>("TransformerConfigArg")
      .field("srcVocabSize", &TransformerConfigArg::srcVocabSize)
      .field("tgtVocabSize", &TransformerConfigArg::tgtVocabSize)
      .field("numHiddens", &TransformerConfigArg::numHiddens)
      .field("ffnNumHiddens", &TransformerConfigArg::ffnNumHiddens)
      .field("numHeads", &TransformerConfigArg::numHeads)
      .field("numBlks", &TransformerConfigArg::numBlks)
      .field("dropout", &TransformerConfigArg::dropout)
      .field("seed", &TransformerConfigArg::seed);
  value_object<CausalLMConfigArg>("CausalLMConfigArg")
      .field("format", &CausalLMConfigArg::format)
      .field("vocabSize", &CausalLMConfigArg::vocabSize)
      .field("hiddenSize", &CausalLMConfigArg::hiddenSize)
      .field("numLayers", &CausalLMConfigArg::numLayers)
      .field("numHeads", &CausalLMConfigArg::numHeads)
      .field("numKvHeads", &CausalLMConfigArg::numKvHeads)
      .field("intermediateSize", &CausalLMConfigArg::intermediateSize)
      .field("maxPositions", &CausalLMConfigArg::maxPositions)
      .field("positions", &CausalLMConfigArg::positions)
      .field("rotaryBase", &CausalLMConfigArg::rotaryBase)
      .field("norm", &CausalLMConfigArg::norm)
      .field("normEps", &CausalLMConfigArg::normEps)
      .field("mlp", &CausalLMConfigArg::mlp)
      .field("bias", &CausalLMConfigArg::bias)
      .field("tieEmbeddings", &CausalLMConfigArg::tieEmbeddings)
      .field("window", &CausalLMConfigArg::window)
      .field("dropout", &CausalLMConfigArg::dropout)
      .field("seed", &CausalLMConfigArg::seed);
  class_<CausalLMHandle>("CausalLM")
      .constructor<>()
      .function("init", &CausalLMHandle::init)
      .function("parameterSpecs", &CausalLMHandle::parameterSpecs)
      .function("loadStateDict", &CausalLMHandle::loadStateDict)
      .function("stateDict", &CausalLMHandle::stateDict)
      .function("forward", &CausalLMHandle::forward)
      .function("lossAndGradients", &CausalLMHandle::lossAndGradients)
      .function("trainStep", &CausalLMHandle::trainStep)
      .function("generate", &CausalLMHandle::generate)
      .function("optimizerSteps", &CausalLMHandle::optimizerSteps);
  register_encoder_decoder<attn::Transformer>("TransformerBase");
  class_<TransformerHandle, base<EncoderDecoderHandle<attn::Transformer>>>("Transformer")
      .constructor<>()
      .function("init", &TransformerHandle::init)
      .function("forward", &TransformerHandle::forward)
      .function("translate", &TransformerHandle::translate);
}
