#include "causal_lm_parameters.hpp"

#include <cmath>

#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"
#include "models/model_inputs.hpp"

namespace attn {

namespace {

Index kv_heads_of(const CausalLMConfig& c) { return c.num_kv_heads ? c.num_kv_heads : c.num_heads; }

}  // namespace

detail::CausalLMParameters::CausalLMParameters(const CausalLMConfig& c) {
  const Index H = c.hidden_size;
  const bool gpt2 = c.format == CheckpointFormat::Gpt2;
  const bool layer_norm = c.norm == NormKind::Layer;
  const std::string model = gpt2 ? "transformer." : "model.";
  embedding = add(model + (gpt2 ? "wte.weight" : "embed_tokens.weight"), {c.vocab_size, H});
  if (c.positions == PositionKind::Learned) {
    positions = add(model + "wpe.weight", {c.max_positions, H});
  }
  for (Index i = 0; i < c.num_layers; ++i) {
    const std::string prefix = model + (gpt2 ? "h." : "layers.") + std::to_string(i) + ".";
    if (gpt2) {
      add_gpt2_layer(prefix, c);
    } else {
      add_llama_layer(prefix, c);
    }
  }
  final_norm = add_norm(model + (gpt2 ? "ln_f" : "norm"), H, layer_norm);
  unembedding_name = "lm_head.weight";
  unembedding = c.tie_embeddings ? embedding : add(unembedding_name, {c.vocab_size, H});
  allocate();
  initialise(c);
}

// GPT2Block's order: ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj.
void CausalLM::Parameters::add_gpt2_layer(const std::string& prefix, const CausalLMConfig& c) {
  const Index H = c.hidden_size, head_dim = H / c.num_heads;
  const bool layer_norm = c.norm == NormKind::Layer;
  Layer layer;
  layer.norm1 = add_norm(prefix + "ln_1", H, layer_norm);
  const Index qkv = (c.num_heads + 2 * kv_heads_of(c)) * head_dim;
  layer.qkv = {add_projection(prefix + "attn.c_attn", H, qkv, true, c.bias)};
  layer.out = add_projection(prefix + "attn.c_proj", H, H, true, c.bias);
  if (c.intermediate_size > 0) {
    layer.norm2 = add_norm(prefix + "ln_2", H, layer_norm);
    layer.up = {add_projection(prefix + "mlp.c_fc", H, c.intermediate_size, true, c.bias)};
    layer.down = add_projection(prefix + "mlp.c_proj", c.intermediate_size, H, true, c.bias);
  }
  layers.push_back(layer);
}

// LlamaDecoderLayer's order: self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj,
// input_layernorm, post_attention_layernorm.
void CausalLM::Parameters::add_llama_layer(const std::string& prefix, const CausalLMConfig& c) {
  const Index H = c.hidden_size, head_dim = H / c.num_heads, I = c.intermediate_size;
  const Index kv = kv_heads_of(c) * head_dim;
  const bool layer_norm = c.norm == NormKind::Layer;
  Layer layer;
  layer.qkv = {add_projection(prefix + "self_attn.q_proj", H, H, false, c.bias),
               add_projection(prefix + "self_attn.k_proj", H, kv, false, c.bias),
               add_projection(prefix + "self_attn.v_proj", H, kv, false, c.bias)};
  layer.out = add_projection(prefix + "self_attn.o_proj", H, H, false, c.bias);
  if (I > 0) {
    if (c.mlp == MlpKind::SwiGlu) {
      layer.up.push_back(add_projection(prefix + "mlp.gate_proj", H, I, false, c.bias));
    }
    layer.up.push_back(add_projection(prefix + "mlp.up_proj", H, I, false, c.bias));
    layer.down = add_projection(prefix + "mlp.down_proj", I, H, false, c.bias);
  }
  layer.norm1 = add_norm(prefix + "input_layernorm", H, layer_norm);
  if (I > 0) layer.norm2 = add_norm(prefix + "post_attention_layernorm", H, layer_norm);
  layers.push_back(layer);
}

CausalLM::Parameters::Projection CausalLM::Parameters::add_projection(const std::string& name,
                                                                      Index in, Index out,
                                                                      bool in_out, bool bias) {
  Projection p;
  p.in_out = in_out;
  p.out = out;
  p.weight =
      add(name + ".weight", in_out ? std::vector<Index>{in, out} : std::vector<Index>{out, in});
  if (bias) p.bias = add(name + ".bias", {out});
  return p;
}

CausalLM::Parameters::Norm CausalLM::Parameters::add_norm(const std::string& name, Index size,
                                                          bool bias) {
  Norm n;
  n.weight = add(name + ".weight", {size});
  if (bias) n.bias = add(name + ".bias", {size});
  return n;
}

// GPT-2's _init_weights: weights and embeddings N(0, 0.02^2), the projections back into the
// residual stream (c_proj, o_proj, down_proj) N(0, (0.02 / sqrt(2 layers))^2), biases 0, norm
// weights 1; drawn in state-dict order.
void CausalLM::Parameters::initialise(const CausalLMConfig& c) {
  detail::Initializer init(c.seed);
  std::vector<bool> residual(specs.size(), false);
  for (const Layer& layer : layers) {
    residual[static_cast<size_t>(layer.out.weight)] = true;
    if (layer.down.weight >= 0) residual[static_cast<size_t>(layer.down.weight)] = true;
  }
  std::vector<bool> norm_weight(specs.size(), false);
  for (const Layer& layer : layers) {
    norm_weight[static_cast<size_t>(layer.norm1.weight)] = true;
    if (layer.norm2.weight >= 0) norm_weight[static_cast<size_t>(layer.norm2.weight)] = true;
  }
  norm_weight[static_cast<size_t>(final_norm.weight)] = true;
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.num_layers));
  for (size_t id = 0; id < specs.size(); ++id) {
    float* w = data(values.data(), static_cast<Index>(id));
    const Index n = detail::element_count(specs[id].shape);
    if (norm_weight[id]) {
      init.fill(w, n, 1.0f);
    } else if (specs[id].shape.size() == 1) {
      init.fill(w, n, 0.0f);  // biases, LayerNorm's bias
    } else {
      init.normal(w, n);
      const float std = static_cast<float>(residual[id] ? residual_std : 0.02);
      for (Index i = 0; i < n; ++i) w[i] *= std;
    }
  }
}

Matrix CausalLM::Parameters::project(const float* base, const Projection& p,
                                     const MatrixRef& x) const {
  const ConstMatrixMap w = matrix(base, p.weight);
  Matrix y = p.in_out ? detail::matmul(x, w) : detail::matmul_transposed(x, w);
  if (p.bias >= 0) detail::add_bias_rows(y, data(base, p.bias));
  return y;
}

Matrix CausalLM::Parameters::project_backward(const float* base, const Projection& p,
                                              const MatrixRef& x, const MatrixRef& dy,
                                              float* gradients) const {
  const ConstMatrixMap w = matrix(base, p.weight);
  float* dbias = p.bias >= 0 ? data(gradients, p.bias) : nullptr;
  if (p.in_out) {
    // dW [in, out] += x^T dy: the [out, in] accumulation with the roles of x and dy swapped.
    detail::accumulate_weight_gradient(x, dy, matrix(gradients, p.weight), nullptr);
    if (dbias) Eigen::Map<Vector>(dbias, dy.cols()) += dy.colwise().sum().transpose();
    return detail::matmul_transposed(dy, w);
  }
  detail::accumulate_weight_gradient(dy, x, matrix(gradients, p.weight), dbias);
  return detail::matmul(dy, w);
}

}  // namespace attn
