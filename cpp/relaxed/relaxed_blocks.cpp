// The fused forward's block loops (kernels/attention_blocks.hpp) compiled with relaxed SIMD, so
// that the micro-kernel's multiply-adds become f32x4.relaxed_madd (one fused instruction on
// CPUs with FMA). Built by clang-16 and wasm-ld-16 alone into a module that imports the main
// module's memory and has no globals, data or imports of its own (cmake/relaxed.cmake checks):
// the loader (web/lib/relaxed.js) puts these exports in place of the core's with
// use_block_kernels. The names say the tile height: 1 or 2 rows.

#include "kernels/block_kernels.hpp"

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
