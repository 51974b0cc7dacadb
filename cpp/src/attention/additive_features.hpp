#pragma once
// The additive score function on projections already made, shared by additive attention (its
// forward and backward) and the Bahdanau decoder: with pq = W_q q [nq, h] and pk = W_k k [nk, h]
// (row-major), the features of pair (i, j) are f_ij = tanh(pq_i + pk_j) and its score is
// s_ij = w_v . f_ij. The features are recomputed where the backward needs them rather than kept:
// nq * nk * h floats would dwarf everything else.

#include "attn/tensor.hpp"

namespace attn::detail {

// scores[i * ld + j] = w_v . tanh(pq_i + pk_j) for i < nq, j < nk.
void additive_scores(const float* pq, Index nq, const float* pk, Index nk, Index h, const float* wv,
                     float* scores, Index ld);

// The gradients through the features, given dS (ds[i * ld + j] = dL/ds_ij): with
// g_ij = dS_ij w_v * (1 - f_ij^2), adds sum_j g_ij into dpq_i [nq, h], sum_i g_ij into dpk_j
// [nk, h], and sum_ij dS_ij f_ij into dwv [h]. Pairs with dS_ij = 0 (masked ones) are skipped.
void additive_scores_backward(const float* ds, Index ld, const float* pq, Index nq, const float* pk,
                              Index nk, Index h, const float* wv, float* dpq, float* dpk,
                              float* dwv);

}  // namespace attn::detail
