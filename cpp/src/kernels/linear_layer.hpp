#pragma once
// The parts of a layer y = x W^T + b (nn.Linear, a GRU's gate products, the attention
// projections) around its matrix products, split across the pool: the bias added to every row,
// and the parameter gradients dW += dY^T X and db += the column sums of dY. Each entry of the
// gradients sums over the rows of dY in order, so the results are the same bits for every
// thread count (and dW the same as forming dY^T X and adding it).

#include "attn/tensor.hpp"

namespace attn::detail {

// y [rows, out] += bias [out] on every row.
void add_bias_rows(Matrix& y, const float* bias);

// dy [rows, out], x [rows, in], dweight [out, in]; dbias [out] or null for a layer without bias.
void accumulate_weight_gradient(const MatrixRef& dy, const MatrixRef& x, Eigen::Ref<Matrix> dweight,
                                float* dbias);

}  // namespace attn::detail
