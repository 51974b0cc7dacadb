#pragma once
// The operations of CausalLM's layers on its parameters, shared by the training pass
// (causal_lm_pass.hpp) and cached decoding (causal_lm_decoder.hpp): the embedding, the norms, the
// projections, the MLP's activation, the heads' split and merge, and the logits. A backward adds
// its parameters' gradients into `gradients` (laid out like the values) and returns its input's.
// Activations are batch-major rows: [B * n, H] is [B, n, H]; heads are [B * heads, n, head_dim].

#include <vector>

#include "attn/causal_lm.hpp"
#include "models/causal_lm_parameters.hpp"

namespace attn::detail {

class CausalLMLayers {
 public:
  using Parameters = CausalLM::Parameters;

  CausalLMLayers(const CausalLMConfig& config, const Parameters& parameters);

  const CausalLMConfig& config() const { return config_; }
  const Parameters& parameters() const { return p_; }
  Index heads() const { return heads_; }
  Index kv_heads() const { return kv_heads_; }
  Index head_dim() const { return head_dim_; }

  // tokens [B, n] at positions first .. first + n - 1: their embeddings, plus the learned
  // positions' rows when the model has them.
  Matrix embed(TokenBatch tokens, Index first) const;
  void embed_backward(TokenBatch tokens, const Matrix& dx, float* gradients) const;

  Matrix norm(const Parameters::Norm& ids, const Matrix& x) const;
  Matrix norm_backward(const Parameters::Norm& ids, const Matrix& x, const Matrix& dy,
                       float* gradients) const;

  Matrix project(const Parameters::Projection& ids, const Matrix& x) const;
  // Several projections of x, their outputs side by side (queries, keys and values; gate and up).
  Matrix project_all(const std::vector<Parameters::Projection>& projections, const Matrix& x) const;
  Matrix project_all_backward(const std::vector<Parameters::Projection>& projections,
                              const Matrix& x, const Matrix& dy, float* gradients) const;

  // The MLP's activation of its first layer's output (GELU, or SwiGLU of gate and up).
  Matrix activate(const Matrix& up) const;
  Matrix activate_backward(const Matrix& up, const Matrix& dhidden) const;

  // Multiplies head h's slices of t [batch * heads, rows, cols] by factors[h] (a layer's part of
  // a head mask), skipping the heads whose factor is 1.
  void scale_heads(Tensor3& t, const float* factors) const;

  // Columns [first, first + heads * head_dim) of rows [B * n, C] as [B * heads, n, head_dim],
  // and back into columns from `first` of rows.
  Tensor3 split(const Matrix& rows, Index first, Index batch, Index heads) const;
  void merge(const Tensor3& split, Index first, Index batch, Matrix& rows) const;

  // The first columns of the queries, keys and values side by side.
  Index query_column() const { return 0; }
  Index key_column() const { return heads_ * head_dim_; }
  Index value_column() const { return (heads_ + kv_heads_) * head_dim_; }
  Index qkv_width() const { return (heads_ + 2 * kv_heads_) * head_dim_; }

  // normed [rows, H] -> logits [rows, vocab] through the (tied) unembedding.
  Matrix logits(const Matrix& normed) const;

  // Packs every projection's weight and the unembedding once into the GEMM's panels
  // (kernels/gemm.hpp), for a caller that multiplies by them many times: decoding's products of
  // one row each, which spent three quarters of their time packing. The same panels and kernel
  // as packing per product, so the results are the same bits.
  void pack_weights();

 private:
  // x times the weight of parameter `id` (x W, or x W^T when stored [out, in]), `out` columns.
  Matrix multiply(Index id, bool in_out, Index out, const Matrix& x) const;

  const CausalLMConfig& config_;
  const Parameters& p_;
  const float* values_;
  Index heads_, kv_heads_, head_dim_;
  std::vector<std::vector<float>> packed_;  // by parameter id after pack_weights(), else empty
};

}  // namespace attn::detail
