#pragma once
// The rows of Nadaraya-Watson kernel regression (attention/kernel_regression.cpp): squared
// distances of one query to every key, in double, the similarity weights from them and their sum,
// and the pooling's dot product, in vector loops. Double for the distances because the Gaussian
// divides them by 2 sigma^2: for a small sigma that magnifies float rounding of d^2 (relative
// 1e-7) into visibly wrong weights between keys at nearly equal distances; from float inputs,
// double keeps it at 1e-16.

#include "attn/similarity.hpp"
#include "attn/tensor.hpp"

namespace attn::detail {

// The `skip` of a query that hides no key (leave-one-out hides its own).
constexpr Index kNoKey = -1;

// squared[j] = ||query - key j||^2 for j < n, keys feature-major (feature f of key j at
// keys_t[f * n + j]): the differences of floats are exact in double, their squares rounded once
// each and summed in feature order. Key `skip` (leave-one-out; kNoKey for none) gets +inf. Returns
// the smallest squared distance, NaN passed over: +inf when no key but `skip` has a number.
double f64_squared_distances(const float* query, const float* keys_t, Index n, Index dim,
                             Index skip, double* squared);

// ||query - key||^2 for one key (row-major, dim features) in double: the arithmetic of
// f64_squared_distances, so the same bits, for a caller that needs a few keys' distances.
double f64_squared_distance(const float* query, const float* key, Index dim);

// The Gaussian weights in log-sum-exp form, w[j] = exp(-(squared[j] - nearest) / (2 sigma^2))
// for j < n (nearest the smallest squared distance, so the nearest key's weight is 1 and the
// row sum >= 1 however small sigma is; a key at +inf gets 0); returns their sum. The exponent's
// range reduction is done in double (t = (squared - nearest) log2(e) / (2 sigma^2) = n + r),
// 2^r in float (simd::exp2_split): within 4 ulp whatever t (tests/cpp/test_microkernels.cpp),
// and exactly 0 where the nearest integer to t is below -100 (kPooledLowest, product_loops.hpp:
// the pooling would make subnormal products of them).
float gaussian_weights(const double* squared, Index n, double nearest, float bandwidth, float* w);

// The compactly supported and constant kernels: w[j] = similarity(sqrt(squared[j]) / bandwidth),
// and 0 for key `skip` (kNoKey for none); returns their sum.
float similarity_weights(Similarity similarity, const double* squared, Index n, float bandwidth,
                         Index skip, float* w);

// sum_j w[j], in lanes.
float f32_sum(const float* w, Index n);

// x[j] /= divisor for j < n.
void f32_divide(float* x, Index n, float divisor);

}  // namespace attn::detail
