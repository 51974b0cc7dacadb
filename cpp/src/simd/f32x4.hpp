#pragma once
// A 4-lane float vector: the portable layer the hot kernels are written in. Under wasm with
// -msimd128 it is a v128 and every operation one SIMD128 instruction; elsewhere (native, and
// the scalar wasm build) it is four floats and plain loops: the kernels' scalar twin, the same
// source compiled against the other half of this file.

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attn::simd {

#if defined(__wasm_simd128__)

constexpr const char* kBackend = "wasmsimd";

struct F32x4 {
  v128_t v;
};

inline F32x4 load(const float* p) { return {wasm_v128_load(p)}; }
inline void store(float* p, F32x4 a) { wasm_v128_store(p, a.v); }
inline F32x4 splat(float x) { return {wasm_f32x4_splat(x)}; }
inline F32x4 operator+(F32x4 a, F32x4 b) { return {wasm_f32x4_add(a.v, b.v)}; }
inline F32x4 operator-(F32x4 a, F32x4 b) { return {wasm_f32x4_sub(a.v, b.v)}; }
inline F32x4 operator*(F32x4 a, F32x4 b) { return {wasm_f32x4_mul(a.v, b.v)}; }
// max(a, b) = a < b ? b : a, and min likewise: one x86 instruction each, where wasm's NaN-exact
// f32x4.max costs several. A NaN in `a` survives; one in `b` may not, which the row max can
// afford: exp(NaN - max) still turns that row NaN.
inline F32x4 max(F32x4 a, F32x4 b) { return {wasm_f32x4_pmax(a.v, b.v)}; }
inline F32x4 min(F32x4 a, F32x4 b) { return {wasm_f32x4_pmin(a.v, b.v)}; }
inline float lane(F32x4 a, int i) {
  alignas(16) float out[4];
  wasm_v128_store(out, a.v);
  return out[i];
}

// exp(x) for a vector: Cephes' range reduction x = n ln2 + r and a degree-5 polynomial for
// exp(r), about 2 ulp over [-87, 88]. Below -87.3 the result is exactly 0 (so masked weights
// are exactly zero); NaN stays NaN.
inline F32x4 exp(F32x4 x) {
  const v128_t input = x.v;
  // pmax/pmin with the input first keep a NaN input NaN.
  v128_t v =
      wasm_f32x4_pmin(wasm_f32x4_pmax(input, wasm_f32x4_splat(-87.3f)), wasm_f32x4_splat(88.3f));
  // Adding 1.5 * 2^23 rounds x / ln2 to an integer n held in the low mantissa bits: n as a float
  // and, as an int, the exponent of 2^n, without float<->int conversions (which V8 expands into
  // several instructions each).
  const v128_t magic = wasm_f32x4_splat(12582912.0f);
  const v128_t shifted =
      wasm_f32x4_add(wasm_f32x4_mul(v, wasm_f32x4_splat(1.44269504088896341f)), magic);
  const v128_t n = wasm_f32x4_sub(shifted, magic);
  v = wasm_f32x4_sub(v, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
  v = wasm_f32x4_sub(v, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, v), wasm_f32x4_splat(1.3981999507e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, v), wasm_f32x4_splat(8.3334519073e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, v), wasm_f32x4_splat(4.1665795894e-2f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, v), wasm_f32x4_splat(1.6666665459e-1f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, v), wasm_f32x4_splat(5.0000001201e-1f));
  p = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(p, v), v),
                     wasm_f32x4_add(v, wasm_f32x4_splat(1.0f)));
  // 2^n: the float bits of `shifted` are those of the magic number plus n; re-biased by 127 and
  // moved into the exponent field.
  const v128_t scale =
      wasm_i32x4_shl(wasm_i32x4_add(shifted, wasm_i32x4_splat(127 - 0x4B400000)), 23);
  const v128_t result = wasm_f32x4_mul(p, scale);
  const v128_t underflow = wasm_f32x4_lt(input, wasm_f32x4_splat(-87.3f));
  return {wasm_v128_andnot(result, underflow)};
}

#else

constexpr const char* kBackend = "scalar";

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
// The same semantics as the SIMD half: a < b ? b : a.
inline F32x4 max(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x < y ? y : x; });
}
inline F32x4 min(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return y < x ? y : x; });
}
inline float lane(F32x4 a, int i) { return a.v[i]; }
inline F32x4 exp(F32x4 x) {
  return {{std::exp(x.v[0]), std::exp(x.v[1]), std::exp(x.v[2]), std::exp(x.v[3])}};
}

#endif

// max that returns NaN when either side is NaN, as the vector max does.
inline float nan_max(float x, float y) { return x != x || y != y ? x + y : (x > y ? x : y); }

inline float horizontal_max(F32x4 a) {
  return nan_max(nan_max(lane(a, 0), lane(a, 1)), nan_max(lane(a, 2), lane(a, 3)));
}

inline float horizontal_sum(F32x4 a) {
  return (lane(a, 0) + lane(a, 1)) + (lane(a, 2) + lane(a, 3));
}

}  // namespace attn::simd
