#pragma once
// Where CausalLM's tensors live (models/flat_parameters.hpp), under Hugging Face's names and in
// its layouts, and the two operations every weight of the model goes through: a projection
// (Conv1D's x W + b with W [in, out], or nn.Linear's x W^T + b with W [out, in]) and a norm.

#include <string>
#include <vector>

#include "attn/causal_lm.hpp"
#include "models/flat_parameters.hpp"

namespace attn::detail {

struct CausalLMParameters : FlatParameters {
  struct Projection {
    Index weight = -1, bias = -1;  // bias -1: none
    bool in_out = false;           // Conv1D's [in, out] weight, else nn.Linear's [out, in]
    Index out = 0;                 // output features
  };
  struct Norm {
    Index weight = -1, bias = -1;  // bias -1: RMSNorm
  };
  struct Layer {
    Norm norm1;
    // Their outputs side by side are the queries, keys and values (GPT-2: c_attn alone; Llama:
    // q_proj, k_proj, v_proj).
    std::vector<Projection> qkv;
    Projection out;
    Norm norm2;
    // Side by side, the MLP's first layer (GPT-2: c_fc; Llama: gate_proj, up_proj); empty for an
    // attention-only model.
    std::vector<Projection> up;
    Projection down;
  };

  explicit CausalLMParameters(const CausalLMConfig& config);

  Index embedding = -1;
  Index positions = -1;  // learned positions' table, or -1
  std::vector<Layer> layers;
  Norm final_norm;
  Index unembedding = -1;  // lm_head, or the embedding when tied
  std::string unembedding_name;

  // x [rows, in] -> x W + b or x W^T + b.
  Matrix project(const float* base, const Projection& p, const MatrixRef& x) const;
  // Adds the projection's parameter gradients into `gradients`; returns d x.
  Matrix project_backward(const float* base, const Projection& p, const MatrixRef& x,
                          const MatrixRef& dy, float* gradients) const;

 private:
  Projection add_projection(const std::string& name, Index in, Index out, bool in_out, bool bias);
  Norm add_norm(const std::string& name, Index size, bool bias);
  void add_gpt2_layer(const std::string& prefix, const CausalLMConfig& c);
  void add_llama_layer(const std::string& prefix, const CausalLMConfig& c);
  void initialise(const CausalLMConfig& c);
};

}  // namespace attn::detail
