#pragma once
// x W^T (+ b) for a weight W [out, in] in nn.Linear's layout, the product every layer of the
// models runs. The GEMM reads W^T as packed panels; a weight that meets many inputs is packed
// once (PanelStore), since packing costs as much as multiplying one row by it.

#include <deque>
#include <vector>

#include "attn/tensor.hpp"

namespace attn::detail {

struct Projection {
  const float* weight = nullptr;  // [out, in], row-major
  Index out = 0, in = 0;
  const std::vector<float>* panels = nullptr;  // W^T packed (pack_transposed), or packed per call
  const float* bias = nullptr;                 // [out], or none

  ConstMatrixMap matrix() const { return {weight, out, in}; }
};

// The projection of a contiguous weight and its bias (a Linear layer's, as views), unpacked.
inline Projection projection_of(const ConstMatrixMap& weight,
                                const Eigen::Map<const Vector>& bias) {
  return {weight.data(), weight.rows(), weight.cols(), nullptr, bias.data()};
}

// x [n, in] -> [n, out]; the same arithmetic with panels or without.
Matrix project(const MatrixRef& x, const Projection& p);

// Owns packed panels for the projections it returns; they stay valid as long as the store.
class PanelStore {
 public:
  // p with its weight's panels packed here (p.weight must outlive the store's use of them too).
  Projection packed(Projection p);

 private:
  std::deque<std::vector<float>> panels_;  // a deque: adding one moves none of the others
};

}  // namespace attn::detail
