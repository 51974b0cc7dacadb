#pragma once
// Multi-head attention with torch.nn.MultiheadAttention(batch_first=True) semantics.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "attn/attention.hpp"
#include "attn/detail/projection_weight.hpp"
#include "attn/kv_cache.hpp"
#include "attn/mask.hpp"
#include "attn/state_dict.hpp"
#include "attn/tensor.hpp"

namespace attn {

namespace detail {
struct MultiHeadWeights;
}

struct MultiHeadConfig {
  Index embed_dim = 0;
  Index num_heads = 1;
  Index kdim = 0;  // 0 means embed_dim
  Index vdim = 0;  // 0 means embed_dim
  bool bias = true;
};

struct MultiHeadForwardOptions {
  // key_padding_mask [B, S] (Mask::key_padding), attn_mask [L, S] or [B * heads, L, S]
  // (Mask::bool_mask or Mask::additive with *_batch = 1 or B * heads), d2l's valid lengths,
  // causal. PyTorch fills masked scores with -infinity, so that is the default here: a query
  // that sees no key gets NaN, as in PyTorch. Set mask.fill = -1e6 for d2l's uniform rows.
  Mask mask = default_mask();
  bool average_attn_weights = true;  // weights [B, L, S] (mean over heads) or [B, heads, L, S]

  static Mask default_mask() {
    Mask mask;
    mask.fill = -std::numeric_limits<float>::infinity();
    return mask;
  }
};

// Gradients of sum(output * grad_output): with respect to the three inputs, and to every
// parameter under the name parameters() lists. For self-attention (one tensor passed three
// times) the gradient with respect to that tensor is d_query + d_key + d_value.
struct MultiHeadGradients {
  Tensor3 d_query, d_key, d_value;
  std::vector<NamedTensor> d_parameters;
};

class MultiHeadAttention {
 public:
  // Throws std::invalid_argument if embed_dim <= 0, num_heads <= 0, num_heads does not divide
  // embed_dim, or kdim / vdim < 0. Parameters start as PyTorch initialises them (Xavier-uniform
  // projections, zero biases), drawn from a fixed seed so that runs are reproducible.
  explicit MultiHeadAttention(const MultiHeadConfig& config);

  const MultiHeadConfig& config() const { return config_; }
  Index head_dim() const { return config_.embed_dim / config_.num_heads; }
  // True when kdim == vdim == embed_dim: PyTorch then stores one packed in_proj_weight.
  bool packed() const;

  // The state-dict entries this configuration has, with their shapes: in_proj_weight [3E, E] (or
  // q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim]), in_proj_bias [3E],
  // out_proj.weight [E, E], out_proj.bias [E] (biases only when config.bias).
  std::vector<ParameterSpec> parameters() const;

  // Copies one parameter in, by its PyTorch name. Throws std::invalid_argument for an unknown
  // name or a shape other than the one parameters() lists.
  void set_parameter(std::string_view name, const float* data, const std::vector<Index>& shape);

  // All or nothing, as PyTorch's load_state_dict(strict=True): every entry parameters() lists
  // exactly once with its shape (data size = product of the shape), and no other. Throws
  // std::invalid_argument naming the entry (std::bad_alloc when memory runs out), leaving the
  // model unchanged.
  void load_state_dict(const std::vector<NamedTensor>& entries);

  // Re-draws the parameters as PyTorch's _reset_parameters does (Xavier-uniform in_proj,
  // U(-1/sqrt(E), 1/sqrt(E)) out_proj weight, zero biases) from `seed`.
  void reset_parameters(uint64_t seed);

  // The parameters under their PyTorch names, in the order parameters() lists them (copies).
  std::vector<NamedTensor> state_dict() const;

  // query [B, L, E], key [B, S, kdim], value [B, S, vdim] -> output [B, L, E].
  // weights, when non-null: [B, L, S] if average_attn_weights, else [B * heads, L, S].
  // Self-attention passes the same tensor three times; cross-attention passes key = value.
  void forward(ConstBatch query, ConstBatch key, ConstBatch value,
               const MultiHeadForwardOptions& options, MutableBatch output,
               const MutableBatch* weights = nullptr) const;

  // The same on owning tensors: output [B, L, E], and the weights when need_weights ([B, L, S]
  // averaged, or [B * heads, L, S]).
  AttentionResult forward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                          const MultiHeadForwardOptions& options = {},
                          bool need_weights = false) const;

  // An empty cache for incremental self-attention through this layer: batch rows of num_heads
  // heads, keys and values head_dim() wide, room for `capacity` positions before it grows.
  // Throws as KVCache's constructor does.
  KVCache create_cache(Index batch, Index capacity = 0) const;

  // Incremental (autoregressive) self-attention: the t new positions' query [B, t, E], key
  // [B, t, kdim] and value [B, t, vdim] (self-attention passes x three times) -> output
  // [B, t, E]. Projects the keys and values, appends them to `cache`, and attends causally: new
  // position i sees every position cached before and the new ones up to i, so feeding a
  // sequence in chunks gives forward() of the whole sequence with mask.causal. Throws
  // std::invalid_argument naming cache when it was not made by create_cache of this
  // configuration, and as forward() does for shapes (B must be the cache's batch); the cache is
  // unchanged after any error.
  void forward(ConstBatch query, ConstBatch key, ConstBatch value, KVCache& cache,
               MutableBatch output) const;
  Tensor3 forward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                  KVCache& cache) const;

  // The backward of forward(): grad_output [B, L, E]; options as the forward's (its masks).
  // Throws std::invalid_argument as forward() does, and when grad_output is not [B, L, E].
  MultiHeadGradients backward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                              const Tensor3& grad_output,
                              const MultiHeadForwardOptions& options = {}) const;

 private:
  // The weights as the attention chain (attention/multi_head_core.hpp) takes them.
  detail::MultiHeadWeights projections() const;
  void check_forward_arguments(ConstBatch query, ConstBatch key, ConstBatch value,
                               const MultiHeadForwardOptions& options) const;
  // Named in the order of parameters(), from the four weights and four biases given.
  std::vector<NamedTensor> named(const Matrix& w_q, const Matrix& w_k, const Matrix& w_v,
                                 const Matrix& w_out, const Vector& b_q, const Vector& b_k,
                                 const Vector& b_v, const Vector& b_out) const;

  MultiHeadConfig config_;
  detail::ProjectionWeight w_q_, w_k_, w_v_, w_out_;
  Vector b_q_, b_k_, b_v_, b_out_;  // zero when !config.bias
};

}  // namespace attn
