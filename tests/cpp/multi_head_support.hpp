#pragma once
// What the multi-head tests share: configurations, random parameters in float (for the module)
// and double (for the reference), and loading them by their PyTorch names.

#include <string>
#include <vector>

#include "attn/multi_head_attention.hpp"
#include "reference.hpp"

namespace mha_support {

using attn::Index;
using attn::Matrix;
using attn::MultiHeadAttention;
using attn::MultiHeadConfig;
using attn::Vector;

inline MultiHeadConfig make_config(Index embed_dim, Index num_heads, Index kdim = 0, Index vdim = 0,
                                   bool bias = true) {
  MultiHeadConfig config;
  config.embed_dim = embed_dim;
  config.num_heads = num_heads;
  config.kdim = kdim;
  config.vdim = vdim;
  config.bias = bias;
  return config;
}

// Parameters in float (what the module gets) and in double (what the reference uses).
struct Params {
  Matrix w_q, w_k, w_v, w_out;
  Vector b_q, b_k, b_v, b_out;
  ref::MultiHeadParams ref;
};

inline Params random_params(const MultiHeadConfig& c, uint32_t seed) {
  const Index E = c.embed_dim, kdim = c.kdim ? c.kdim : E, vdim = c.vdim ? c.vdim : E;
  Params p;
  p.w_q = ref::random_matrix(E, E, seed, -0.5f, 0.5f);
  p.w_k = ref::random_matrix(E, kdim, seed + 1, -0.5f, 0.5f);
  p.w_v = ref::random_matrix(E, vdim, seed + 2, -0.5f, 0.5f);
  p.w_out = ref::random_matrix(E, E, seed + 3, -0.5f, 0.5f);
  p.b_q = ref::random_vector(E, seed + 4, -0.5f, 0.5f);
  p.b_k = ref::random_vector(E, seed + 5, -0.5f, 0.5f);
  p.b_v = ref::random_vector(E, seed + 6, -0.5f, 0.5f);
  p.b_out = ref::random_vector(E, seed + 7, -0.5f, 0.5f);
  p.ref.w_q = ref::to_double(p.w_q);
  p.ref.w_k = ref::to_double(p.w_k);
  p.ref.w_v = ref::to_double(p.w_v);
  p.ref.w_out = ref::to_double(p.w_out);
  if (c.bias) {
    p.ref.b_q = ref::to_double(p.b_q);
    p.ref.b_k = ref::to_double(p.b_k);
    p.ref.b_v = ref::to_double(p.b_v);
    p.ref.b_out = ref::to_double(p.b_out);
  } else {
    p.b_q.setZero();
    p.b_k.setZero();
    p.b_v.setZero();
    p.b_out.setZero();
  }
  return p;
}

inline std::vector<float> flatten(const Matrix& m) { return {m.data(), m.data() + m.size()}; }
inline std::vector<float> flatten(const Vector& x) { return {x.data(), x.data() + x.size()}; }

// The data of one state-dict entry, by its PyTorch name.
inline std::vector<float> state_entry(const Params& p, const std::string& name) {
  if (name == "in_proj_weight") {
    std::vector<float> out = flatten(p.w_q);
    for (const Matrix* w : {&p.w_k, &p.w_v}) {
      const auto more = flatten(*w);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }
  if (name == "in_proj_bias") {
    std::vector<float> out = flatten(p.b_q);
    for (const Vector* b : {&p.b_k, &p.b_v})
      out.insert(out.end(), b->data(), b->data() + b->size());
    return out;
  }
  if (name == "q_proj_weight") return flatten(p.w_q);
  if (name == "k_proj_weight") return flatten(p.w_k);
  if (name == "v_proj_weight") return flatten(p.w_v);
  if (name == "out_proj.weight") return flatten(p.w_out);
  if (name == "out_proj.bias") return flatten(p.b_out);
  FAIL("unexpected parameter name " << name);
  return {};
}

// Loads every entry parameters() lists, by name, the way a state dict is loaded.
inline void load(MultiHeadAttention& m, const Params& p) {
  for (const auto& spec : m.parameters()) {
    const std::vector<float> data = state_entry(p, spec.name);
    Index count = 1;
    for (Index n : spec.shape) count *= n;
    REQUIRE(static_cast<Index>(data.size()) == count);
    m.set_parameter(spec.name, data.data(), spec.shape);
  }
}

}  // namespace mha_support
