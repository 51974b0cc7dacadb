#include "causal_lm_decoder.hpp"

#include <algorithm>

#include "kernels/random_stream.hpp"
#include "models/causal_lm_sampling.hpp"
#include "models/model_inputs.hpp"

namespace attn::detail {

namespace {

KVCacheConfig cache_config(const CausalLMLayers& layers, Index batch, Index capacity) {
  KVCacheConfig c =
      plain_cache_config(batch, layers.heads(), layers.head_dim(), layers.head_dim(), capacity);
  c.kv_heads = layers.kv_heads();
  c.window = layers.config().window;
  if (layers.config().positions == PositionKind::Rotary) {
    RotaryOptions rotary;
    rotary.base = layers.config().rotary_base;
    c.rotary = rotary;
  }
  return c;
}

}  // namespace

CausalLMDecoder::CausalLMDecoder(const CausalLMConfig& config,
                                 const CausalLM::Parameters& parameters, Index batch,
                                 Index capacity, const float* head_mask)
    : layers_(config, parameters), head_mask_(head_mask) {
  layers_.pack_weights();
  for (size_t l = 0; l < parameters.layers.size(); ++l) {
    caches_.emplace_back(cache_config(layers_, batch, capacity));
  }
}

Matrix CausalLMDecoder::step(TokenBatch tokens) {
  const CausalLM::Parameters& p = layers_.parameters();
  const Index batch = tokens.batch, n = tokens.steps;
  const Index heads = layers_.heads(), kv_heads = layers_.kv_heads(), d = layers_.head_dim();
  Matrix x = layers_.embed(tokens, position_);
  for (size_t l = 0; l < p.layers.size(); ++l) {
    const CausalLM::Parameters::Layer& ids = p.layers[l];
    const Matrix qkv = layers_.project_all(ids.qkv, layers_.norm(ids.norm1, x));
    const Tensor3 q = layers_.split(qkv, layers_.query_column(), batch, heads);
    const Tensor3 k = layers_.split(qkv, layers_.key_column(), batch, kv_heads);
    const Tensor3 v = layers_.split(qkv, layers_.value_column(), batch, kv_heads);
    caches_[l].append(k.data.data(), {batch, kv_heads, n, d}, v.data.data(),
                      {batch, kv_heads, n, d});
    Tensor3 out(batch * heads, n, d);
    caches_[l].attend(q.data.data(), {batch, heads, n, d}, out.data.data());
    if (head_mask_) layers_.scale_heads(out, head_mask_ + static_cast<Index>(l) * heads);
    Matrix merged(batch * n, heads * d);
    layers_.merge(out, 0, batch, merged);
    x += layers_.project(ids.out, merged);
    if (ids.up.empty()) continue;
    const Matrix up = layers_.project_all(ids.up, layers_.norm(ids.norm2, x));
    x += layers_.project(ids.down, layers_.activate(up));
  }
  position_ += n;
  Matrix last(batch, x.cols());
  for (Index b = 0; b < batch; ++b) last.row(b) = x.row((b + 1) * n - 1);
  return layers_.logits(layers_.norm(p.final_norm, last));
}

Generation causal_lm_generate(const CausalLMConfig& config, const CausalLM::Parameters& parameters,
                              TokenBatch prompt, const GenerateOptions& options) {
  const Index batch = prompt.batch, steps = prompt.steps + options.max_new_tokens;
  Generation out{batch, steps, std::vector<int32_t>(static_cast<size_t>(batch * steps)),
                 std::vector<int32_t>(static_cast<size_t>(batch), static_cast<int32_t>(steps))};
  for (Index b = 0; b < batch; ++b) {
    std::copy(prompt.data + b * prompt.steps, prompt.data + (b + 1) * prompt.steps,
              out.tokens.begin() + b * steps);
  }
  if (options.max_new_tokens == 0) return out;
  // Row b draws from its own stream: its tokens do not depend on the other rows.
  std::vector<RandomStream> random;
  for (Index b = 0; b < batch; ++b)
    random.emplace_back(mix(options.seed, static_cast<uint64_t>(b)));
  std::vector<bool> ended(static_cast<size_t>(batch), false);
  CausalLMDecoder decoder(config, parameters, batch, steps,
                          options.head_mask.empty() ? nullptr : options.head_mask.data());
  Matrix logits = decoder.step(prompt);
  std::vector<int32_t> next(static_cast<size_t>(batch));
  for (Index t = prompt.steps; t < steps; ++t) {
    for (Index b = 0; b < batch; ++b) {
      const size_t row = static_cast<size_t>(b);
      next[row] = ended[row] ? options.eos
                             : sample_token(logits.row(b).data(), logits.cols(), options,
                                            random[row].next_uniform());
      out.tokens[static_cast<size_t>(b * steps + t)] = next[row];
      if (!ended[row] && next[row] == options.eos) {
        ended[row] = true;
        out.lengths[row] = static_cast<int32_t>(t + 1);
      }
    }
    if (std::all_of(ended.begin(), ended.end(), [](bool e) { return e; })) {
      for (Index b = 0; b < batch; ++b) {
        std::fill(out.tokens.begin() + b * steps + t + 1, out.tokens.begin() + (b + 1) * steps,
                  options.eos);
      }
      break;
    }
    if (t + 1 < steps) logits = decoder.step({next.data(), batch, 1});
  }
  return out;
}

}  // namespace attn::detail
