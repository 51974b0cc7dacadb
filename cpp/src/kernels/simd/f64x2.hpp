#pragma once
// A 2-lane double vector beside F32x4 (f32x4.hpp picks the backend for both): only what the
// kernels that work in double need (kernel regression's exponents, regression_rows.cpp), and
// the narrowing of two such vectors into one F32x4.

#include "f32x4.hpp"

namespace attn::simd {

#if defined(ATTN_SIMD_WASM)

struct F64x2 {
  v128_t v;
};
inline F64x2 load(const double* p) { return {wasm_v128_load(p)}; }
inline F64x2 splat64(double x) { return {wasm_f64x2_splat(x)}; }
inline F64x2 operator+(F64x2 a, F64x2 b) { return {wasm_f64x2_add(a.v, b.v)}; }
inline F64x2 operator-(F64x2 a, F64x2 b) { return {wasm_f64x2_sub(a.v, b.v)}; }
inline F64x2 operator*(F64x2 a, F64x2 b) { return {wasm_f64x2_mul(a.v, b.v)}; }
// max(a, b) = a < b ? b : a, as F32x4's (pmax: one x86 instruction; a NaN in `a` survives).
inline F64x2 max(F64x2 a, F64x2 b) { return {wasm_f64x2_pmax(a.v, b.v)}; }
// The four doubles of low and high, rounded to float, in that order.
inline F32x4 narrow(F64x2 low, F64x2 high) {
  return {wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(low.v),
                             wasm_f32x4_demote_f64x2_zero(high.v), 0, 2)};
}

#elif defined(ATTN_SIMD_SSE)

struct F64x2 {
  __m128d v;
};
inline F64x2 load(const double* p) { return {_mm_loadu_pd(p)}; }
inline F64x2 splat64(double x) { return {_mm_set1_pd(x)}; }
inline F64x2 operator+(F64x2 a, F64x2 b) { return {_mm_add_pd(a.v, b.v)}; }
inline F64x2 operator-(F64x2 a, F64x2 b) { return {_mm_sub_pd(a.v, b.v)}; }
inline F64x2 operator*(F64x2 a, F64x2 b) { return {_mm_mul_pd(a.v, b.v)}; }
inline F64x2 max(F64x2 a, F64x2 b) { return {_mm_max_pd(b.v, a.v)}; }
inline F32x4 narrow(F64x2 low, F64x2 high) {
  return {_mm_movelh_ps(_mm_cvtpd_ps(low.v), _mm_cvtpd_ps(high.v))};
}

#else

struct F64x2 {
  double v[2];
};
inline F64x2 load(const double* p) { return {{p[0], p[1]}}; }
inline F64x2 splat64(double x) { return {{x, x}}; }
inline F64x2 operator+(F64x2 a, F64x2 b) { return {{a.v[0] + b.v[0], a.v[1] + b.v[1]}}; }
inline F64x2 operator-(F64x2 a, F64x2 b) { return {{a.v[0] - b.v[0], a.v[1] - b.v[1]}}; }
inline F64x2 operator*(F64x2 a, F64x2 b) { return {{a.v[0] * b.v[0], a.v[1] * b.v[1]}}; }
inline F64x2 max(F64x2 a, F64x2 b) {
  return {{a.v[0] < b.v[0] ? b.v[0] : a.v[0], a.v[1] < b.v[1] ? b.v[1] : a.v[1]}};
}
inline F32x4 narrow(F64x2 low, F64x2 high) {
  return {{static_cast<float>(low.v[0]), static_cast<float>(low.v[1]),
           static_cast<float>(high.v[0]), static_cast<float>(high.v[1])}};
}

#endif

}  // namespace attn::simd
