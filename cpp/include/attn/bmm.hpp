#pragma once
// Batch matrix multiplication.

#include "attn/tensor.hpp"

namespace attn {

// out[b] = a[b] * b[b] for a [B, n, k], b [B, k, m], out [B, n, m].
// Throws std::invalid_argument naming the argument whose shape does not fit.
void bmm(ConstBatch a, ConstBatch b, MutableBatch out);
Tensor3 bmm(const Tensor3& a, const Tensor3& b);

// Gradients of sum(bmm(a, b) * dc): da[b] = dc[b] b[b]^T, db[b] = a[b]^T dc[b].
// Throws std::invalid_argument when dc is not shaped like bmm(a, b).
struct BmmGradients {
  Tensor3 da, db;
};
BmmGradients bmm_backward(const Tensor3& a, const Tensor3& b, const Tensor3& dc);

}  // namespace attn
