#pragma once
// Batch matrix multiplication.

#include "attn/tensor.hpp"

namespace attn {

// out[b] = a[b] * b[b] for a [B, n, k], b [B, k, m], out [B, n, m].
// Throws std::invalid_argument naming the argument whose shape does not fit.
void bmm(ConstBatch a, ConstBatch b, MutableBatch out);
Tensor3 bmm(const Tensor3& a, const Tensor3& b);

}  // namespace attn
