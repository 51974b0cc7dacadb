#pragma once
// The innermost loops of attention, over one contiguous row of floats. They are the seam where
// SIMD kernels plug in: each has a scalar twin with the same signature (row_kernels.cpp), and
// a build picks one set.

#include "attn/tensor.hpp"

namespace attn::detail {

// Softmax of one row in place, in three passes: the row max; exp(x - max) with a running sum;
// one scale by 1/sum. Two passes over memory beat the online (rescaling) form for rows that fit
// in cache, which every row here does. A row of -inf becomes NaN (0/0), as in PyTorch.
void f32_softmax_row(float* row, Index n);

// y += a * x over n floats: the P.V accumulation of one weight into one output row.
void f32_axpy(float a, const float* x, float* y, Index n);

}  // namespace attn::detail
