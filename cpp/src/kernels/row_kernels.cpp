#include "row_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kernel_table.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

using simd::F32x4;

float f32_dot(const float* a, const float* b, Index n) {
  F32x4 sum[2] = {simd::splat(0.0f), simd::splat(0.0f)};  // two chains of adds
  Index j = 0;
  for (; j + 8 <= n; j += 8) {
    sum[0] = simd::multiply_add(simd::load(a + j), simd::load(b + j), sum[0]);
    sum[1] = simd::multiply_add(simd::load(a + j + 4), simd::load(b + j + 4), sum[1]);
  }
  float total = simd::horizontal_sum(sum[0] + sum[1]);
  for (; j < n; ++j) total += a[j] * b[j];
  return total;
}

float f32_row_max(const float* s, Index n) {
  F32x4 m = simd::splat(-std::numeric_limits<float>::infinity());
  Index j = 0;
  for (; j + 4 <= n; j += 4) m = simd::max(m, simd::load(s + j));
  float result = simd::horizontal_max(m);
  for (; j < n; ++j) result = simd::nan_max(result, s[j]);
  return result;
}

float f32_add_row_max(float* s, const float* bias, Index n) {
  F32x4 m = simd::splat(-std::numeric_limits<float>::infinity());
  Index j = 0;
  for (; j + 4 <= n; j += 4) {
    const F32x4 sum = simd::load(s + j) + simd::load(bias + j);
    simd::store(s + j, sum);
    m = simd::max(m, sum);
  }
  float result = simd::horizontal_max(m);
  for (; j < n; ++j) {
    s[j] += bias[j];
    result = simd::nan_max(result, s[j]);
  }
  return result;
}

float f32_online_softmax_step(float* s, Index len, float block_max, bool first_block,
                              float& running_max, float& running_sum) {
  const float new_max = simd::nan_max(running_max, block_max);
  // 0 on the first block (exp(-inf)); a row with no finite score stays NaN, as PyTorch. Once a
  // row's max has settled most blocks leave it unchanged: skip exp's call then.
  const float alpha = first_block              ? 0.0f
                      : new_max == running_max ? 1.0f
                                               : std::exp(running_max - new_max);
  // A max of -inf means no visible key yet (fill -inf), where exp(s - max) would be NaN (if max
  // is -inf, don't compute -inf - -inf): such a block contributes nothing.
  float block_sum = 0.0f;
  if (new_max == -std::numeric_limits<float>::infinity()) {
    std::fill(s, s + len, 0.0f);
  } else {
    block_sum = kernel_table().exp_shifted_sum(s, len, new_max);
  }
  running_sum = alpha * running_sum + block_sum;
  running_max = new_max;
  return alpha;
}

namespace {

void scale_row(float* row, Index n, float factor) {
  for (Index i = 0; i < n; ++i) row[i] *= factor;
}

}  // namespace

void f32_softmax_row(float* row, Index n) {
  const float max = f32_row_max(row, n);
  scale_row(row, n, 1.0f / kernel_table().exp_shifted_sum_full(row, n, max));
}

float f32_pooled_softmax_row(float* row, Index n, float max, float extra) {
  const float inverse = 1.0f / (kernel_table().exp_shifted_sum(row, n, max) + extra);
  scale_row(row, n, inverse);
  return inverse;
}

float f32_softmax_backward_row(const float* p, float* ds, Index n, float scale) {
  float delta = 0.0f;
  for (Index j = 0; j < n; ++j) delta += p[j] * ds[j];
  for (Index j = 0; j < n; ++j) ds[j] = scale * p[j] * (ds[j] - delta);
  return delta;
}

}  // namespace attn::detail
