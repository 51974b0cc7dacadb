#pragma once
// The masked softmax of whole rows and its backward, as named steps that every path with a
// score matrix in hand calls: the softmax functions, the unfused attention path (additive
// attention, dropout), the Bahdanau decoder's attention, and, row by row, the fused backward.
// The fused forward softmaxes online instead (f32_online_softmax_step).

#include "attn/tensor.hpp"
#include "parallel/split.hpp"
#include "row_mask.hpp"

namespace attn::detail {

// The work of one entry of a softmax row or of its backward, for run_ranges: an exp, or two
// passes of multiply-adds, tens of flops.
constexpr Index kSoftmaxEntryWork = 32;

// row(b, i) for every row i of `batch` matrices of [rows, cols]: rows are independent, so runs
// of them go to the pool's threads, each writing its own rows, and every thread count gives the
// same bits. One region for the whole batch, so that many small matrices split as one large.
template <typename Row>
void for_each_row(Index batch, Index rows, Index cols, Row&& row) {
  run_ranges(batch * rows, kSoftmaxEntryWork * cols, [&](Index begin, Index end) {
    for (Index r = begin; r < end; ++r) row(r / rows, r % rows);
  });
}

// Row i of a [rows, cols] score matrix, in place: the mask applied (RowMask::apply), then the
// softmax. The row becomes the attention weights.
void masked_softmax_row(float* row, Index cols, const MaskContext& mask, Index rows, Index i);

// masked_softmax_row for every row of one score matrix.
void masked_softmax_rows(MatrixMap scores, const MaskContext& mask);

// One row's softmax backward (f32_softmax_backward_row), then 0 where `mask` (when non-null)
// hid the key: a hidden score was replaced by the fill, a constant, so no gradient flows into
// it. p: the row's weights; ds: dL/dP on entry, dL/dS on return. Returns D = sum_j p_j dP_j.
// p and ds may start at key first_key of the row (the mask's key numbering).
float masked_softmax_backward_row(const float* p, float* ds, Index n, float scale,
                                  const RowMask* mask, Index first_key = 0);

// The same for row i of a [rows, cols] matrix whose mask is `mask`.
void masked_softmax_backward_row(const float* p, float* ds, Index cols, const MaskContext& mask,
                                 Index rows, Index i, float scale = 1.0f);

// masked_softmax_backward_row for every row of one score matrix: weights [nq, nk], ds [nq, nk].
void masked_softmax_backward_rows(ConstMatrixMap weights, MatrixMap ds, const MaskContext& mask,
                                  float scale = 1.0f);

}  // namespace attn::detail
