#include "attn/softmax.hpp"

#include "checks.hpp"
#include "row_kernels.hpp"

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

}  // namespace attn
