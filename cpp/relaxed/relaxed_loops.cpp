// The loops of the core's matrix products (kernels/product_loops.hpp) compiled with relaxed
// SIMD, so that the micro-kernel's multiply-adds become f32x4.relaxed_madd (one fused
// instruction on CPUs with FMA). Built by clang-16 and wasm-ld-16 alone (cmake/relaxed.cmake)
// into a module that imports the main module's memory and has no data of its own: the loader
// (web/lib/relaxed.js) gives it a stack and puts these exports in the kernel table
// (kernels/kernel_table.hpp). The numbers in the names are tile heights.

#include "kernels/product_loops.hpp"

#define ATTN_EXPORT(name) extern "C" __attribute__((export_name(name)))

using attn::Index;

ATTN_EXPORT("score_block_1")
void score_block_1(const float* const* q, const float* packed, Index d, Index len, float* const* s,
                   float* max) {
  attn::detail::score_block<1>(q, packed, d, len, s, max);
}
ATTN_EXPORT("score_block_2")
void score_block_2(const float* const* q, const float* packed, Index d, Index len, float* const* s,
                   float* max) {
  attn::detail::score_block<2>(q, packed, d, len, s, max);
}
ATTN_EXPORT("pool_block_1")
void pool_block_1(const float* const* p, const float* packed_v, Index stride, Index j0, Index len,
                  Index dv, const float* alpha, float* const* out) {
  attn::detail::pool_block<1>(p, packed_v, stride, j0, len, dv, alpha, out);
}
ATTN_EXPORT("pool_block_2")
void pool_block_2(const float* const* p, const float* packed_v, Index stride, Index j0, Index len,
                  Index dv, const float* alpha, float* const* out) {
  attn::detail::pool_block<2>(p, packed_v, stride, j0, len, dv, alpha, out);
}
ATTN_EXPORT("gemm_panels")
void gemm_panels(const float* a, Index lda, Index m, Index depth, const float* packed,
                 Index panel_stride, Index n, float* c, Index ldc, bool accumulate) {
  attn::detail::gemm_panels(a, lda, m, depth, packed, panel_stride, n, c, ldc, accumulate);
}
