#include "causal_lm_layers.hpp"

#include "attn/activations.hpp"
#include "attn/embedding.hpp"
#include "attn/layer_norm.hpp"
#include "attn/rms_norm.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn::detail {

CausalLMLayers::CausalLMLayers(const CausalLMConfig& config, const Parameters& parameters)
    : config_(config),
      p_(parameters),
      values_(parameters.values.data()),
      heads_(config.num_heads),
      kv_heads_(config.num_kv_heads ? config.num_kv_heads : config.num_heads),
      head_dim_(config.hidden_size / config.num_heads) {}

Matrix CausalLMLayers::embed(TokenBatch tokens, Index first) const {
  Matrix x = embedding(p_.matrix(values_, p_.embedding), tokens.data, tokens.batch * tokens.steps,
                       "tokens");
  if (p_.positions >= 0) {
    const ConstMatrixMap table = p_.matrix(values_, p_.positions);
    for (Index b = 0; b < tokens.batch; ++b) {
      x.middleRows(b * tokens.steps, tokens.steps) += table.middleRows(first, tokens.steps);
    }
  }
  return x;
}

void CausalLMLayers::embed_backward(TokenBatch tokens, const Matrix& dx, float* gradients) const {
  embedding_backward(tokens.data, tokens.batch * tokens.steps, dx,
                     p_.matrix(gradients, p_.embedding));
  if (p_.positions < 0) return;
  MatrixMap dtable = p_.matrix(gradients, p_.positions);
  for (Index b = 0; b < tokens.batch; ++b) {
    dtable.topRows(tokens.steps) += dx.middleRows(b * tokens.steps, tokens.steps);
  }
}

Matrix CausalLMLayers::norm(const Parameters::Norm& ids, const Matrix& x) const {
  const auto weight = p_.vector(values_, ids.weight);
  if (ids.bias < 0) return rms_norm(x, weight, config_.norm_eps);
  return layer_norm(x, weight, p_.vector(values_, ids.bias), config_.norm_eps);
}

Matrix CausalLMLayers::norm_backward(const Parameters::Norm& ids, const Matrix& x, const Matrix& dy,
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

Matrix CausalLMLayers::project(const Parameters::Projection& ids, const Matrix& x) const {
  if (packed_.empty()) return p_.project(values_, ids, x);
  Matrix y = multiply(ids.weight, ids.in_out, ids.out, x);
  if (ids.bias >= 0) add_bias_rows(y, p_.data(values_, ids.bias));
  return y;
}

Matrix CausalLMLayers::multiply(Index id, bool in_out, Index out, const Matrix& x) const {
  if (!packed_.empty()) return matmul_transposed_packed(x, packed_[static_cast<size_t>(id)], out);
  const ConstMatrixMap w = p_.matrix(values_, id);
  return in_out ? matmul(x, w) : matmul_transposed(x, w);
}

void CausalLMLayers::pack_weights() {
  packed_.assign(p_.specs.size(), {});
  auto pack_one = [&](Index id, bool in_out) {
    const ConstMatrixMap w = p_.matrix(values_, id);
    packed_[static_cast<size_t>(id)] = in_out ? pack(w) : pack_transposed(w);
  };
  for (const Parameters::Layer& layer : p_.layers) {
    for (const auto& projection : layer.qkv) pack_one(projection.weight, projection.in_out);
    pack_one(layer.out.weight, layer.out.in_out);
    for (const auto& projection : layer.up) pack_one(projection.weight, projection.in_out);
    if (!layer.up.empty()) pack_one(layer.down.weight, layer.down.in_out);
  }
  pack_one(p_.unembedding, false);
}

Matrix CausalLMLayers::project_all(const std::vector<Parameters::Projection>& projections,
                                   const Matrix& x) const {
  if (projections.size() == 1) return project(projections[0], x);
  Index width = 0;
  for (const auto& projection : projections) width += projection.out;
  Matrix y(x.rows(), width);
  Index column = 0;
  for (const auto& projection : projections) {
    y.middleCols(column, projection.out) = project(projection, x);
    column += projection.out;
  }
  return y;
}

Matrix CausalLMLayers::project_all_backward(const std::vector<Parameters::Projection>& projections,
                                            const Matrix& x, const Matrix& dy,
                                            float* gradients) const {
  // Each projection reads its own columns of dy in place; the first's dx is the sum's start.
  const auto part = [&](size_t i, Index column) {
    return p_.project_backward(values_, projections[i], x,
                               dy.middleCols(column, projections[i].out), gradients);
  };
  Matrix dx = part(0, 0);
  Index column = projections[0].out;
  for (size_t i = 1; i < projections.size(); ++i) {
    dx += part(i, column);
    column += projections[i].out;
  }
  return dx;
}

Matrix CausalLMLayers::activate(const Matrix& up) const {
  return config_.mlp == MlpKind::SwiGlu ? swiglu(up) : gelu_tanh(up);
}

Matrix CausalLMLayers::activate_backward(const Matrix& up, const Matrix& dhidden) const {
  return config_.mlp == MlpKind::SwiGlu ? swiglu_backward(up, dhidden)
                                        : gelu_tanh_backward(up, dhidden);
}

void CausalLMLayers::scale_heads(Tensor3& t, const float* factors) const {
  const auto size = static_cast<size_t>(t.rows * t.cols);
  for (Index slice = 0; slice < t.batch; ++slice) {
    const float factor = factors[slice % heads()];
    if (factor == 1.0f) continue;
    float* begin = t.data.data() + static_cast<size_t>(slice) * size;
    for (float* x = begin; x != begin + size; ++x) *x *= factor;
  }
}

Tensor3 CausalLMLayers::split(const Matrix& rows, Index first, Index batch, Index heads) const {
  const Index steps = rows.rows() / batch;
  Tensor3 out(batch * heads, steps, head_dim_);
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      out.view()[b * heads + h] = rows.block(b * steps, first + h * head_dim_, steps, head_dim_);
    }
  }
  return out;
}

void CausalLMLayers::merge(const Tensor3& split, Index first, Index batch, Matrix& rows) const {
  const Index heads = split.batch / batch, steps = split.rows;
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      rows.block(b * steps, first + h * head_dim_, steps, head_dim_) = split.view()[b * heads + h];
    }
  }
}

Matrix CausalLMLayers::logits(const Matrix& normed) const {
  return multiply(p_.unembedding, false, config_.vocab_size, normed);
}

}  // namespace attn::detail
