#pragma once
// Softmax along the last axis and its masked variants.

#include "attn/mask.hpp"
#include "attn/tensor.hpp"

namespace attn {

// Row-wise softmax, max-subtracted so that logits of +-1e4 give finite results.
// A row of -infinity (every entry masked with fill = -inf) becomes NaN, as in PyTorch.
Matrix softmax(const MatrixRef& logits);
void softmax_in_place(MatrixMap logits);

// Masked softmax of scores [B, nq, nk] in place: every masked position's score is replaced by
// mask.fill (or, for additive masks, has the mask added) before the softmax. See mask.hpp for
// the accepted masks and their shapes. Throws std::invalid_argument on inconsistent shapes.
void masked_softmax_in_place(MutableBatch scores, const Mask& mask);
Tensor3 masked_softmax(const Tensor3& scores, const Mask& mask);

// Gradients of sum(y * dy) with respect to the logits, given the softmax's output y:
// dx = y * (dy - sum_j y_j dy_j) per row. The masked form gives 0 where the mask replaced a
// score by its fill (a constant passes no gradient); an additive mask passes it unchanged.
Matrix softmax_backward(const MatrixRef& y, const MatrixRef& dy);
Tensor3 masked_softmax_backward(const Tensor3& y, const Tensor3& dy, const Mask& mask);

}  // namespace attn
