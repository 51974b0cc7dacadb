#pragma once
// Scaled dot-product attention and additive (Bahdanau) attention.

#include <cstdint>
#include <optional>
#include <vector>

#include "attn/mask.hpp"
#include "attn/scoring.hpp"
#include "attn/tensor.hpp"

namespace attn {

struct AttentionOptions {
  Mask mask;
  std::optional<float> scale;  // default 1/sqrt(d)
  float dropout = 0.0f;        // inverted dropout on the weights, in [0, 1); off by default
  uint64_t seed = 0;           // dropout's random stream: the same seed drops the same weights

  // Heads (scaled dot-product attention only). A [B, H, n, d] tensor passes as a batch of
  // B * H matrices: q and the output hold B * heads, k and v B * kv_heads (grouped-query
  // attention when kv_heads < heads; heads a multiple of kv_heads). Query head h reads K/V head
  // h / (heads / kv_heads), PyTorch's enable_gqa (repeat_interleave on the head axis), without
  // repeating K or V anywhere. valid_lens and key_padding are per batch row; a bool or additive
  // mask is [nq, nk], or one per batch row and head (mask batch B * heads).
  Index heads = 1;
  Index kv_heads = 1;

  // Score modifiers of current models (scaled dot-product attention only), applied to
  // s = scale q.k in this order: softcap, ALiBi, the additive mask, then the boolean masks
  // (valid_lens, bool mask, causal, window) that set hidden scores to mask.fill; then the sink
  // joins the softmax.
  std::optional<float> softcap;     // c > 0, Gemma 2: s <- c tanh(s / c)
  std::vector<float> alibi_slopes;  // empty or `heads` slopes: s <- s - slope_h |i - j|
  // Empty or `heads` logits: one more term exp(sink_h) in each row's softmax denominator that
  // pools nothing (gpt-oss's attention sinks); the weights of a row then sum to less than 1.
  std::vector<float> sinks;
};

// output = dropout(softmax(mask(q k^T * scale))) v, with the modifiers above
// q [B, nq, d], k [B, nk, d], v [B, nk, dv] -> output [B, nq, dv]; weights [B, nq, nk] when
// `weights` is non-null (B counting B * heads matrices for q, B * kv_heads for k and v). The
// weights written are the attention distribution before dropout (rows sum to 1, less a sink's
// share), as d2l keeps them; dropout only changes what is pooled. With lse non-null it receives
// each row's log-sum-exp [B * heads * nq]: the log of the softmax's denominator, the sink in it.
// With no keys (nk = 0) the output is zero, the empty sum, as PyTorch's math path gives (unlike
// kernel_regression, whose unreached queries are NaN by its own rule).
// Throws std::invalid_argument naming the argument whose shape or value does not fit.
void scaled_dot_product_attention(ConstBatch q, ConstBatch k, ConstBatch v,
                                  const AttentionOptions& options, MutableBatch output,
                                  const MutableBatch* weights = nullptr, float* lse = nullptr);

// Additive attention (d2l's AdditiveAttention): scores wv^T tanh(Wq q + Wk k), masked softmax,
// then the weighted sum of v. Uses params.Wq [h, dq], params.Wk [h, dk], params.wv [h].
void additive_attention(ConstBatch q, ConstBatch k, ConstBatch v, const ScoreParams& params,
                        const AttentionOptions& options, MutableBatch output,
                        const MutableBatch* weights = nullptr);

struct AttentionResult {
  Tensor3 output;
  Tensor3 weights;         // empty unless requested
  std::vector<float> lse;  // empty unless requested
};
AttentionResult scaled_dot_product_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                             const AttentionOptions& options = {},
                                             bool need_weights = false, bool need_lse = false);
AttentionResult additive_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                   const ScoreParams& params, const AttentionOptions& options = {},
                                   bool need_weights = false);

// Gradients: of sum(output * grad_output), the scalar whose gradient a caller back-propagating
// dL/d(output) = grad_output needs. Every option of the forward is honoured with its exact
// semantics, dropout included (the same seed regenerates the forward's mask). A masked score was
// replaced by a constant, so it passes no gradient to q or k; with d2l's fill a fully masked row
// still pools v uniformly, so v gets that row's gradient.

// Scaled dot-product attention, flash-style: q, k, v, grad_output [B, nq, dv] -> dq, dk, dv
// shaped like q, k, v (a K/V head's gradients sum its group of query heads). With sinks and
// dsinks non-null, dsinks receives their gradient [heads]. No [nq, nk] matrix is formed; extra
// memory is O((nq + nk) d). Throws std::invalid_argument as the forward does, and when
// grad_output is not [B, nq, dv].
void scaled_dot_product_attention_backward(ConstBatch q, ConstBatch k, ConstBatch v,
                                           ConstBatch grad_output, const AttentionOptions& options,
                                           MutableBatch dq, MutableBatch dk, MutableBatch dv,
                                           float* dsinks = nullptr);

struct AttentionGradients {
  Tensor3 dq, dk, dv;
  std::vector<float> dsinks;  // `heads` entries when options.sinks are given
};
AttentionGradients scaled_dot_product_attention_backward(const Tensor3& q, const Tensor3& k,
                                                         const Tensor3& v,
                                                         const Tensor3& grad_output,
                                                         const AttentionOptions& options = {});

// Additive attention: the gradients above and those of the parameters, dparams.Wq [h, dq],
// dparams.Wk [h, dk], dparams.wv [h] (params.W is not used).
struct AdditiveAttentionGradients {
  Tensor3 dq, dk, dv;
  ScoreParams dparams;
};
AdditiveAttentionGradients additive_attention_backward(const Tensor3& q, const Tensor3& k,
                                                       const Tensor3& v, const ScoreParams& params,
                                                       const Tensor3& grad_output,
                                                       const AttentionOptions& options = {});

}  // namespace attn
