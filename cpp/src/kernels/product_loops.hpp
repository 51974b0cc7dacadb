#pragma once
// The loops every matrix product of the core runs in: the fused forward's two over one key block
// (the scores with each row's max, and the pooling with the online softmax's rescaling) and the
// exp between them, and the
// GEMM over packed panels (projections, the backward, bmm, the GRU); and the score modifiers
// between them (softcap, ALiBi), whose tanh is multiply-adds too. They are reached through
// the kernel table (kernel_table.hpp), so that the wasm package can put the same code compiled
// with fused multiply-add (cpp/relaxed) in their place. Header-only for that reason: both
// compilations include this file. Flat signatures (pointers and integers only, rows as arrays
// of pointers), so that a function of another wasm instance can stand in.

#include <algorithm>
#include <array>
#include <limits>

#include "gemm.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

// The flat signatures' row pointers as the micro-kernel takes them.
template <int Rows>
std::array<const float*, Rows> row_array(const float* const* rows) {
  std::array<const float*, Rows> array;
  for (int r = 0; r < Rows; ++r) array[r] = rows[r];
  return array;
}

// Scores of Rows query rows against the `len` keys of a packed block, into s[r], and each row's
// maximum taken on the way (the tiles are in registers then, which saves a pass).
template <int Rows>
void score_block(const float* const* q, const float* packed, Index d, Index len, float* const* s,
                 float* max) {
  simd::F32x4 running[Rows];
  for (int r = 0; r < Rows; ++r) running[r] = simd::splat(kNegativeInfinity);
  const Index full_tiles_end = len / kPanel * kPanel;
  for (Index t = 0; t < len; t += kPanel) {
    simd::F32x4 c[Rows][4];
    f32_gemm_tile<Rows>(row_array<Rows>(q), packed + t * d, d, kPanel, c);
    for (int r = 0; r < Rows; ++r) {
      for (int n = 0; n < 4; ++n) simd::store(s[r] + t + 4 * n, c[r][n]);
      if (t < full_tiles_end) {  // a partial tile's padded lanes must not count
        for (int n = 0; n < 4; ++n) running[r] = simd::max(running[r], c[r][n]);
      }
    }
  }
  for (int r = 0; r < Rows; ++r) {
    max[r] = simd::horizontal_max(running[r]);
    for (Index j = full_tiles_end; j < len; ++j) max[r] = simd::nan_max(max[r], s[r][j]);
  }
}

// out[r] = alpha[r] * out[r] + P (Rows x len) * V (len x dv), V as packed panels of 16 columns
// (each [stride][16]) starting at key j0.
template <int Rows>
void pool_block(const float* const* p, const float* packed_v, Index stride, Index j0, Index len,
                Index dv, const float* alpha, float* const* out) {
  for (Index c = 0; c < dv; c += kPanel) {
    simd::F32x4 acc[Rows][4];
    f32_gemm_tile<Rows>(row_array<Rows>(p), packed_v + c * stride + j0 * kPanel, len, kPanel, acc);
    const Index columns = std::min(kPanel, dv - c);
    for (int r = 0; r < Rows; ++r) store_row_tile(out[r] + c, acc[r], columns, &alpha[r]);
  }
}

// Panels per column block: 4 panels of a depth-512 operand are 128 KB, which stays in L2 while
// every row pair of A passes over it.
constexpr Index kPanelsPerBlock = 4;

// C [m, n] (row stride ldc) = A [m, depth] (row stride lda) * B, or C += A * B when
// `accumulate`; B as panels of 16 columns, panel p at packed + p * panel_stride (as
// f32_gemm_panels, gemm.hpp, which calls this through the kernel table).
inline void gemm_panels(const float* a, Index lda, Index m, Index depth, const float* packed,
                        Index panel_stride, Index n, float* c, Index ldc, bool accumulate) {
  const Index panels = round_up(n, kPanel) / kPanel;
  const float one = 1.0f;
  const float* alpha = accumulate ? &one : nullptr;
  for (Index block = 0; block < panels; block += kPanelsPerBlock) {
    const Index block_end = std::min(panels, block + kPanelsPerBlock);
    for (Index i0 = 0; i0 < m; i0 += 2) {
      for (Index p = block; p < block_end; ++p) {
        const float* b = packed + p * panel_stride;
        const Index columns = std::min(kPanel, n - p * kPanel);
        float* c0 = c + i0 * ldc + p * kPanel;
        if (i0 + 1 == m) {  // an odd last row: a tile of its own
          simd::F32x4 acc[1][4];
          f32_gemm_tile<1>({a + i0 * lda}, b, depth, kPanel, acc);
          store_row_tile(c0, acc[0], columns, alpha);
          continue;
        }
        simd::F32x4 acc[2][4];
        f32_gemm_tile<2>({a + i0 * lda, a + (i0 + 1) * lda}, b, depth, kPanel, acc);
        store_row_tile(c0, acc[0], columns, alpha);
        store_row_tile(c0 + ldc, acc[1], columns, alpha);
      }
    }
  }
}

// The fused forward's and backward's weights below 2^-100 of the row's (running) max are exactly
// 0. They go on into matrix products, where a weight near FLT_MIN times a value below 1 is
// subnormal, and every operation that makes or reads a subnormal costs x86 a microcode assist:
// ALiBi with a slope of 1/2 at n = 2048, where most of a row's weights are tiny, ran the forward
// 1.6x and the backward 1.8x slower than without the bias, logits 100x sharper 1.35x and 2.4x.
// Below 2^-100, a product stays normal for values down to 2^-26. What is dropped changes an
// output by at most n 2^-100 max|v|, far below one rounding of max|v| at any length an index
// can hold.
constexpr int kPooledLowest = -100;
// The softmax rows' weights (row_kernels.hpp), which the caller receives: exp down to float's
// normal range, as PyTorch's.
constexpr int kSoftmaxLowest = simd::kLowestExponent;

