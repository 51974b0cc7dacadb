#pragma once
// One pass of CausalLM over a batch of token ids, kept for its backward. Inputs are checked by
// the caller (CausalLM). Activations are batch-major rows: [B * T, H] is [B, T, H]; the heads'
// queries, keys and values are [B * heads, T, head_dim] ([B, heads, T, head_dim]).

#include <vector>

#include "attn/attention.hpp"
#include "models/causal_lm_layers.hpp"
#include "models/dropout_sites.hpp"

namespace attn::detail {

class CausalLMPass {
 public:
  // `dropout` at the sites attn/causal_lm.hpp numbers; `attention`, when non-null, receives each
  // layer's attention weights [B * heads, T, T] (before dropout); `head_mask`, when non-null,
  // [layers, heads] factors on them (forward only: backward() needs a pass without one).
  CausalLMPass(const CausalLMConfig& config, const CausalLM::Parameters& parameters,
               TokenBatch tokens, const DropoutSites& dropout,
               std::vector<Tensor3>* attention = nullptr, const float* head_mask = nullptr);

  const Matrix& logits() const { return logits_; }  // [B * T, vocab]

  // dlogits [B * T, vocab]; adds every parameter's gradient into `gradients`.
  void backward(const Matrix& dlogits, float* gradients) const;

 private:
  using Layer = CausalLM::Parameters::Layer;

  struct LayerRun {
    Matrix input;                // the residual stream entering the layer
    Matrix normed1;              // norm1(input)
    Tensor3 q, k, v;             // the heads, rotated when rotary
    Matrix merged;               // the heads' outputs side by side, [B * T, H]
    Matrix middle;               // input + attention
    Matrix normed2, up, hidden;  // norm2(middle), the MLP's first layer, its activation
  };

  // Layer l's attention; head_mask: its factor per head, or nullptr.
  void attention_layer(Index l, LayerRun& run, Tensor3* weights, const float* head_mask) const;
  // Returns d input of layer l given d output.
  Matrix layer_backward(Index l, const LayerRun& run, Matrix dx, float* gradients) const;
  // Layer l's attention options: attention_ with the layer's dropout on the weights.
  AttentionOptions attention_options(Index l) const;
  // x after dropout at `site` (x itself when nothing drops); also its own backward.
  Matrix dropped(Matrix x, Index site) const;

  CausalLMLayers layers_;
  TokenBatch tokens_;
  DropoutSites dropout_;
  AttentionOptions attention_;
  bool masked_ = false;  // a head mask scaled the heads: no backward
  std::vector<LayerRun> runs_;
  Matrix output_;  // the residual stream after the last layer
  Matrix normed_;  // final_norm(output_)
  Matrix logits_;
};

}  // namespace attn::detail
