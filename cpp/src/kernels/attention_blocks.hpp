#pragma once
// The fused forward's two hot loops over one key block: the scores with each row's max, and the
// pooling with the online softmax's rescaling. They are the only code that multiplies inside
// the forward, and they are reached through BlockKernels (block_kernels.hpp), so that the wasm
// package can put the same code compiled with fused multiply-add (cpp/relaxed) in their place.
// Header-only for that reason: both compilations include this file.

#include <algorithm>
#include <array>
#include <limits>

#include "gemm.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

template <int Rows>
std::array<const float*, Rows> row_array(const float* const* rows) {
  std::array<const float*, Rows> array;
  for (int r = 0; r < Rows; ++r) array[r] = rows[r];
  return array;
}

// Scores of Rows query rows against the `len` keys of a packed block, into s[r], and each row's
// maximum taken on the way (the tiles are in registers then, which saves a pass).
// Flat signatures (pointers and integers only, the rows as arrays of pointers): see
// block_kernels.hpp.
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

}  // namespace attn::detail
