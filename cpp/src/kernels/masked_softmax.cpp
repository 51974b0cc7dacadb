#include "masked_softmax.hpp"

#include "row_kernels.hpp"

namespace attn::detail {

void masked_softmax_row(float* row, Index cols, const MaskContext& mask, Index rows, Index i) {
  if (!mask.mask.empty() || mask.modifiers) RowMask(mask, rows, cols, i).apply(row, 0, cols);
  f32_softmax_row(row, cols);
}

void masked_softmax_rows(MatrixMap scores, const MaskContext& mask) {
  const Index rows = scores.rows(), cols = scores.cols();
  for_each_row(1, rows, cols, [&](Index, Index i) {
    masked_softmax_row(scores.data() + i * cols, cols, mask, rows, i);
  });
}

float masked_softmax_backward_row(const float* p, float* ds, Index n, float scale,
                                  const RowMask* mask, Index first_key) {
  const float delta = f32_softmax_backward_row(p, ds, n, scale);
  if (mask) mask->zero_hidden(ds, first_key, n);
  return delta;
}

void masked_softmax_backward_row(const float* p, float* ds, Index cols, const MaskContext& mask,
                                 Index rows, Index i, float scale) {
  const RowMask row(mask, rows, cols, i);
  masked_softmax_backward_row(p, ds, cols, scale, mask.mask.empty() ? nullptr : &row);
}

void masked_softmax_backward_rows(ConstMatrixMap weights, MatrixMap ds, const MaskContext& mask,
                                  float scale) {
  const Index rows = weights.rows(), cols = weights.cols();
  for_each_row(1, rows, cols, [&](Index, Index i) {
    masked_softmax_backward_row(weights.data() + i * cols, ds.data() + i * cols, cols, mask, rows,
                                i, scale);
  });
}

}  // namespace attn::detail
