#include "masked_softmax.hpp"

#include "row_kernels.hpp"

namespace attn::detail {

void masked_softmax_rows(MatrixMap scores, const MaskContext& mask) {
  mask_matrix(scores, mask);
  for (Index i = 0; i < scores.rows(); ++i) {
    f32_softmax_row(scores.data() + i * scores.cols(), scores.cols());
  }
}

float masked_softmax_backward_row(const float* p, float* ds, Index n, float scale,
                                  const RowMask* mask, Index first_key) {
  const float delta = f32_softmax_backward_row(p, ds, n, scale);
  if (mask) mask->zero_hidden(ds, first_key, n);
  return delta;
}

void masked_softmax_backward_rows(ConstMatrixMap weights, MatrixMap ds, const MaskContext& mask,
                                  float scale) {
  const Index nq = weights.rows(), nk = weights.cols();
  for (Index i = 0; i < nq; ++i) {
    const RowMask row(mask, nq, nk, i);
    masked_softmax_backward_row(weights.data() + i * nk, ds.data() + i * nk, nk, scale,
                                mask.mask.empty() ? nullptr : &row);
  }
}

}  // namespace attn::detail
