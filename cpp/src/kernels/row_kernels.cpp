#include "row_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>
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

namespace {

// The modifiers of four lanes: softcapped, then ALiBi's bias (minus_slope * |distance|), and
// the softcap's derivative 1 - tanh^2 when asked.
template <bool kCap, bool kSlope>
F32x4 modify(F32x4 x, F32x4 cap, F32x4 inverse_cap, F32x4 minus_slope, F32x4 distance,
             F32x4* derivative) {
  if constexpr (kCap) {
    const F32x4 tanh = simd::tanh(x * inverse_cap);
    if (derivative) *derivative = simd::splat(1.0f) - tanh * tanh;
    x = cap * tanh;
  }
  if constexpr (kSlope) x = simd::multiply_add(minus_slope, simd::abs(distance), x);
  return x;
}

template <bool kCap, bool kSlope>
float modify_scores(float* s, Index n, float cap, float slope, Index offset, float* derivative) {
  const F32x4 c = simd::splat(cap), inverse = simd::splat(1.0f / cap);
  const F32x4 minus_slope = simd::splat(-slope), step = simd::splat(4.0f);
  // |offset - j| as floats, exact below 2^24; four lanes stepping by 4.
  F32x4 distance = simd::load(
      std::array<float, 4>{static_cast<float>(offset), static_cast<float>(offset - 1),
                           static_cast<float>(offset - 2), static_cast<float>(offset - 3)}
          .data());
  F32x4 max = simd::splat(-std::numeric_limits<float>::infinity()), grad;
  F32x4* want_grad = kCap && derivative ? &grad : nullptr;
  Index j = 0;
  for (; j + 4 <= n; j += 4) {
    const F32x4 x =
        modify<kCap, kSlope>(simd::load(s + j), c, inverse, minus_slope, distance, want_grad);
    simd::store(s + j, x);
    if (want_grad) simd::store(derivative + j, grad);
    max = simd::max(max, x);
    distance = distance - step;
  }
  float result = simd::horizontal_max(max);
  if (j < n) {  // the tail through one padded vector, so every score takes the same path
    alignas(16) float tail[4] = {0.0f, 0.0f, 0.0f, 0.0f}, tail_grad[4];
    std::copy(s + j, s + n, tail);
    simd::store(
        tail, modify<kCap, kSlope>(simd::load(tail), c, inverse, minus_slope, distance, want_grad));
    if (want_grad) simd::store(tail_grad, grad);
    for (Index t = 0; t < n - j; ++t) {
      s[j + t] = tail[t];
      if (want_grad) derivative[j + t] = tail_grad[t];
      result = simd::nan_max(result, tail[t]);
    }
  }
  return result;
}

}  // namespace

float f32_modify_scores(float* s, Index n, float cap, float slope, Index offset,
                        float* derivative) {
  if (cap > 0.0f) {
    return slope != 0.0f ? modify_scores<true, true>(s, n, cap, slope, offset, derivative)
                         : modify_scores<true, false>(s, n, cap, slope, offset, derivative);
  }
  return slope != 0.0f ? modify_scores<false, true>(s, n, cap, slope, offset, derivative)
                       : f32_row_max(s, n);
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
    block_sum = f32_exp_shifted_sum(s, len, new_max);
  }
  running_sum = alpha * running_sum + block_sum;
  running_max = new_max;
  return alpha;
}

void f32_softmax_row(float* row, Index n) { f32_softmax_row(row, n, f32_row_max(row, n)); }

float f32_softmax_row(float* row, Index n, float max, float extra) {
  const float inverse = 1.0f / (f32_exp_shifted_sum(row, n, max) + extra);
  for (Index i = 0; i < n; ++i) row[i] *= inverse;
  return inverse;
}

float f32_softmax_backward_row(const float* p, float* ds, Index n, float scale) {
  float delta = 0.0f;
  for (Index j = 0; j < n; ++j) delta += p[j] * ds[j];
  for (Index j = 0; j < n; ++j) ds[j] = scale * p[j] * (ds[j] - delta);
  return delta;
}

}  // namespace attn::detail
