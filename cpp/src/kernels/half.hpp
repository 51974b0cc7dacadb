#pragma once
// IEEE 754 half precision (binary16) for storage: a KV cache may keep its keys and values as
// halves (half the memory) and widen them to float32 as the fused kernel reads them.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "attn/tensor.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

// x rounded to the nearest half, ties to even: past 65504 (from 65520 on) to infinity, below
// 2^-14 to a subnormal or zero; a NaN stays a NaN.
inline uint16_t float_to_half(float x) {
  uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  f &= 0x7fffffffu;
  if (f >= 0x7f800000u) return sign | (f > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (f >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above
  if (f < 0x38800000u) {                        // below 2^-14: multiples of 2^-24
    float magnitude;
    std::memcpy(&magnitude, &f, sizeof magnitude);
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 0x1p24f));
  }
  // The exponent rebiased (127 - 15 = 112), 13 mantissa bits rounded off; a carry moves into
  // the exponent, up to infinity, as it should.
  uint32_t h = (f - 0x38000000u) >> 13;
  const uint32_t rest = f & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

// out[i] = the half in[i], widened exactly, for i < n.
inline void f32_from_halves(const uint16_t* in, Index n, float* out) {
  Index i = 0;
  for (; i + 8 <= n; i += 8) {
    simd::F32x4 low, high;
    simd::load_halves(in + i, low, high);
    simd::store(out + i, low);
    simd::store(out + i + 4, high);
  }
  for (; i + 4 <= n; i += 4) simd::store(out + i, simd::load_half(in + i));
  if (i < n) {
    uint16_t tail[4] = {0, 0, 0, 0};
    float widened[4];
    std::memcpy(tail, in + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
    simd::store(widened, simd::load_half(tail));
    std::memcpy(out + i, widened, static_cast<size_t>(n - i) * sizeof(float));
  }
}

}  // namespace attn::detail
