#include "gemm.hpp"

#include <algorithm>
#include <cassert>
#include <vector>

#include "checks.hpp"
#include "floats.hpp"
#include "kernel_table.hpp"
#include "parallel/split.hpp"

namespace attn::detail {

namespace {

// A parallel product's task: 32 rows by 4 panels (64 columns) of C.
constexpr Index kTaskRows = 32, kTaskPanels = 4;

// Four rows of B (row stride ldb), entries [0, depth) for depth a multiple of 4, scaled and
// written as four columns of a panel: out[t * kPanel + r] = b[r * ldb + t] * scale, the same
// products as one entry at a time, through 4x4 transposes in registers.
void transpose_rows(const float* b, Index ldb, Index depth, float scale, float* out) {
  const simd::F32x4 factor = simd::splat(scale);
  for (Index t = 0; t < depth; t += 4) {
    simd::F32x4 block[4];
    for (int r = 0; r < 4; ++r) block[r] = simd::load(b + r * ldb + t);
    simd::transpose(block);
    for (int i = 0; i < 4; ++i) simd::store(out + (t + i) * kPanel, block[i] * factor);
  }
}

}  // namespace

void f32_pack_panels(const float* b, Index ldb, Index k, Index n, bool transposed, float* packed,
                     float scale) {
  assert(k >= 0 && n >= 0 && ldb >= (transposed ? k : n));
  // A run of panels per task: each panel is written by one task alone.
  run_ranges(round_up(n, kPanel) / kPanel, k * kPanel, [&](Index first, Index last) {
    for (Index j0 = first * kPanel; j0 < std::min(n, last * kPanel); j0 += kPanel) {
      const Index width = std::min(kPanel, n - j0);
      float* panel = packed + j0 * k;
      if (transposed) {  // B's rows are the panel's columns: read each row once, contiguously
        // A whole panel four rows by four entries at a time; what is left entry by entry.
        const Index blocked = width == kPanel ? k / 4 * 4 : 0;
        for (Index c = 0; blocked > 0 && c < kPanel; c += 4) {
          transpose_rows(b + (j0 + c) * ldb, ldb, blocked, scale, panel + c);
        }
        for (Index c = 0; c < width; ++c) {
          const float* row = b + (j0 + c) * ldb;
          for (Index t = blocked; t < k; ++t) panel[t * kPanel + c] = row[t] * scale;
        }
      } else {  // 16 contiguous entries of each row of B are one row of the panel
        for (Index t = 0; t < k; ++t) {
          const float* row = b + t * ldb + j0;
          for (Index c = 0; c < width; ++c) panel[t * kPanel + c] = row[c] * scale;
        }
      }
      if (width < kPanel) {
        for (Index t = 0; t < k; ++t)
          std::fill(panel + t * kPanel + width, panel + (t + 1) * kPanel, 0.0f);
      }
    }
  });
}

void f32_gemm_panels_serial(const float* a, Index lda, Index m, Index depth, const float* packed,
                            Index panel_stride, Index n, float* c, Index ldc, bool accumulate) {
  // The loop reads depth rows of every panel and writes n columns of m rows: the panels must be
  // that deep, and rows of A and C must not overlap.
  assert(m >= 0 && n >= 0 && depth >= 0);
  assert(panel_stride >= depth * kPanel);
  assert(m <= 1 || (lda >= depth && ldc >= n));
  assert((m == 0 || n == 0) || (c && (depth == 0 || (a && packed))));
  kernel_table().gemm_panels(a, lda, m, depth, packed, panel_stride, n, c, ldc, accumulate);
}

void f32_gemm_panels(const float* a, Index lda, Index m, Index depth, const float* packed,
                     Index panel_stride, Index n, float* c, Index ldc, bool accumulate) {
  if (!worth_splitting(m * n * depth)) {
    f32_gemm_panels_serial(a, lda, m, depth, packed, panel_stride, n, c, ldc, accumulate);
    return;
  }
  // 2-D tiles of C, several per thread, each the loop on a corner of A, B and C: every element
  // still sums over depth in the same order, so the result does not depend on the split.
  const Index row_tiles = (m + kTaskRows - 1) / kTaskRows;
  const Index column_tiles = (round_up(n, kPanel) / kPanel + kTaskPanels - 1) / kTaskPanels;
  thread_pool().run(row_tiles * column_tiles, [&](Index task, int) {
    const Index r0 = task / column_tiles * kTaskRows, p0 = task % column_tiles * kTaskPanels;
    f32_gemm_panels_serial(a + r0 * lda, lda, std::min(kTaskRows, m - r0), depth,
                           packed + p0 * panel_stride, panel_stride,
                           std::min(kTaskPanels * kPanel, n - p0 * kPanel),
                           c + r0 * ldc + p0 * kPanel, ldc, accumulate);
  });
}

void f32_gemm_packed(const float* a, Index lda, Index m, Index k, const float* packed, Index n,
                     float* c, Index ldc) {
  f32_gemm_panels(a, lda, m, k, packed, kPanel * k, n, c, ldc);
}

namespace {

// f32_pack_panels into a buffer of its own: a vector for panels kept (pack, pack_transposed), or
// for one call's product Floats, which skips zeroing what the packing writes whole.
template <typename Buffer>
Buffer pack_panels(const float* b, Index ldb, Index k, Index n, bool transposed) {
  Buffer packed(round_up(n, kPanel) * k);
  f32_pack_panels(b, ldb, k, n, transposed, packed.data());
  return packed;
}

Matrix multiply_packed(const MatrixRef& a, const float* packed, Index n) {
  Matrix c(a.rows(), n);
  f32_gemm_packed(a.data(), a.outerStride(), a.rows(), a.cols(), packed, n, c.data(), n);
  return c;
}

}  // namespace

void f32_gemm(const float* a, Index m, Index k, const float* b, Index n, bool b_transposed,
              float* c) {
  const Floats packed = pack_panels<Floats>(b, b_transposed ? k : n, k, n, b_transposed);
  f32_gemm_packed(a, k, m, k, packed.data(), n, c, n);
}

Matrix matmul(const MatrixRef& a, const MatrixRef& b) {
  const Floats packed =
      pack_panels<Floats>(b.data(), b.outerStride(), b.rows(), b.cols(), /*transposed=*/false);
  return multiply_packed(a, packed.data(), b.cols());
}

Matrix matmul_transposed(const MatrixRef& a, const MatrixRef& b) {
  const Floats packed =
      pack_panels<Floats>(b.data(), b.outerStride(), b.cols(), b.rows(), /*transposed=*/true);
  return multiply_packed(a, packed.data(), b.rows());
}

std::vector<float> pack_transposed(const MatrixRef& w) {
  return pack_panels<std::vector<float>>(w.data(), w.outerStride(), w.cols(), w.rows(),
                                         /*transposed=*/true);
}

std::vector<float> pack(const MatrixRef& b) {
  return pack_panels<std::vector<float>>(b.data(), b.outerStride(), b.rows(), b.cols(),
                                         /*transposed=*/false);
}

Matrix matmul_transposed_packed(const MatrixRef& x, const std::vector<float>& packed_w, Index n) {
  return multiply_packed(x, packed_w.data(), n);
}

}  // namespace attn::detail
