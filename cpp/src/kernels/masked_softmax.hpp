#pragma once
// The masked softmax of whole rows and its backward, as named steps that every path with a
// score matrix in hand calls: the masked_softmax functions, the unfused attention path
// (additive attention, dropout), the Bahdanau decoder's attention, and, row by row, the fused
// backward. The fused forward softmaxes online instead (f32_online_softmax_step).

#include "attn/tensor.hpp"
#include "row_mask.hpp"

namespace attn::detail {

// Every row of one score matrix, in place: the mask applied (RowMask::apply), then the
// softmax. The rows become the attention weights.
void masked_softmax_rows(MatrixMap scores, const MaskContext& mask);

// One row's softmax backward (f32_softmax_backward_row), then 0 where `mask` (when non-null)
// hid the key: a hidden score was replaced by the fill, a constant, so no gradient flows into
// it. p: the row's weights; ds: dL/dP on entry, dL/dS on return. Returns D = sum_j p_j dP_j.
// p and ds may start at key first_key of the row (the mask's key numbering).
float masked_softmax_backward_row(const float* p, float* ds, Index n, float scale,
                                  const RowMask* mask, Index first_key = 0);

// masked_softmax_backward_row for every row of one score matrix: weights [nq, nk], ds [nq, nk].
void masked_softmax_backward_rows(ConstMatrixMap weights, MatrixMap ds, const MaskContext& mask,
                                  float scale = 1.0f);

}  // namespace attn::detail