// s[j] = exp(s[j] - max) for j < n, exactly 0 below 2^kLowest (simd::exp_nonpositive); returns
// their sum: the exp pass of the softmax rows (row_kernels.hpp) with kSoftmaxLowest, and with
// kPooledLowest, of the fused backward's rows and the fused forward's online-softmax step. Each
// calls it through the kernel table, so that the relaxed module fuses its polynomial's
// multiply-adds too.
template <int kLowest>
inline float exp_shifted_sum(float* s, Index n, float max) {
  const simd::F32x4 shift = simd::splat(max);
  simd::F32x4 sum = simd::splat(0.0f);
  Index j = 0;
  for (; j + 4 <= n; j += 4) {
    const simd::F32x4 e = simd::exp_nonpositive<kLowest>(simd::load(s + j) - shift);
    simd::store(s + j, e);
    sum = sum + e;
  }
  float total = simd::horizontal_sum(sum);
  if (j < n) {  // the tail through one padded vector, so every weight comes from the same exp
    alignas(16) float tail[4];
    std::fill(tail, tail + 4, kNegativeInfinity);
    std::copy(s + j, s + n, tail);
    simd::store(tail, simd::exp_nonpositive<kLowest>(simd::load(tail) - shift));
    for (Index t = 0; t < n - j; ++t) {
      s[j + t] = tail[t];
      total += tail[t];
    }
  }
  return total;
}

// The modifiers of four lanes: softcapped, then ALiBi's bias (minus_slope * |distance|), and
// the softcap's derivative 1 - tanh^2 when asked.
template <bool kCap, bool kSlope>
simd::F32x4 modify_lanes(simd::F32x4 x, simd::F32x4 cap, simd::F32x4 inverse_cap,
                         simd::F32x4 minus_slope, simd::F32x4 distance, simd::F32x4* derivative) {
  if constexpr (kCap) {
    const simd::F32x4 tanh = simd::tanh(x * inverse_cap);
    if (derivative) *derivative = simd::splat(1.0f) - tanh * tanh;
    x = cap * tanh;
  }
  if constexpr (kSlope) x = simd::multiply_add(minus_slope, simd::abs(distance), x);
  return x;
}

template <bool kCap, bool kSlope>
float modify_row(float* s, Index n, float cap, float slope, Index offset, float* derivative) {
  using simd::F32x4;
  const F32x4 c = simd::splat(cap), inverse = simd::splat(1.0f / cap);
  const F32x4 minus_slope = simd::splat(-slope), step = simd::splat(4.0f);
  // |offset - j| as floats, exact below 2^24; four lanes stepping by 4.
  F32x4 distance = simd::load(
      std::array<float, 4>{static_cast<float>(offset), static_cast<float>(offset - 1),
                           static_cast<float>(offset - 2), static_cast<float>(offset - 3)}
          .data());
  F32x4 max = simd::splat(kNegativeInfinity), grad;
  F32x4* want_grad = kCap && derivative ? &grad : nullptr;
  Index j = 0;
  for (; j + 4 <= n; j += 4) {
    const F32x4 x =
        modify_lanes<kCap, kSlope>(simd::load(s + j), c, inverse, minus_slope, distance, want_grad);
    simd::store(s + j, x);
    if (want_grad) simd::store(derivative + j, grad);
    max = simd::max(max, x);
    distance = distance - step;
  }
  float result = simd::horizontal_max(max);
  if (j < n) {  // the tail through one padded vector, so every score takes the same path
    alignas(16) float tail[4] = {0.0f, 0.0f, 0.0f, 0.0f}, tail_grad[4];
    std::copy(s + j, s + n, tail);
    simd::store(tail, modify_lanes<kCap, kSlope>(simd::load(tail), c, inverse, minus_slope,
                                                 distance, want_grad));
    if (want_grad) simd::store(tail_grad, grad);
    for (Index t = 0; t < n - j; ++t) {
      s[j + t] = tail[t];
      if (want_grad) derivative[j + t] = tail_grad[t];
      result = simd::nan_max(result, tail[t]);
    }
  }
  return result;
}

// The score modifiers of current models in place on s[j], j < n, in the documented order:
// softcapped when cap > 0 (s <- cap * tanh(s / cap), simd::tanh), then ALiBi's bias when
// slope != 0 (s <- s - slope * |offset - j|, offset the query's position less the first key's).
// At least one of the two must be asked for (a row with neither needs only f32_row_max).
// Returns the max of the result, the row's max in the same pass. With a softcap and derivative
// non-null, derivative[j] receives d(capped)/d(s) = 1 - tanh^2, the backward's factor. Here rather
// than with the row kernels so that the relaxed module compiles it too: the tanh's polynomials are
// 9 multiply-adds.
inline float modify_scores(float* s, Index n, float cap, float slope, Index offset,
                           float* derivative) {
  if (cap > 0.0f) {
    return slope != 0.0f ? modify_row<true, true>(s, n, cap, slope, offset, derivative)
                         : modify_row<true, false>(s, n, cap, slope, offset, derivative);
  }
  return modify_row<false, true>(s, n, cap, slope, offset, derivative);
}

}  // namespace attn::detail
