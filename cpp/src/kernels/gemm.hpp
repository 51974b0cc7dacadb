#pragma once
// Matrix products on the portable f32x4 layer: one register-blocked micro-kernel serves the
// attention scores, the pooling, the projections of multi-head attention and bmm.

#include <array>
#include <vector>

#include "attn/tensor.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

constexpr Index kPanel = 16;  // columns of B per micro-kernel call: 4 vectors

inline Index round_up(Index n, Index to) { return (n + to - 1) / to * to; }

// The micro-kernel: C (Rows x 16 columns) = A (Rows x depth, row r from a[r]) * B (depth x 16, row
// stride ldb), in registers. Two rows by 16 columns is 8 accumulators: with the 4 B loads and 2
// broadcasts that is 14 live vectors, within the 16 registers V8 gives wasm SIMD on x86 (2x16
// measured best). One row serves what has no partner: the odd last row of a product and the
// single query of a decode step, which a 2-row tile would compute twice. Each row sums over
// depth in the same order whatever Rows is, so a row's result does not depend on its partner.
// Its scalar twin is the same code on the scalar F32x4 backend.
template <int Rows>
inline void f32_gemm_tile(const std::array<const float*, Rows>& a, const float* b, Index depth,
                          Index ldb, simd::F32x4 (&c)[Rows][4]) {
  static_assert(Rows == 1 || Rows == 2, "tiles are 1 or 2 rows high");
  constexpr int N = 4;
  // Local accumulators, copied out at the end: accumulating into `c` itself kept g++ from holding
  // them in registers on the SSE backend, whose __m128 may alias the floats of B (native SDPA 33
  // vs 42 GFLOP/s).
  simd::F32x4 acc[Rows][N];
  const float* row[Rows];
  for (int r = 0; r < Rows; ++r) {
    row[r] = a[r];
    for (int n = 0; n < N; ++n) acc[r][n] = simd::splat(0.0f);
  }
  // Pointers that step, not an index t scaled into three addresses: wasm has no scaled
  // addressing, so V8 would compute each one, and this loop is short of instruction slots
  // (2x16 kernel at depth 64: 39 vs 35 GFLOP/s).
  for (const float* const end = row[0] + depth; row[0] != end; b += ldb) {
    simd::F32x4 x[Rows];
    for (int r = 0; r < Rows; ++r) x[r] = simd::splat(*row[r]++);
    for (int n = 0; n < N; ++n) {
      const simd::F32x4 y = simd::load_once(b + 4 * n);  // read by every row
      for (int r = 0; r < Rows; ++r) acc[r][n] = simd::multiply_add(x[r], y, acc[r][n]);
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (int n = 0; n < N; ++n) c[r][n] = acc[r][n];
}

// store_row_tile's partial tile (columns < 16), through a local row, so that nothing past
// `columns` is read or written. Out of line: with this path inside the pooling loop's function,
// Firefox 153's SpiderMonkey kept four of the micro-kernel's eight accumulators in stack slots
// (a load and a store each per depth step, the pooling at half of V8's speed); without it, they
// stay in registers. V8 kept them in registers either way and runs the same (measured with
// scripts/bench/engines/engines.js: docs/performance.md, "Firefox (SpiderMonkey) against Chromium
// (V8)").
[[gnu::noinline]] inline void store_partial_row_tile(float* out, const simd::F32x4 (&acc)[4],
                                                     Index columns, const float* alpha) {
  alignas(16) float row[kPanel];
  for (int v = 0; v < 4; ++v) simd::store(row + 4 * v, acc[v]);
  for (Index j = 0; j < columns; ++j) out[j] = alpha ? *alpha * out[j] + row[j] : row[j];
}

// Writes one row of an accumulator tile: out[0, columns) = acc, or alpha * out + acc when
// `alpha` is given (1 accumulates; the online softmax passes its rescaling factor). A partial
// tile (columns < 16) goes through a local row, so nothing past `columns` is read or written.
inline void store_row_tile(float* out, const simd::F32x4 (&acc)[4], Index columns,
                           const float* alpha = nullptr) {
  if (columns == kPanel) {
    for (int v = 0; v < 4; ++v) {
      const simd::F32x4 old =
          alpha ? simd::splat(*alpha) * simd::load(out + 4 * v) : simd::splat(0.0f);
      simd::store(out + 4 * v, alpha ? old + acc[v] : acc[v]);
    }
    return;
  }
  store_partial_row_tile(out, acc, columns, alpha);
}

// Packs the [k, n] operand B, times `scale`, as panels of 16 columns, each [k][16] and
// zero-padded past n, so that the micro-kernel reads 16 columns' t-th entries as 4 contiguous
// vectors. B is read row-major with row stride ldb: as [k, n] or, when `transposed`, as [n, k]
// (a weight in nn.Linear layout, or keys).
void f32_pack_panels(const float* b, Index ldb, Index k, Index n, bool transposed, float* packed,
                     float scale = 1.0f);

// C [m, n] (row stride ldc) = A [m, depth] (row stride lda) * B, or C += A * B when
// `accumulate`. B is given as panels of 16 columns: row t of panel p at
// packed[p * panel_stride + t * kPanel]. A panel_stride above depth * kPanel reads a run of rows
// of a taller packed operand: offset `packed` by first_row * kPanel to start there (a key block
// of packed K, a query block of packed Q).
void f32_gemm_panels(const float* a, Index lda, Index m, Index depth, const float* packed,
                     Index panel_stride, Index n, float* c, Index ldc, bool accumulate = false);

// The same on the calling thread alone, for a caller that is itself a task of a split (the
// backward's strip steps): it skips asking the pool whether to split, which takes the pool's
// lock, many times per strip from every thread.
void f32_gemm_panels_serial(const float* a, Index lda, Index m, Index depth, const float* packed,
                            Index panel_stride, Index n, float* c, Index ldc,
                            bool accumulate = false);

// C [m, n] (row stride ldc) = A [m, k] (row stride lda) * B given as packed panels.
void f32_gemm_packed(const float* a, Index lda, Index m, Index k, const float* packed, Index n,
                     float* c, Index ldc);

// C = A * B (B [k, n]) or A * B^T (B [n, k]), for contiguous row-major operands.
void f32_gemm(const float* a, Index m, Index k, const float* b, Index n, bool b_transposed,
              float* c);

// The same on Eigen matrices: a * b, and a * b^T (x W^T of nn.Linear, q k^T).
Matrix matmul(const MatrixRef& a, const MatrixRef& b);
Matrix matmul_transposed(const MatrixRef& a, const MatrixRef& b);

// W [n, k] (nn.Linear's [out, in]) packed once as the panels of W^T, for a weight that meets
// many inputs: x W^T is then matmul_transposed_packed(x, packed, n) with no packing per call.
std::vector<float> pack_transposed(const MatrixRef& w);
// B [k, n] itself packed once as panels (a weight W [out, in] as the right operand of dY W).
std::vector<float> pack(const MatrixRef& b);
Matrix matmul_transposed_packed(const MatrixRef& x, const std::vector<float>& packed_w, Index n);

}  // namespace attn::detail
