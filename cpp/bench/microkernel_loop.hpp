#pragma once
// The 2x16 GEMM micro-kernel called `calls` times on operands that stay in L1 (a: 2 rows of d,
// b: d x 16): the loop whose time is the micro-kernel's peak, for kernel_bench.cpp and, compiled
// with relaxed SIMD, for microkernel_module.cpp.

#include "kernels/gemm.hpp"
#include "kernels/simd/f32x4.hpp"

inline float microkernel_loop(const float* a, const float* b, attn::Index d, int calls) {
  attn::simd::F32x4 sink = attn::simd::splat(0.0f);
  for (int i = 0; i < calls; ++i) {
    attn::simd::F32x4 c[2][4];
    attn::detail::f32_gemm_tile<2>({a, a + d}, b, d, attn::detail::kPanel, c);
    // Every accumulator feeds the sink, so that none of the work can be left out.
    for (int v = 0; v < 4; ++v) sink = sink + c[0][v] + c[1][v];
  }
  return attn::simd::horizontal_sum(sink);
}
