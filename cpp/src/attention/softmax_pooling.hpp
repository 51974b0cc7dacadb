#pragma once
// The unfused path's steps on one score matrix that exists in memory, forward and backward:
// masked softmax, dropout and the weighted sum of the values. Additive attention, scaled
// dot-product attention with dropout, and the Bahdanau decoder's attention (one query row per
// step) all go through them; the fused kernels (kernels/fused_attention.hpp) never form the
// score matrix.

#include <cstdint>

#include "attn/tensor.hpp"
#include "kernels/row_mask.hpp"
#include "kernels/seeded_dropout.hpp"

namespace attn::detail {

// scores [nq, nk] are masked and softmaxed in place (they become the weights, before dropout);
// output [nq, dv] = dropout(weights) v [nk, dv]. Weight (i, j) is multiplied by
// dropout.factor(first_weight + i * nk + j), the index the backward regenerates it from.
void softmax_and_pool(MatrixMap scores, ConstMatrixMap v, const MaskContext& mask,
                      const Dropout& dropout, uint64_t first_weight, MatrixMap output);

// The backward of softmax_and_pool, given its weights [nq, nk] and grad_output [nq, dv]: with
// F the dropout factors and dP = F * (grad_output v^T), adds (weights * F)^T grad_output into
// dv [nk, dv] and writes dS = P * (dP - rowsum(P * dP)) into grad_scores [nq, nk], 0 where the
// mask hid the key.
void softmax_and_pool_backward(ConstMatrixMap weights, ConstMatrixMap v, ConstMatrixMap grad_output,
                               const MaskContext& mask, const Dropout& dropout,
                               uint64_t first_weight, MatrixMap grad_scores, MatrixMap dv);

}  // namespace attn::detail
