#pragma once
// Scaled dot-product attention and additive (Bahdanau) attention.

#include <cstdint>
#include <optional>

#include "attn/mask.hpp"
#include "attn/scoring.hpp"
#include "attn/tensor.hpp"

namespace attn {

struct AttentionOptions {
  Mask mask;
  std::optional<float> scale;  // default 1/sqrt(d)
  float dropout = 0.0f;        // inverted dropout on the weights, in [0, 1); off by default
  uint64_t seed = 0;           // dropout's random stream: the same seed drops the same weights
};

// output = dropout(softmax(mask(q k^T * scale))) v
// q [B, nq, d], k [B, nk, d], v [B, nk, dv] -> output [B, nq, dv]; weights [B, nq, nk] when
// `weights` is non-null. The weights written are the attention distribution before dropout
// (rows sum to 1), as d2l keeps them; dropout only changes what is pooled.
// With no keys (nk = 0) the output is zero, the empty sum, as PyTorch's math path gives (unlike
// kernel_regression, whose unreached queries are NaN by its own rule).
// Throws std::invalid_argument naming the argument whose shape or value does not fit.
void scaled_dot_product_attention(ConstBatch q, ConstBatch k, ConstBatch v,
                                  const AttentionOptions& options, MutableBatch output,
                                  const MutableBatch* weights = nullptr);

// Additive attention (d2l's AdditiveAttention): scores wv^T tanh(Wq q + Wk k), masked softmax,
// then the weighted sum of v. Uses params.Wq [h, dq], params.Wk [h, dk], params.wv [h].
void additive_attention(ConstBatch q, ConstBatch k, ConstBatch v, const ScoreParams& params,
                        const AttentionOptions& options, MutableBatch output,
                        const MutableBatch* weights = nullptr);

struct AttentionResult {
  Tensor3 output;
  Tensor3 weights;  // empty unless requested
};
AttentionResult scaled_dot_product_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                             const AttentionOptions& options = {},
                                             bool need_weights = false);
AttentionResult additive_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                   const ScoreParams& params, const AttentionOptions& options = {},
                                   bool need_weights = false);

}  // namespace attn
