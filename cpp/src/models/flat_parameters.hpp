#pragma once
// A model's parameters as one flat float buffer in state-dict order, so that Adam and the
// gradient norm run over one span, with each tensor's name, shape and offset. Gradients are laid
// out the same way: every view takes the buffer it reads (the values or their gradients).

#include <string>
#include <vector>

#include "attn/state_dict.hpp"
#include "attn/tensor.hpp"

namespace attn::detail {

Index element_count(const std::vector<Index>& shape);

class FlatParameters {
 public:
  std::vector<ParameterSpec> specs;
  std::vector<Index> offsets;
  Index total = 0;
  std::vector<float> values;  // [total], zeros until the model initialises them

  Index rows(Index id) const { return specs[static_cast<size_t>(id)].shape[0]; }
  Index cols(Index id) const {
    const auto& shape = specs[static_cast<size_t>(id)].shape;
    return shape.size() > 1 ? shape[1] : 1;
  }
  float* data(float* base, Index id) const { return base + offsets[static_cast<size_t>(id)]; }
  const float* data(const float* base, Index id) const {
    return base + offsets[static_cast<size_t>(id)];
  }
  ConstMatrixMap matrix(const float* base, Index id) const {
    return {data(base, id), rows(id), cols(id)};
  }
  MatrixMap matrix(float* base, Index id) const { return {data(base, id), rows(id), cols(id)}; }
  Eigen::Map<const Vector> vector(const float* base, Index id) const {
    return {data(base, id), rows(id) * cols(id)};
  }
  Eigen::Map<Vector> vector(float* base, Index id) const {
    return {data(base, id), rows(id) * cols(id)};
  }

  // The tensors of `base` (laid out like the values) under their names, as copies.
  std::vector<NamedTensor> named(const float* base) const;

  // All or nothing, as PyTorch's load_state_dict(strict=True) (match_state_dict, names through
  // `canonical` when given): the values are replaced only once every entry has been checked.
  void load(const std::vector<NamedTensor>& entries,
            std::string (*canonical)(const std::string&) = nullptr);

 protected:
  // Appends a tensor to the layout; returns its id. Call allocate() once every tensor is in.
  Index add(const std::string& name, std::vector<Index> shape);
  void allocate() { values.assign(static_cast<size_t>(total), 0.0f); }
};

}  // namespace attn::detail
