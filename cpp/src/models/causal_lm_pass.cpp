#include "causal_lm_pass.hpp"

#include <stdexcept>

#include "attn/dropout.hpp"
#include "attn/rotary.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn::detail {

namespace {

RotaryOptions rotary_of(const CausalLMConfig& config) {
  RotaryOptions options;
  options.base = config.rotary_base;
  return options;
}

// The dropout sites attn/causal_lm.hpp numbers: the embeddings', then three per layer.
constexpr Index kEmbeddingSite = 0;
Index weights_site(Index layer) { return 1 + 3 * layer; }
Index attention_output_site(Index layer) { return 2 + 3 * layer; }
Index mlp_output_site(Index layer) { return 3 + 3 * layer; }

}  // namespace

CausalLMPass::CausalLMPass(const CausalLMConfig& config, const CausalLM::Parameters& parameters,
                           TokenBatch tokens, const DropoutSites& dropout,
                           std::vector<Tensor3>* attention, const float* head_mask)
    : layers_(config, parameters),
      tokens_(tokens),
      dropout_(dropout),
      masked_(head_mask != nullptr) {
  attention_.heads = layers_.heads();
  attention_.kv_heads = layers_.kv_heads();
  attention_.mask.causal = true;
  if (config.window > 0) attention_.mask.window_left = config.window - 1;

  const std::vector<Layer>& ids = parameters.layers;
  Matrix x = dropped(layers_.embed(tokens, 0), kEmbeddingSite);
  if (attention) attention->assign(ids.size(), Tensor3());
  runs_.resize(ids.size());
  for (size_t l = 0; l < ids.size(); ++l) {
    LayerRun& run = runs_[l];
    run.input = std::move(x);
    run.normed1 = layers_.norm(ids[l].norm1, run.input);
    const auto layer = static_cast<Index>(l);
    attention_layer(layer, run, attention ? &(*attention)[l] : nullptr,
                    head_mask ? head_mask + layer * layers_.heads() : nullptr);
    run.middle =
        run.input + dropped(layers_.project(ids[l].out, run.merged), attention_output_site(layer));
    if (ids[l].up.empty()) {
      x = run.middle;
      continue;
    }
    run.normed2 = layers_.norm(ids[l].norm2, run.middle);
    run.up = layers_.project_all(ids[l].up, run.normed2);
    run.hidden = layers_.activate(run.up);
    x = run.middle + dropped(layers_.project(ids[l].down, run.hidden), mlp_output_site(layer));
  }
  output_ = std::move(x);
  normed_ = layers_.norm(parameters.final_norm, output_);
  logits_ = layers_.logits(normed_);
}

AttentionOptions CausalLMPass::attention_options(Index l) const {
  AttentionOptions options = attention_;
  const DropoutOptions weights = dropout_.at(weights_site(l));
  options.dropout = weights.probability;
  options.seed = weights.seed;
  return options;
}

Matrix CausalLMPass::dropped(Matrix x, Index site) const {
  return dropout_.active() ? attn::dropout(x, dropout_.at(site)) : x;
}

