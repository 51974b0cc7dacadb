#include "attn/softmax.hpp"

#include "checks.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/row_kernels.hpp"

namespace attn {

void softmax_in_place(MatrixMap logits) {
  const Index cols = logits.cols();
  detail::for_each_row(1, logits.rows(), cols, [&](Index, Index i) {
    detail::f32_softmax_row(logits.data() + i * cols, cols);
  });
}

Matrix softmax(const MatrixRef& logits) {
  Matrix result = logits;
  softmax_in_place(MatrixMap(result.data(), result.rows(), result.cols()));
  return result;
}

void masked_softmax_in_place(MutableBatch scores, const Mask& mask) {
  validate_mask(mask, scores.batch, scores.rows, scores.cols);
  const Index cols = scores.cols;
  detail::for_each_row(scores.batch, scores.rows, cols, [&](Index b, Index i) {
    detail::masked_softmax_row(scores[b].data() + i * cols, cols, {mask, b, scores.batch, 1},
                               scores.rows, i);
  });
}

Tensor3 masked_softmax(const Tensor3& scores, const Mask& mask) {
  Tensor3 result = scores;
  masked_softmax_in_place(result.view(), mask);
  return result;
}

Matrix softmax_backward(const MatrixRef& y, const MatrixRef& dy) {
  detail::require_shape("dy", detail::shape_of(y), detail::shape_of(dy));
  Matrix dx = dy;
  const Index cols = y.cols();
  detail::for_each_row(1, y.rows(), cols, [&](Index, Index i) {
    detail::f32_softmax_backward_row(y.data() + i * y.outerStride(), dx.data() + i * cols, cols,
                                     1.0f);
  });
  return dx;
}

Tensor3 masked_softmax_backward(const Tensor3& y, const Tensor3& dy, const Mask& mask) {
  detail::require_shape("dy", {y.batch, y.rows, y.cols}, {dy.batch, dy.rows, dy.cols});
  validate_mask(mask, y.batch, y.rows, y.cols);
  Tensor3 dx = dy;
  const Index cols = y.cols;
  detail::for_each_row(y.batch, y.rows, cols, [&](Index b, Index i) {
    detail::masked_softmax_backward_row(y.view()[b].data() + i * cols,
                                        dx.view()[b].data() + i * cols, cols, {mask, b, y.batch, 1},
                                        y.rows, i);
  });
  return dx;
}

}  // namespace attn
