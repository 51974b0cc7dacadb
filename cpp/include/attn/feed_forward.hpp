#pragma once
// d2l's PositionWiseFFN: dense2(relu(dense1(x))), applied to every position alike.

#include "attn/tensor.hpp"

namespace attn {

// nn.Linear weights of the two layers: dense1 [hidden, d] and [hidden], dense2 [out, hidden] and
// [out], in PyTorch's [out, in] layout (viewed, not owned).
struct FeedForwardWeights {
  ConstMatrixMap dense1_weight{nullptr, 0, 0};
  Eigen::Map<const Vector> dense1_bias{nullptr, 0};
  ConstMatrixMap dense2_weight{nullptr, 0, 0};
  Eigen::Map<const Vector> dense2_bias{nullptr, 0};
};

// x [n, d] -> [n, out]. `hidden`, when non-null, receives relu(dense1(x)) [n, hidden], which the
// backward can take instead of recomputing it. Throws std::invalid_argument naming the weight
// whose shape does not fit.
Matrix position_wise_ffn(const MatrixRef& x, const FeedForwardWeights& weights,
                         Matrix* hidden = nullptr);

// Gradients of sum(position_wise_ffn(x) * dy), dy [n, out]; `hidden` as the forward gave it, or
// null to recompute it.
struct FeedForwardGradients {
  Matrix dx, dense1_weight, dense2_weight;
  Vector dense1_bias, dense2_bias;
};
FeedForwardGradients position_wise_ffn_backward(const MatrixRef& x,
                                                const FeedForwardWeights& weights,
                                                const MatrixRef& dy,
                                                const Matrix* hidden = nullptr);

}  // namespace attn
