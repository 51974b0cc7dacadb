#include "causal_lm_pass.hpp"

#include <cmath>

#include "attn/activations.hpp"
#include "attn/embedding.hpp"
#include "attn/layer_norm.hpp"
#include "attn/rms_norm.hpp"
#include "attn/rotary.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn::detail {

namespace {

using LMParameters = CausalLM::Parameters;

// Columns [first, first + heads * head_dim) of rows [B * T, C] as heads [B * heads, T, head_dim].
Tensor3 heads_of(const Matrix& rows, Index first, Index batch, Index heads, Index head_dim) {
  const Index steps = rows.rows() / batch;
  Tensor3 out(batch * heads, steps, head_dim);
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      out.view()[b * heads + h] = rows.block(b * steps, first + h * head_dim, steps, head_dim);
    }
  }
  return out;
}

// The inverse of heads_of: heads [B * heads, T, head_dim] into columns from `first` of rows.
void rows_of(const Tensor3& heads_tensor, Index first, Index batch, Matrix& rows) {
  const Index heads = heads_tensor.batch / batch, steps = heads_tensor.rows;
  const Index head_dim = heads_tensor.cols;
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      rows.block(b * steps, first + h * head_dim, steps, head_dim) =
          heads_tensor.view()[b * heads + h];
    }
  }
}

RotaryOptions rotary_of(const CausalLMConfig& config) {
  RotaryOptions options;
  options.base = config.rotary_base;
  return options;
}

}  // namespace

CausalLMPass::CausalLMPass(const CausalLMConfig& config, const LMParameters& parameters,
                           TokenBatch tokens, std::vector<Tensor3>* attention)
    : config_(config),
      p_(parameters),
      values_(parameters.values.data()),
      tokens_(tokens),
      heads_(config.num_heads),
      kv_heads_(config.num_kv_heads ? config.num_kv_heads : config.num_heads),
      head_dim_(config.hidden_size / config.num_heads) {
  attention_.heads = heads_;
  attention_.kv_heads = kv_heads_;
  attention_.mask.causal = true;
  if (config.window > 0) attention_.mask.window_left = config.window - 1;

  const Index rows = tokens.batch * tokens.steps;
  Matrix x = embedding(p_.matrix(values_, p_.embedding), tokens.data, rows, "tokens");
  if (p_.positions >= 0) {
    const ConstMatrixMap table = p_.matrix(values_, p_.positions);
    for (Index b = 0; b < tokens.batch; ++b) {
      x.middleRows(b * tokens.steps, tokens.steps) += table.topRows(tokens.steps);
    }
  }
  if (attention) attention->assign(p_.layers.size(), Tensor3());
  layers_.resize(p_.layers.size());
  for (size_t l = 0; l < p_.layers.size(); ++l) {
    const LMParameters::Layer& ids = p_.layers[l];
    LayerRun& run = layers_[l];
    run.input = std::move(x);
    run.normed1 = norm(ids.norm1, run.input);
    attend(ids, run, attention ? &(*attention)[l] : nullptr);
    run.middle = run.input + p_.project(values_, ids.out, run.merged);
    if (ids.up.empty()) {
      x = run.middle;
      continue;
    }
    run.normed2 = norm(ids.norm2, run.middle);
    run.up = project_all(ids.up, run.normed2);
    run.hidden = config_.mlp == MlpKind::SwiGlu ? swiglu(run.up) : gelu_tanh(run.up);
    x = run.middle + p_.project(values_, ids.down, run.hidden);
  }
  output_ = std::move(x);
  normed_ = norm(p_.final_norm, output_);
  logits_ = matmul_transposed(normed_, p_.matrix(values_, p_.unembedding));
}

void CausalLMPass::attend(const LMParameters::Layer& ids, LayerRun& run, Tensor3* weights) const {
  const Matrix qkv = project_all(ids.qkv, run.normed1);
  const Index batch = tokens_.batch, steps = tokens_.steps;
  run.q = heads_of(qkv, 0, batch, heads_, head_dim_);
  run.k = heads_of(qkv, heads_ * head_dim_, batch, kv_heads_, head_dim_);
  run.v = heads_of(qkv, (heads_ + kv_heads_) * head_dim_, batch, kv_heads_, head_dim_);
  if (config_.positions == PositionKind::Rotary) {
    apply_rotary(run.q.view(), heads_, rotary_of(config_), run.q.view());
    apply_rotary(run.k.view(), kv_heads_, rotary_of(config_), run.k.view());
  }
  Tensor3 out(batch * heads_, steps, head_dim_);
  MutableBatch weight_view;
  if (weights) {
    *weights = Tensor3(batch * heads_, steps, steps);
    weight_view = weights->view();
  }
  scaled_dot_product_attention(run.q.view(), run.k.view(), run.v.view(), attention_, out.view(),
                               weights ? &weight_view : nullptr);
  run.merged = Matrix(batch * steps, heads_ * head_dim_);
  rows_of(out, 0, batch, run.merged);
}

