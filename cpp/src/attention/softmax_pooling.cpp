#include "softmax_pooling.hpp"

#include "kernels/gemm.hpp"
#include "kernels/masked_softmax.hpp"

namespace attn::detail {

void softmax_and_pool(MatrixMap scores, ConstMatrixMap v, const MaskContext& mask,
                      const Dropout& dropout, uint64_t first_weight, MatrixMap output) {
  masked_softmax_rows(scores, mask);
  if (!dropout.active()) {
    output = matmul(scores, v);
    return;
  }
  // The weights handed back stay the pre-dropout distribution; only the pooling sees drops.
  Matrix dropped = scores;
  dropout.apply(dropped.data(), dropped.size(), first_weight);
  output = matmul(dropped, v);
}

void softmax_and_pool_backward(ConstMatrixMap weights, ConstMatrixMap v, ConstMatrixMap grad_output,
                               const MaskContext& mask, const Dropout& dropout,
                               uint64_t first_weight, MatrixMap grad_scores, MatrixMap dv) {
  grad_scores = matmul_transposed(grad_output, v);  // dL/d(dropped weights)
  if (dropout.active()) {
    Matrix dropped = weights;
    for (Index t = 0; t < dropped.size(); ++t) {
      const float factor = dropout.factor(first_weight + static_cast<uint64_t>(t));
      dropped.data()[t] *= factor;
      grad_scores.data()[t] *= factor;
    }
    dv.noalias() += dropped.transpose() * grad_output;
  } else {
    dv.noalias() += weights.transpose() * grad_output;
  }
  masked_softmax_backward_rows(weights, grad_scores, mask);
}

}  // namespace attn::detail
