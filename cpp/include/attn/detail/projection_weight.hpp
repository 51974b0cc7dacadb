#pragma once
// An implementation detail of attn/multi_head_attention.hpp, public only because the class holds
// it by value: nothing here is part of the API.

#include <vector>

#include "attn/tensor.hpp"

namespace attn::detail {

// A projection weight [out, in] in PyTorch's layout, and the GEMM's packed panels of its
// transpose, packed once when the weight is set rather than on every forward.
struct ProjectionWeight {
  Matrix weight;
  std::vector<float> panels;
};

}  // namespace attn::detail