Matrix CausalLMPass::norm(const LMParameters::Norm& ids, const Matrix& x) const {
  const auto weight = p_.vector(values_, ids.weight);
  if (ids.bias < 0) return rms_norm(x, weight, config_.norm_eps);
  return layer_norm(x, weight, p_.vector(values_, ids.bias), config_.norm_eps);
}

Matrix CausalLMPass::norm_backward(const LMParameters::Norm& ids, const Matrix& x, const Matrix& dy,
                                   float* gradients) const {
  const auto weight = p_.vector(values_, ids.weight);
  if (ids.bias < 0) {
    RmsNormGradients g = rms_norm_backward(x, weight, dy, config_.norm_eps);
    p_.vector(gradients, ids.weight) += g.dweight;
    return std::move(g.dx);
  }
  LayerNormGradients g = layer_norm_backward(x, weight, dy, config_.norm_eps);
  p_.vector(gradients, ids.weight) += g.dweight;
  p_.vector(gradients, ids.bias) += g.dbias;
  return std::move(g.dx);
}

Matrix CausalLMPass::project_all(const std::vector<LMParameters::Projection>& projections,
                                 const Matrix& x) const {
  if (projections.size() == 1) return p_.project(values_, projections[0], x);
  Index width = 0;
  for (const auto& projection : projections) width += projection.out;
  Matrix y(x.rows(), width);
  Index column = 0;
  for (const auto& projection : projections) {
    y.middleCols(column, projection.out) = p_.project(values_, projection, x);
    column += projection.out;
  }
  return y;
}

Matrix CausalLMPass::project_all_backward(const std::vector<LMParameters::Projection>& projections,
                                          const Matrix& x, const Matrix& dy,
                                          float* gradients) const {
  Matrix dx = Matrix::Zero(x.rows(), x.cols());
  Index column = 0;
  for (const auto& projection : projections) {
    const Matrix part = dy.middleCols(column, projection.out);
    dx += p_.project_backward(values_, projection, x, part, gradients);
    column += projection.out;
  }
  return dx;
}

Matrix CausalLMPass::layer_backward(const LMParameters::Layer& ids, const LayerRun& run, Matrix dx,
                                    float* gradients) const {
  if (!ids.up.empty()) {
    const Matrix dhidden = p_.project_backward(values_, ids.down, run.hidden, dx, gradients);
    const Matrix dup = config_.mlp == MlpKind::SwiGlu ? swiglu_backward(run.up, dhidden)
                                                      : gelu_tanh_backward(run.up, dhidden);
    const Matrix dnormed2 = project_all_backward(ids.up, run.normed2, dup, gradients);
    dx += norm_backward(ids.norm2, run.middle, dnormed2, gradients);
  }
  const Index batch = tokens_.batch;
  const Matrix dmerged = p_.project_backward(values_, ids.out, run.merged, dx, gradients);
  const Tensor3 dout = heads_of(dmerged, 0, batch, heads_, head_dim_);
  AttentionGradients g =
      scaled_dot_product_attention_backward(run.q, run.k, run.v, dout, attention_);
  if (config_.positions == PositionKind::Rotary) {
    apply_rotary_backward(g.dq.view(), heads_, rotary_of(config_), g.dq.view());
    apply_rotary_backward(g.dk.view(), kv_heads_, rotary_of(config_), g.dk.view());
  }
  Matrix dqkv(dx.rows(), (heads_ + 2 * kv_heads_) * head_dim_);
  rows_of(g.dq, 0, batch, dqkv);
  rows_of(g.dk, heads_ * head_dim_, batch, dqkv);
  rows_of(g.dv, (heads_ + kv_heads_) * head_dim_, batch, dqkv);
  const Matrix dnormed1 = project_all_backward(ids.qkv, run.normed1, dqkv, gradients);
  dx += norm_backward(ids.norm1, run.input, dnormed1, gradients);
  return dx;
}

void CausalLMPass::backward(const Matrix& dlogits, float* gradients) const {
  // logits = normed W^T: dW += dlogits^T normed, dnormed = dlogits W.
  accumulate_weight_gradient(dlogits, normed_, p_.matrix(gradients, p_.unembedding), nullptr);
  const Matrix dnormed = matmul(dlogits, p_.matrix(values_, p_.unembedding));
  Matrix dx = norm_backward(p_.final_norm, output_, dnormed, gradients);
  for (size_t l = p_.layers.size(); l-- > 0;) {
    dx = layer_backward(p_.layers[l], layers_[l], std::move(dx), gradients);
  }
  const Index rows = tokens_.batch * tokens_.steps;
  embedding_backward(tokens_.data, rows, dx, p_.matrix(gradients, p_.embedding));
  if (p_.positions >= 0) {
    MatrixMap dtable = p_.matrix(gradients, p_.positions);
    for (Index b = 0; b < tokens_.batch; ++b) {
      dtable.topRows(tokens_.steps) += dx.middleRows(b * tokens_.steps, tokens_.steps);
    }
  }
}

}  // namespace attn::detail
