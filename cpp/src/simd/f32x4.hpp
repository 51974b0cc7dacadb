#pragma once
// A 4-lane float vector: the portable layer the hot kernels are written in, once. A build picks
// one backend:
//   wasmsimd  wasm with -msimd128: every operation one SIMD128 instruction;
//   sse       native x86-64 (SSE2 is its baseline; FMA and SSE4.1 are used when enabled);
//   scalar    everything else, and any build with ATTN_SCALAR_KERNELS defined (the scalar wasm
//             build): four floats and plain loops, the kernels' scalar twin.

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(ATTN_SCALAR_KERNELS)
#define ATTN_SIMD_SCALAR 1
#elif defined(__wasm_simd128__)
#define ATTN_SIMD_WASM 1
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#define ATTN_SIMD_SSE 1
#include <immintrin.h>
#else
#define ATTN_SIMD_SCALAR 1
#endif

namespace attn::simd {

#if defined(ATTN_SIMD_WASM)

struct F32x4 {
  v128_t v;
};
inline F32x4 load(const float* p) { return {wasm_v128_load(p)}; }
inline void store(float* p, F32x4 a) { wasm_v128_store(p, a.v); }
inline F32x4 splat(float x) { return {wasm_f32x4_splat(x)}; }
inline F32x4 operator+(F32x4 a, F32x4 b) { return {wasm_f32x4_add(a.v, b.v)}; }
inline F32x4 operator-(F32x4 a, F32x4 b) { return {wasm_f32x4_sub(a.v, b.v)}; }
inline F32x4 operator*(F32x4 a, F32x4 b) { return {wasm_f32x4_mul(a.v, b.v)}; }
// a * b + c; SIMD128 has no fused multiply-add, so two instructions.
inline F32x4 multiply_add(F32x4 a, F32x4 b, F32x4 c) { return a * b + c; }
// max(a, b) = a < b ? b : a, and min likewise: one x86 instruction each, where wasm's NaN-exact
// f32x4.max costs several. A NaN in `a` survives; one in `b` may not, which the row max can
// afford: exp(NaN - max) still turns that row NaN.
inline F32x4 max(F32x4 a, F32x4 b) { return {wasm_f32x4_pmax(a.v, b.v)}; }
inline F32x4 min(F32x4 a, F32x4 b) { return {wasm_f32x4_pmin(a.v, b.v)}; }
// Bit-level helpers for exp: integer add and left shift on the lanes' bits, a < b as a lane
// mask, and a with the masked lanes zeroed.
inline F32x4 add_bits(F32x4 a, int32_t k) { return {wasm_i32x4_add(a.v, wasm_i32x4_splat(k))}; }
template <int kShift>
inline F32x4 shift_bits_left(F32x4 a) {
  return {wasm_i32x4_shl(a.v, kShift)};
}
inline F32x4 less_than(F32x4 a, F32x4 b) { return {wasm_f32x4_lt(a.v, b.v)}; }
inline F32x4 zero_where(F32x4 a, F32x4 mask) { return {wasm_v128_andnot(a.v, mask.v)}; }
inline float lane(F32x4 a, int i) {
  alignas(16) float out[4];
  wasm_v128_store(out, a.v);
  return out[i];
}

#elif defined(ATTN_SIMD_SSE)

struct F32x4 {
  __m128 v;
};
inline F32x4 load(const float* p) { return {_mm_loadu_ps(p)}; }
inline void store(float* p, F32x4 a) { _mm_storeu_ps(p, a.v); }
inline F32x4 splat(float x) { return {_mm_set1_ps(x)}; }
inline F32x4 operator+(F32x4 a, F32x4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline F32x4 operator-(F32x4 a, F32x4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline F32x4 operator*(F32x4 a, F32x4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline F32x4 multiply_add(F32x4 a, F32x4 b, F32x4 c) {
#if defined(__FMA__)
  return {_mm_fmadd_ps(a.v, b.v, c.v)};
#else
  return a * b + c;
#endif
}
// maxps returns its second operand when either is NaN: operands swapped, this is the same
// a < b ? b : a as the wasm backend.
inline F32x4 max(F32x4 a, F32x4 b) { return {_mm_max_ps(b.v, a.v)}; }
inline F32x4 min(F32x4 a, F32x4 b) { return {_mm_min_ps(b.v, a.v)}; }
inline F32x4 add_bits(F32x4 a, int32_t k) {
  return {_mm_castsi128_ps(_mm_add_epi32(_mm_castps_si128(a.v), _mm_set1_epi32(k)))};
}
template <int kShift>
inline F32x4 shift_bits_left(F32x4 a) {
  return {_mm_castsi128_ps(_mm_slli_epi32(_mm_castps_si128(a.v), kShift))};
}
inline F32x4 less_than(F32x4 a, F32x4 b) { return {_mm_cmplt_ps(a.v, b.v)}; }
inline F32x4 zero_where(F32x4 a, F32x4 mask) { return {_mm_andnot_ps(mask.v, a.v)}; }
inline float lane(F32x4 a, int i) {
  alignas(16) float out[4];
  _mm_store_ps(out, a.v);
  return out[i];
}

#else

struct F32x4 {
  float v[4];
};
inline F32x4 load(const float* p) {
  F32x4 r;
  std::memcpy(r.v, p, sizeof r.v);
  return r;
}
inline void store(float* p, F32x4 a) { std::memcpy(p, a.v, sizeof a.v); }
inline F32x4 splat(float x) { return {{x, x, x, x}}; }
template <typename Op>
inline F32x4 lanewise(F32x4 a, F32x4 b, Op op) {
  return {{op(a.v[0], b.v[0]), op(a.v[1], b.v[1]), op(a.v[2], b.v[2]), op(a.v[3], b.v[3])}};
}
inline F32x4 operator+(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x + y; });
}
inline F32x4 operator-(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x - y; });
}
inline F32x4 operator*(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x * y; });
}
inline F32x4 multiply_add(F32x4 a, F32x4 b, F32x4 c) { return a * b + c; }
// The same semantics as the SIMD backends: a < b ? b : a.
inline F32x4 max(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x < y ? y : x; });
}
inline F32x4 min(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return y < x ? y : x; });
}
inline float lane(F32x4 a, int i) { return a.v[i]; }
// The scalar twin takes exp from the C library.
inline F32x4 exp(F32x4 x) {
  return {{std::exp(x.v[0]), std::exp(x.v[1]), std::exp(x.v[2]), std::exp(x.v[3])}};
}

