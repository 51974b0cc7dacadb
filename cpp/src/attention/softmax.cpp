#include "attn/softmax.hpp"

#include "checks.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/row_kernels.hpp"

namespace attn {

void softmax_in_place(MatrixMap logits) {
  for (Index i = 0; i < logits.rows(); ++i)
    detail::f32_softmax_row(logits.data() + i * logits.cols(), logits.cols());
}

Matrix softmax(const MatrixRef& logits) {
  Matrix result = logits;
  softmax_in_place(MatrixMap(result.data(), result.rows(), result.cols()));
  return result;
}

void masked_softmax_in_place(MutableBatch scores, const Mask& mask) {
  validate_mask(mask, scores.batch, scores.rows, scores.cols);
  for (Index b = 0; b < scores.batch; ++b) {
    detail::masked_softmax_rows(scores[b], {mask, b, scores.batch, 1});
  }
}

Tensor3 masked_softmax(const Tensor3& scores, const Mask& mask) {
  Tensor3 result = scores;
  masked_softmax_in_place(result.view(), mask);
  return result;
}

Matrix softmax_backward(const MatrixRef& y, const MatrixRef& dy) {
  detail::require_shape("dy", detail::shape_of(y), detail::shape_of(dy));
  Matrix dx = dy;
  for (Index i = 0; i < y.rows(); ++i) {
    detail::f32_softmax_backward_row(y.data() + i * y.outerStride(), dx.data() + i * y.cols(),
                                     y.cols(), 1.0f);
  }
  return dx;
}

Tensor3 masked_softmax_backward(const Tensor3& y, const Tensor3& dy, const Mask& mask) {
  detail::require_shape("dy", {y.batch, y.rows, y.cols}, {dy.batch, dy.rows, dy.cols});
  validate_mask(mask, y.batch, y.rows, y.cols);
  Tensor3 dx = dy;
  for (Index b = 0; b < y.batch; ++b) {
    detail::masked_softmax_backward_rows(y.view()[b], dx.view()[b], {mask, b, y.batch, 1});
  }
  return dx;
}

}  // namespace attn