void CausalLMPass::attention_layer(Index l, LayerRun& run, Tensor3* weights,
                                   const float* head_mask) const {
  const Layer& ids = layers_.parameters().layers[static_cast<size_t>(l)];
  const Matrix qkv = layers_.project_all(ids.qkv, run.normed1);
  const Index batch = tokens_.batch, steps = tokens_.steps;
  const Index heads = layers_.heads(), kv_heads = layers_.kv_heads();
  run.q = layers_.split(qkv, layers_.query_column(), batch, heads);
  run.k = layers_.split(qkv, layers_.key_column(), batch, kv_heads);
  run.v = layers_.split(qkv, layers_.value_column(), batch, kv_heads);
  if (layers_.config().positions == PositionKind::Rotary) {
    apply_rotary(run.q.view(), heads, rotary_of(layers_.config()), run.q.view());
    apply_rotary(run.k.view(), kv_heads, rotary_of(layers_.config()), run.k.view());
  }
  Tensor3 out(batch * heads, steps, layers_.head_dim());
  MutableBatch weight_view;
  if (weights) {
    *weights = Tensor3(batch * heads, steps, steps);
    weight_view = weights->view();
  }
  scaled_dot_product_attention(run.q.view(), run.k.view(), run.v.view(), attention_options(l),
                               out.view(), weights ? &weight_view : nullptr);
  // Scaling a head's weights by m scales its output by m: the kernel's own rows, scaled after.
  if (head_mask) {
    layers_.scale_heads(out, head_mask);
    if (weights) layers_.scale_heads(*weights, head_mask);
  }
  run.merged = Matrix(batch * steps, heads * layers_.head_dim());
  layers_.merge(out, 0, batch, run.merged);
}

Matrix CausalLMPass::layer_backward(Index l, const LayerRun& run, Matrix dx,
                                    float* gradients) const {
  const CausalLM::Parameters& p = layers_.parameters();
  const Layer& ids = p.layers[static_cast<size_t>(l)];
  const float* values = p.values.data();
  if (!ids.up.empty()) {
    const Matrix dhidden = p.project_backward(values, ids.down, run.hidden,
                                              dropped(dx, mlp_output_site(l)), gradients);
    const Matrix dup = layers_.activate_backward(run.up, dhidden);
    const Matrix dnormed2 = layers_.project_all_backward(ids.up, run.normed2, dup, gradients);
    dx += layers_.norm_backward(ids.norm2, run.middle, dnormed2, gradients);
  }
  const Index batch = tokens_.batch, heads = layers_.heads(), kv_heads = layers_.kv_heads();
  const Matrix dmerged = p.project_backward(values, ids.out, run.merged,
                                            dropped(dx, attention_output_site(l)), gradients);
  const Tensor3 dout = layers_.split(dmerged, 0, batch, heads);
  AttentionGradients g =
      scaled_dot_product_attention_backward(run.q, run.k, run.v, dout, attention_options(l));
  if (layers_.config().positions == PositionKind::Rotary) {
    apply_rotary_backward(g.dq.view(), heads, rotary_of(layers_.config()), g.dq.view());
    apply_rotary_backward(g.dk.view(), kv_heads, rotary_of(layers_.config()), g.dk.view());
  }
  Matrix dqkv(dx.rows(), layers_.qkv_width());
  layers_.merge(g.dq, layers_.query_column(), batch, dqkv);
  layers_.merge(g.dk, layers_.key_column(), batch, dqkv);
  layers_.merge(g.dv, layers_.value_column(), batch, dqkv);
  const Matrix dnormed1 = layers_.project_all_backward(ids.qkv, run.normed1, dqkv, gradients);
  dx += layers_.norm_backward(ids.norm1, run.input, dnormed1, gradients);
  return dx;
}

void CausalLMPass::backward(const Matrix& dlogits, float* gradients) const {
  if (masked_) throw std::logic_error("CausalLMPass::backward: the pass had a head mask");
  const CausalLM::Parameters& p = layers_.parameters();
  // logits = normed W^T: dW += dlogits^T normed, dnormed = dlogits W.
  accumulate_weight_gradient(dlogits, normed_, p.matrix(gradients, p.unembedding), nullptr);
  const Matrix dnormed = matmul(dlogits, p.matrix(p.values.data(), p.unembedding));
  Matrix dx = layers_.norm_backward(p.final_norm, output_, dnormed, gradients);
  for (size_t l = p.layers.size(); l-- > 0;) {
    dx = layer_backward(static_cast<Index>(l), runs_[l], std::move(dx), gradients);
  }
  layers_.embed_backward(tokens_, dropped(std::move(dx), kEmbeddingSite), gradients);
}

}  // namespace attn::detail