#endif

#if !defined(ATTN_SIMD_SCALAR)
// exp(x) for a vector, as 2^t with t = x log2(e) = n + r, n an integer and |r| <= 1/2: 2^r from
// Cephes' exp2f polynomial (relative error 1.7e-7; |x| log2(e) ulp from the product), 2^n
// written into the exponent bits. Below -87.3 the result is exactly 0 (so masked weights are
// exactly zero); NaN stays NaN.
inline F32x4 exp(F32x4 x) {
  // min with the input first keeps a NaN input NaN. No lower clamp: where n's bits wrap, the
  // underflow mask at the end zeroes the result anyway.
  const F32x4 t = min(x, splat(88.3f)) * splat(1.44269504088896341f);
  // Adding 1.5 * 2^23 rounds t to the integer n held in the low mantissa bits: n as a float and,
  // as bits, the exponent of 2^n, without float<->int conversions (which V8 expands into several
  // instructions each).
  const F32x4 magic = splat(12582912.0f);
  const F32x4 shifted = t + magic;
  const F32x4 r = t - (shifted - magic);
  F32x4 p = splat(1.535336188319500e-4f);
  p = multiply_add(p, r, splat(1.339887440266574e-3f));
  p = multiply_add(p, r, splat(9.618437357674640e-3f));
  p = multiply_add(p, r, splat(5.550332471162809e-2f));
  p = multiply_add(p, r, splat(2.402264791363012e-1f));
  p = multiply_add(p, r, splat(6.931472028550421e-1f));
  p = multiply_add(p, r, splat(1.0f));
  // 2^n: the bits of `shifted` are those of the magic number (0x4B400000) plus n; re-biased by
  // 127 and moved into the exponent field.
  const F32x4 scale = shift_bits_left<23>(add_bits(shifted, 127 - 0x4B400000));
  return zero_where(p * scale, less_than(x, splat(-87.3f)));
}
#endif

// A scalar max that keeps a NaN from either side, for combining row maxima.
inline float nan_max(float x, float y) { return x != x || y != y ? x + y : (x > y ? x : y); }

inline float horizontal_max(F32x4 a) {
  return nan_max(nan_max(lane(a, 0), lane(a, 1)), nan_max(lane(a, 2), lane(a, 3)));
}

inline float horizontal_sum(F32x4 a) {
  return (lane(a, 0) + lane(a, 1)) + (lane(a, 2) + lane(a, 3));
}

}  // namespace attn::simd
