#pragma once
// Row operations of the softmax, and a row's dot product, written on the portable 4-lane vector
// (simd/f32x4.hpp): SIMD128 in the wasm SIMD build, plain floats (the scalar twin) elsewhere.

#include "attn/tensor.hpp"

namespace attn::detail {

// sum_j a[j] b[j], in lanes: two chains of four partial sums, added at the end.
float f32_dot(const float* a, const float* b, Index n);

// The largest of s[0..n), NaN if any is NaN; -inf for n = 0.
float f32_row_max(const float* s, Index n);

// s[j] += bias[j] for j < n; returns the max of the result, as f32_row_max would.
float f32_add_row_max(float* s, const float* bias, Index n);

// One online-softmax step for one row, the form that sees a row's scores a block at a time (the
// fused attention kernel's key blocks): folds the block's scores s[0..len), whose max is
// block_max, into the row's running max and sum, turns them into exp(s - new max) in place, and
// returns the factor alpha by which what was accumulated so far must be rescaled (0 on the first
// block; 1 when the max did not move). A row whose max is still -inf gets zeros and sum 0 (it
// ends NaN, 0 / 0, as in PyTorch, if no finite score ever comes). The exp is the kernel table's
// (kernel_table.hpp), as the products around it: with relaxed SIMD its polynomial is fused
// multiply-adds.
float f32_online_softmax_step(float* s, Index len, float block_max, bool first_block,
                              float& running_max, float& running_sum);

// Softmax of one row in place, in three passes: the row max; exp(x - max) with a running sum;
// one scale by 1/sum. Rows here fit in cache, where two passes over memory beat the online
// (rescaling) form; the fused attention kernel uses the online form across key blocks instead.
// A row of -inf becomes NaN (0/0), as in PyTorch.
void f32_softmax_row(float* row, Index n);

// The same for weights that go on into matrix products (the fused backward's), with the row's
// max already known (the max of its pieces' f32_row_max: the parallel backward takes a row's
// max key chunk by key chunk) and `extra` a term the denominator holds beside the row's exps (a
// sink's exp(sink - max)). exp(x - max) is 0 below 2^-100, as the fused forward's
// (kPooledLowest, product_loops.hpp). Returns the inverse of the denominator.
float f32_pooled_softmax_row(float* row, Index n, float max, float extra);

// The softmax's backward for one row, given its weights p[0..n) and, in ds, the gradient dP
// of the loss with respect to them: returns D = sum_j p_j dP_j and turns ds into the gradient
// with respect to the scores, dS_j = scale * p_j * (dP_j - D) (scale: the factor the scores
// were multiplied by before the softmax, 1 if none). D is summed in key order rather than in
// vector lanes: the backward passes are bound by their matrix products, not by this, and one
// order gives the SIMD and scalar builds the same gradients.
float f32_softmax_backward_row(const float* p, float* ds, Index n, float scale);

}  // namespace attn::detail
