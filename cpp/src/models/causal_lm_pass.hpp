#pragma once
// One pass of CausalLM over a batch of token ids, kept for its backward. Inputs are checked by
// the caller (CausalLM). Activations are batch-major rows: [B * T, H] is [B, T, H]; the heads'
// queries, keys and values are [B * heads, T, head_dim] ([B, heads, T, head_dim]).

#include <vector>

#include "attn/attention.hpp"
#include "attn/causal_lm.hpp"
#include "models/causal_lm_parameters.hpp"

namespace attn::detail {

class CausalLMPass {
 public:
  // `attention`, when non-null, receives each layer's attention weights [B * heads, T, T].
  CausalLMPass(const CausalLMConfig& config, const CausalLM::Parameters& parameters,
               TokenBatch tokens, std::vector<Tensor3>* attention = nullptr);

  const Matrix& logits() const { return logits_; }  // [B * T, vocab]

  // dlogits [B * T, vocab]; adds every parameter's gradient into `gradients`.
  void backward(const Matrix& dlogits, float* gradients) const;

 private:
  struct LayerRun {
    Matrix input;                // the residual stream entering the layer
    Matrix normed1;              // norm1(input)
    Tensor3 q, k, v;             // the heads, rotated when rotary
    Matrix merged;               // the heads' outputs side by side, [B * T, H]
    Matrix middle;               // input + attention
    Matrix normed2, up, hidden;  // norm2(middle), the MLP's first layer, its activation
  };

  Matrix norm(const CausalLM::Parameters::Norm& ids, const Matrix& x) const;
  Matrix norm_backward(const CausalLM::Parameters::Norm& ids, const Matrix& x, const Matrix& dy,
                       float* gradients) const;
  Matrix project_all(const std::vector<CausalLM::Parameters::Projection>& projections,
                     const Matrix& x) const;
  Matrix project_all_backward(const std::vector<CausalLM::Parameters::Projection>& projections,
                              const Matrix& x, const Matrix& dy, float* gradients) const;
  void attend(const CausalLM::Parameters::Layer& ids, LayerRun& run, Tensor3* weights) const;
  // Returns d input of the layer given d output.
  Matrix layer_backward(const CausalLM::Parameters::Layer& ids, const LayerRun& run, Matrix dx,
                        float* gradients) const;

  const CausalLMConfig& config_;
  const CausalLM::Parameters& p_;
  const float* values_;
  TokenBatch tokens_;
  Index heads_, kv_heads_, head_dim_;
  AttentionOptions attention_;
  std::vector<LayerRun> layers_;
  Matrix output_;  // the residual stream after the last layer
  Matrix normed_;  // final_norm(output_)
  Matrix logits_;
};

}  // namespace attn::detail
