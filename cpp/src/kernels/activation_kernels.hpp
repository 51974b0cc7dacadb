#pragma once
// Elementwise activations of the recurrent layers and additive attention, on the portable
// 4-lane vector (simd/f32x4.hpp), so that the GRU's gates and the attention features do not pay
// a libm call per element (in the native build those calls were a seventh of a training step).

#include "attn/tensor.hpp"

namespace attn::detail {

// y[i] = tanh(x[i]) for i < n (y may be x). Absolute error below 2e-7; NaN stays NaN,
// +-infinity gives +-1.
void f32_tanh(const float* x, float* y, Index n);

// y[i] = 1 / (1 + exp(-x[i])) (y may be x), as (1 + tanh(x / 2)) / 2: the same error bound.
void f32_sigmoid(const float* x, float* y, Index n);

}  // namespace attn::detail
