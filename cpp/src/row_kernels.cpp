#include "row_kernels.hpp"

#include <algorithm>
#include <limits>

#include "simd/f32x4.hpp"

namespace attn::detail {

using simd::F32x4;

float f32_row_max(const float* s, Index n) {
  F32x4 m = simd::splat(-std::numeric_limits<float>::infinity());
  Index j = 0;
  for (; j + 4 <= n; j += 4) m = simd::max(m, simd::load(s + j));
  float result = simd::horizontal_max(m);
  for (; j < n; ++j) result = simd::nan_max(result, s[j]);
  return result;
}

float f32_exp_shifted_sum(float* s, Index n, float max) {
  const F32x4 shift = simd::splat(max);
  F32x4 sum = simd::splat(0.0f);
  Index j = 0;
  for (; j + 4 <= n; j += 4) {
    const F32x4 e = simd::exp_nonpositive(simd::load(s + j) - shift);
    simd::store(s + j, e);
    sum = sum + e;
  }
  float total = simd::horizontal_sum(sum);
  if (j < n) {  // the tail through one padded vector, so every weight comes from the same exp
    alignas(16) float tail[4];
    std::fill(tail, tail + 4, -std::numeric_limits<float>::infinity());
    std::copy(s + j, s + n, tail);
    simd::store(tail, simd::exp_nonpositive(simd::load(tail) - shift));
    for (Index t = 0; t < n - j; ++t) {
      s[j + t] = tail[t];
      total += tail[t];
    }
  }
  return total;
}

void f32_softmax_row(float* row, Index n) {
  const float inverse = 1.0f / f32_exp_shifted_sum(row, n, f32_row_max(row, n));
  for (Index i = 0; i < n; ++i) row[i] *= inverse;
}

}  // namespace attn::detail
