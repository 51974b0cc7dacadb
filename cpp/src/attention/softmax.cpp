#include "attn/softmax.hpp"

#include "checks.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/row_mask.hpp"

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
  apply_mask(scores, mask);
  for (Index b = 0; b < scores.batch; ++b) softmax_in_place(scores[b]);
}

Tensor3 masked_softmax(const Tensor3& scores, const Mask& mask) {
  Tensor3 result = scores;
  masked_softmax_in_place(result.view(), mask);
  return result;
}

Matrix softmax_backward(const MatrixRef& y, const MatrixRef& dy) {
  detail::require_shape("dy", detail::shape_of(y), detail::shape_of(dy));
  const Vector delta = y.cwiseProduct(dy).rowwise().sum();
  return y.cwiseProduct(dy - delta.replicate(1, y.cols()));
}

Tensor3 masked_softmax_backward(const Tensor3& y, const Tensor3& dy, const Mask& mask) {
  detail::require_shape("dy", {y.batch, y.rows, y.cols}, {dy.batch, dy.rows, dy.cols});
  validate_mask(mask, y.batch, y.rows, y.cols);
  Tensor3 dx(y.batch, y.rows, y.cols);
  for (Index b = 0; b < y.batch; ++b) {
    dx.view()[b] = softmax_backward(y.view()[b], dy.view()[b]);
    for (Index i = 0; i < y.rows; ++i) {
      detail::RowMask({mask, b, y.batch, 1}, y.rows, y.cols, i)
          .zero_hidden(dx.view()[b].data() + i * y.cols, 0, y.cols);
    }
  }
  return dx;
}

}  // namespace attn
