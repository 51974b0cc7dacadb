#pragma once
// The MLP activations of GPT-2 and Llama, elementwise over a matrix of rows.

#include "attn/tensor.hpp"

namespace attn {

// GPT-2's GELU, the tanh form ("gelu_new"): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Matrix gelu_tanh(const MatrixRef& x);
// d/dx of sum(gelu_tanh(x) * dy), x and dy [n, d].
Matrix gelu_tanh_backward(const MatrixRef& x, const MatrixRef& dy);

// SwiGLU of the gate and up projections side by side, x [n, 2 m] = [gate | up] -> [n, m]:
// silu(gate) * up, silu(g) = g / (1 + exp(-g)).
Matrix swiglu(const MatrixRef& x);
// The gradient with respect to x [n, 2 m] of sum(swiglu(x) * dy), dy [n, m].
Matrix swiglu_backward(const MatrixRef& x, const MatrixRef& dy);

}  // namespace attn
