#pragma once
// Two other forms of the 2x16 micro-kernel loop (microkernel_loop.hpp), for comparing how
// engines compile them (scripts/bench/engines/engines.js --variants; docs/performance.md, "Firefox
// (SpiderMonkey) against Chromium (V8)"). Same sums in the same order, so the same result:
//   indexed  loads at a[r] + t and b + t * 16 + 4n, a scaled index per step instead of pointers
//            that step (wasm has no scaled addressing: the engine computes each address);
//   shuffle  A's rows read four floats at a time, each lane broadcast by an i32x4 shuffle,
//            instead of one v128.load32_splat per row and step.
// wasm only (the shuffle is SIMD128's).

#include <wasm_simd128.h>

#include "kernels/gemm.hpp"

namespace variants {

using attn::Index;
using attn::simd::F32x4;

// `calls` times: the accumulators zeroed, `steps` adding the products over all of depth into
// them, every accumulator fed to the sink (as in microkernel_loop).
template <typename Steps>
inline float repeat(int calls, Steps steps) {
  F32x4 sink = attn::simd::splat(0.0f);
  for (int i = 0; i < calls; ++i) {
    F32x4 c[2][4];
    for (auto& row : c)
      for (auto& v : row) v = attn::simd::splat(0.0f);
    steps(c);
    for (int v = 0; v < 4; ++v) sink = sink + c[0][v] + c[1][v];
  }
  return attn::simd::horizontal_sum(sink);
}

inline float indexed(const float* a, const float* b, Index d, int calls) {
  return repeat(calls, [=](F32x4(&c)[2][4]) {
    for (Index t = 0; t < d; ++t) {
      const F32x4 x0 = attn::simd::splat(a[t]), x1 = attn::simd::splat(a[d + t]);
      for (int n = 0; n < 4; ++n) {
        const F32x4 y = attn::simd::load(b + t * attn::detail::kPanel + 4 * n);
        c[0][n] = attn::simd::multiply_add(x0, y, c[0][n]);
        c[1][n] = attn::simd::multiply_add(x1, y, c[1][n]);
      }
    }
  });
}

// Lane `L` of v in every lane.
template <int L>
inline F32x4 broadcast(v128_t v) {
  return {wasm_i32x4_shuffle(v, v, L, L, L, L)};
}

// Four depth steps of both rows from one load of each row (d a multiple of 4).
template <int L>
inline void step(v128_t a0, v128_t a1, const float* b, F32x4 (&c)[2][4]) {
  const F32x4 x0 = broadcast<L>(a0), x1 = broadcast<L>(a1);
  for (int n = 0; n < 4; ++n) {
    const F32x4 y = attn::simd::load(b + L * attn::detail::kPanel + 4 * n);
    c[0][n] = attn::simd::multiply_add(x0, y, c[0][n]);
    c[1][n] = attn::simd::multiply_add(x1, y, c[1][n]);
  }
}

inline float shuffle(const float* a, const float* b, Index d, int calls) {
  return repeat(calls, [=](F32x4(&c)[2][4]) {
    const float* bt = b;
    for (Index t = 0; t < d; t += 4, bt += 4 * attn::detail::kPanel) {
      const v128_t a0 = wasm_v128_load(a + t), a1 = wasm_v128_load(a + d + t);
      step<0>(a0, a1, bt, c);
      step<1>(a0, a1, bt, c);
      step<2>(a0, a1, bt, c);
      step<3>(a0, a1, bt, c);
    }
  });
}

}  // namespace variants
