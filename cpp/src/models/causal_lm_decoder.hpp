#pragma once
// CausalLM's incremental decoding: each layer keeps its keys and values in a KV cache (grouped
// heads, rotary keys at their positions, the window's positions only), so a step computes only
// its new tokens. The prompt goes in as one step; each new token after it as another.

#include <vector>

#include "attn/kv_cache.hpp"
#include "models/causal_lm_layers.hpp"

namespace attn::detail {

class CausalLMDecoder {
 public:
  // For `batch` sequences of up to `capacity` positions; head_mask, when non-null,
  // [num_layers, num_heads] factors on the heads' outputs (forward()'s head_mask).
  CausalLMDecoder(const CausalLMConfig& config, const CausalLM::Parameters& parameters, Index batch,
                  Index capacity, const float* head_mask = nullptr);

  // tokens [batch, n] at the next n positions -> the logits of each row's last token
  // [batch, vocab].
  Matrix step(TokenBatch tokens);

 private:
  CausalLMLayers layers_;
  std::vector<KVCache> caches_;  // one per layer
  const float* head_mask_;
  Index position_ = 0;  // positions decoded so far
};

// generate(): prompt [B, T0] and the options checked by the caller.
Generation causal_lm_generate(const CausalLMConfig& config, const CausalLM::Parameters& parameters,
                              TokenBatch prompt, const GenerateOptions& options);

}  // namespace attn::detail
