#pragma once
// A model's parameters by name, as PyTorch's state dicts hold them: the vocabulary every model
// of the core (MultiHeadAttention, Seq2Seq) lists, loads and saves its weights in.

#include <string>
#include <vector>

#include "attn/tensor.hpp"

namespace attn {

// One parameter a model has: its PyTorch state-dict name and shape.
struct ParameterSpec {
  std::string name;
  std::vector<Index> shape;
};

// A state-dict entry: a parameter (or its gradient) under its PyTorch name, row-major.
struct NamedTensor {
  std::string name;
  std::vector<Index> shape;
  std::vector<float> data;
};

}  // namespace attn
