#pragma once
// Row operations of the softmax, written on the portable 4-lane vector (simd/f32x4.hpp): SIMD128
// in the wasm SIMD build, plain floats (the scalar twin) elsewhere.

#include "attn/tensor.hpp"

namespace attn::detail {

// The largest of s[0..n), NaN if any is NaN; -inf for n = 0.
float f32_row_max(const float* s, Index n);

// s[j] = exp(s[j] - max) for j < n; returns their sum.
float f32_exp_shifted_sum(float* s, Index n, float max);

// Softmax of one row in place, in three passes: the row max; exp(x - max) with a running sum;
// one scale by 1/sum. Rows here fit in cache, where two passes over memory beat the online
// (rescaling) form; the fused attention kernel uses the online form across key blocks instead.
// A row of -inf becomes NaN (0/0), as in PyTorch.
void f32_softmax_row(float* row, Index n);

}  // namespace attn::detail
