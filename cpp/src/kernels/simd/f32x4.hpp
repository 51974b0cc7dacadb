#pragma once
// A 4-lane float vector: the portable layer the hot kernels are written in, once. A build picks
// one backend:
//   wasmsimd  wasm with -msimd128: every operation one SIMD128 instruction;
//   sse       native x86-64 (SSE2 is its baseline; FMA is used when enabled);
//   scalar    everything else, and any build with ATTN_SCALAR_KERNELS defined (the scalar wasm
//             build): four floats and plain loops, the kernels' scalar twin.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

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

// exp_nonpositive<kLowest> and exp2_split<kLowest> give 0 where the nearest integer n to the
// base-2 exponent is below kLowest; by default below -126, where float's normal exponents end
// (2^-126 = FLT_MIN; with n = -126 a result may still be subnormal).
constexpr int kLowestExponent = -126;

#if defined(ATTN_SIMD_WASM)

struct F32x4 {
  v128_t v;
};
inline F32x4 load(const float* p) { return {wasm_v128_load(p)}; }
// A loaded vector read more than once: wasm reads it from a local already (see the SSE twin).
inline F32x4 load_once(const float* p) { return load(p); }
inline void store(float* p, F32x4 a) { wasm_v128_store(p, a.v); }
inline F32x4 splat(float x) { return {wasm_f32x4_splat(x)}; }
inline F32x4 operator+(F32x4 a, F32x4 b) { return {wasm_f32x4_add(a.v, b.v)}; }
inline F32x4 operator-(F32x4 a, F32x4 b) { return {wasm_f32x4_sub(a.v, b.v)}; }
inline F32x4 operator*(F32x4 a, F32x4 b) { return {wasm_f32x4_mul(a.v, b.v)}; }
inline F32x4 operator/(F32x4 a, F32x4 b) { return {wasm_f32x4_div(a.v, b.v)}; }
inline F32x4 abs(F32x4 a) { return {wasm_f32x4_abs(a.v)}; }
// Correctly rounded in every backend, so std::sqrt's bits lane by lane.
inline F32x4 sqrt(F32x4 a) { return {wasm_f32x4_sqrt(a.v)}; }
// |magnitude| with the sign bit of `sign`.
inline F32x4 copy_sign(F32x4 magnitude, F32x4 sign) {
  return {wasm_v128_bitselect(sign.v, magnitude.v, wasm_f32x4_splat(-0.0f))};
}
// a * b + c. SIMD128 has no fused multiply-add, so two instructions; relaxed SIMD's madd is one
// (fused where the CPU has FMA: rounded once, so not bit for bit the two-instruction result).
// Only the relaxed module (cpp/relaxed) is compiled with -mrelaxed-simd: see kernel_table.hpp.
#if defined(__wasm_relaxed_simd__)
inline F32x4 multiply_add(F32x4 a, F32x4 b, F32x4 c) {
  return {__builtin_wasm_relaxed_madd_f32x4(a.v, b.v, c.v)};
}
#else
inline F32x4 multiply_add(F32x4 a, F32x4 b, F32x4 c) { return a * b + c; }
#endif
// max(a, b) = a < b ? b : a: one x86 instruction, where wasm's NaN-exact f32x4.max costs
// several. A NaN in `a` survives; one in `b` may not, which the row max can afford: exp(NaN -
// max) still turns that row NaN.
inline F32x4 max(F32x4 a, F32x4 b) { return {wasm_f32x4_pmax(a.v, b.v)}; }
// min(a, b) = b < a ? b : a, max's mirror: a NaN in `a` survives.
inline F32x4 min(F32x4 a, F32x4 b) { return {wasm_f32x4_pmin(a.v, b.v)}; }
// a >= limit ? yes : no, lane by lane (a NaN takes `no`).
inline F32x4 select_at_least(F32x4 a, F32x4 limit, F32x4 yes, F32x4 no) {
  return {wasm_v128_bitselect(yes.v, no.v, wasm_f32x4_ge(a.v, limit.v))};
}
// For exp: integer add and left shift on the lanes' bits.
inline F32x4 add_bits(F32x4 a, int32_t k) { return {wasm_i32x4_add(a.v, wasm_i32x4_splat(k))}; }
template <int kShift>
inline F32x4 shift_bits_left(F32x4 a) {
  return {wasm_i32x4_shl(a.v, kShift)};
}
inline float lane(F32x4 a, int i) {
  alignas(16) float out[4];
  wasm_v128_store(out, a.v);
  return out[i];
}
// Four vectors as the rows of a 4x4 matrix, transposed in place: lane j of row i becomes lane i
// of row j (two rounds of interleaving shuffles, which V8 emits as unpck/movlh/movhl).
inline void transpose(F32x4 (&rows)[4]) {
  const v128_t t0 = wasm_i32x4_shuffle(rows[0].v, rows[1].v, 0, 4, 1, 5);
  const v128_t t1 = wasm_i32x4_shuffle(rows[0].v, rows[1].v, 2, 6, 3, 7);
  const v128_t t2 = wasm_i32x4_shuffle(rows[2].v, rows[3].v, 0, 4, 1, 5);
  const v128_t t3 = wasm_i32x4_shuffle(rows[2].v, rows[3].v, 2, 6, 3, 7);
  rows[0].v = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  rows[1].v = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  rows[2].v = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  rows[3].v = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}
// Four IEEE halves widened exactly (half_to_float's bits, without a branch): the magnitude's
// bits moved into a float's place and scaled by 2^112 rebias normals and subnormals alike;
// infinities and NaNs get the float's all-ones exponent instead.
inline F32x4 load_half(const uint16_t* p) {
  const v128_t h = wasm_u32x4_load16x4(p);
  const v128_t magnitude = wasm_v128_and(h, wasm_i32x4_splat(0x7fff));
  const v128_t sign = wasm_i32x4_shl(wasm_v128_xor(h, magnitude), 16);
  const v128_t bits = wasm_i32x4_shl(magnitude, 13);
  const v128_t scaled = wasm_f32x4_mul(bits, wasm_f32x4_splat(0x1p112f));
  const v128_t special = wasm_i32x4_gt(magnitude, wasm_i32x4_splat(0x7bff));
  const v128_t inf_nan = wasm_v128_or(bits, wasm_i32x4_splat(0x7f800000));
  return {wasm_v128_or(wasm_v128_bitselect(inf_nan, scaled, special), sign)};
}
// Eight IEEE halves widened exactly, four into each of low and high, in 16-bit lanes: a float's
// upper 16 bits (the sign, and the magnitude's bits shifted down by 3; an infinity's or NaN's
// exponent made all ones) and lower 16 (the magnitude's last 3 bits) interleaved, then scaled by
// 2^112 as load_half does, which keeps an infinity, and a NaN a NaN. 12 instructions for eight
// halves, where load_half takes 10 for four.
inline void load_halves(const uint16_t* p, F32x4& low, F32x4& high) {
  const v128_t h = wasm_v128_load(p);
  const v128_t special =
      wasm_i16x8_gt(wasm_v128_and(h, wasm_i16x8_splat(0x7fff)), wasm_i16x8_splat(0x7bff));
  const v128_t upper = wasm_v128_or(
      wasm_v128_and(wasm_i16x8_shr(h, 3), wasm_i16x8_splat(static_cast<int16_t>(0x8fff))),
      wasm_v128_and(special, wasm_i16x8_splat(0x7f80)));
  const v128_t lower = wasm_i16x8_shl(h, 13);
  const v128_t scale = wasm_f32x4_splat(0x1p112f);
  low = {wasm_f32x4_mul(wasm_i16x8_shuffle(lower, upper, 0, 8, 1, 9, 2, 10, 3, 11), scale)};
  high = {wasm_f32x4_mul(wasm_i16x8_shuffle(lower, upper, 4, 12, 5, 13, 6, 14, 7, 15), scale)};
}

#elif defined(ATTN_SIMD_SSE)

struct F32x4 {
  __m128 v;
};
inline F32x4 load(const float* p) { return {_mm_loadu_ps(p)}; }
// A loaded vector read more than once, held in a register: with AVX, g++ otherwise folds the
// load into every instruction that reads it (a memory operand each), so the 2x16 tile loaded
// each vector of B twice, 10 loads a step for 8 multiply-adds, and ran at the load ports' pace
// (g++ -mavx2 -mfma: native SDPA at 37.6 GFLOP/s, 53.0 with one load each; n = 1024, d = 64).
inline F32x4 load_once(const float* p) {
  __m128 v = _mm_loadu_ps(p);
#if defined(__GNUC__)
  __asm__("" : "+x"(v));
#endif
  return {v};
}
inline void store(float* p, F32x4 a) { _mm_storeu_ps(p, a.v); }
inline F32x4 splat(float x) { return {_mm_set1_ps(x)}; }
inline F32x4 operator+(F32x4 a, F32x4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline F32x4 operator-(F32x4 a, F32x4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline F32x4 operator*(F32x4 a, F32x4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline F32x4 operator/(F32x4 a, F32x4 b) { return {_mm_div_ps(a.v, b.v)}; }
inline F32x4 abs(F32x4 a) { return {_mm_andnot_ps(_mm_set1_ps(-0.0f), a.v)}; }
inline F32x4 sqrt(F32x4 a) { return {_mm_sqrt_ps(a.v)}; }
// |magnitude| with the sign bit of `sign`.
inline F32x4 copy_sign(F32x4 magnitude, F32x4 sign) {
  const __m128 sign_bit = _mm_set1_ps(-0.0f);
  return {_mm_or_ps(_mm_andnot_ps(sign_bit, magnitude.v), _mm_and_ps(sign_bit, sign.v))};
}
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
inline F32x4 select_at_least(F32x4 a, F32x4 limit, F32x4 yes, F32x4 no) {
  const __m128 mask = _mm_cmpge_ps(a.v, limit.v);
  return {_mm_or_ps(_mm_and_ps(mask, yes.v), _mm_andnot_ps(mask, no.v))};
}
inline F32x4 add_bits(F32x4 a, int32_t k) {
  return {_mm_castsi128_ps(_mm_add_epi32(_mm_castps_si128(a.v), _mm_set1_epi32(k)))};
}
template <int kShift>
inline F32x4 shift_bits_left(F32x4 a) {
  return {_mm_castsi128_ps(_mm_slli_epi32(_mm_castps_si128(a.v), kShift))};
}
inline float lane(F32x4 a, int i) {
  alignas(16) float out[4];
  _mm_store_ps(out, a.v);
  return out[i];
}
inline void transpose(F32x4 (&rows)[4]) {
  _MM_TRANSPOSE4_PS(rows[0].v, rows[1].v, rows[2].v, rows[3].v);
}
// Four IEEE halves widened exactly, as the wasm twin does (SSE2 has no half conversion).
inline F32x4 load_half(const uint16_t* p) {
  const __m128i h =
      _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
  const __m128i magnitude = _mm_and_si128(h, _mm_set1_epi32(0x7fff));
  const __m128i sign = _mm_slli_epi32(_mm_xor_si128(h, magnitude), 16);
  const __m128i bits = _mm_slli_epi32(magnitude, 13);
  const __m128 scaled = _mm_mul_ps(_mm_castsi128_ps(bits), _mm_set1_ps(0x1p112f));
  const __m128 special = _mm_castsi128_ps(_mm_cmpgt_epi32(magnitude, _mm_set1_epi32(0x7bff)));
  const __m128 inf_nan = _mm_castsi128_ps(_mm_or_si128(bits, _mm_set1_epi32(0x7f800000)));
  const __m128 value = _mm_or_ps(_mm_and_ps(special, inf_nan), _mm_andnot_ps(special, scaled));
  return {_mm_or_ps(value, _mm_castsi128_ps(sign))};
}
// Eight halves widened exactly, as the wasm twin does.
inline void load_halves(const uint16_t* p, F32x4& low, F32x4& high) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i special =
      _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7bff));
  const __m128i upper = _mm_or_si128(
      _mm_and_si128(_mm_srai_epi16(h, 3), _mm_set1_epi16(static_cast<int16_t>(0x8fff))),
      _mm_and_si128(special, _mm_set1_epi16(0x7f80)));
  const __m128i lower = _mm_slli_epi16(h, 13);
  const __m128 scale = _mm_set1_ps(0x1p112f);
  low = {_mm_mul_ps(_mm_castsi128_ps(_mm_unpacklo_epi16(lower, upper)), scale)};
  high = {_mm_mul_ps(_mm_castsi128_ps(_mm_unpackhi_epi16(lower, upper)), scale)};
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
inline F32x4 load_once(const float* p) { return load(p); }
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
inline F32x4 operator/(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x / y; });
}
inline F32x4 abs(F32x4 a) {
  return lanewise(a, a, [](float x, float) { return std::fabs(x); });
}
inline F32x4 sqrt(F32x4 a) {
  return lanewise(a, a, [](float x, float) { return std::sqrt(x); });
}
inline F32x4 copy_sign(F32x4 magnitude, F32x4 sign) {
  return lanewise(magnitude, sign, [](float x, float y) { return std::copysign(x, y); });
}
inline F32x4 multiply_add(F32x4 a, F32x4 b, F32x4 c) { return a * b + c; }
// The same semantics as the SIMD backends: a < b ? b : a.
inline F32x4 max(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return x < y ? y : x; });
}
inline F32x4 min(F32x4 a, F32x4 b) {
  return lanewise(a, b, [](float x, float y) { return y < x ? y : x; });
}
inline F32x4 select_at_least(F32x4 a, F32x4 limit, F32x4 yes, F32x4 no) {
  F32x4 out;
  for (int i = 0; i < 4; ++i) out.v[i] = a.v[i] >= limit.v[i] ? yes.v[i] : no.v[i];
  return out;
}
inline float lane(F32x4 a, int i) { return a.v[i]; }
inline void transpose(F32x4 (&rows)[4]) {
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) std::swap(rows[i].v[j], rows[j].v[i]);
}
inline F32x4 load_half(const uint16_t* p) {
  F32x4 r;
  for (int i = 0; i < 4; ++i) {
    const uint32_t magnitude = p[i] & 0x7fffu, sign = static_cast<uint32_t>(p[i] & 0x8000u) << 16;
    uint32_t bits = magnitude << 13;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    value *= 0x1p112f;
    if (magnitude > 0x7bffu) {
      bits |= 0x7f800000u;
      std::memcpy(&value, &bits, sizeof value);
    }
    std::memcpy(&bits, &value, sizeof bits);
    bits |= sign;
    std::memcpy(&r.v[i], &bits, sizeof bits);
  }
  return r;
}
inline void load_halves(const uint16_t* p, F32x4& low, F32x4& high) {
  low = load_half(p);
  high = load_half(p + 4);
}
// The scalar twin takes exp from the C library.
template <int kLowest = kLowestExponent>
inline F32x4 exp_nonpositive(F32x4 x) {
  F32x4 out;
  for (int i = 0; i < 4; ++i) {
    const bool dropped = std::nearbyint(x.v[i] * 1.44269504088896341f) < kLowest;
    out.v[i] = dropped ? 0.0f : std::exp(x.v[i]);
  }
  return out;
}
inline F32x4 tanh(F32x4 x) {
  return {{std::tanh(x.v[0]), std::tanh(x.v[1]), std::tanh(x.v[2]), std::tanh(x.v[3])}};
}
template <int kLowest = kLowestExponent>
inline F32x4 exp2_split(F32x4 n, F32x4 r) {
  F32x4 out;
  for (int i = 0; i < 4; ++i) {
    out.v[i] = n.v[i] < kLowest ? 0.0f : std::ldexp(std::exp2(r.v[i]), static_cast<int>(n.v[i]));
  }
  return out;
}

#endif

#if !defined(ATTN_SIMD_SCALAR)
// 2^r times 2^kShift for |r| <= 1/2: a degree-5 minimax polynomial (relative error 7.5e-8 before
// float rounding), 2^kShift folded into its coefficients, which scales every rounding exactly.
// Evaluated in Estrin's form: softmax's exp pass is bound by this dependency chain, not by the
// instruction count, and Estrin halves the chain of Horner's form for one more multiply.
constexpr float power_of_two(int k) { return k == 0 ? 1.0f : 2.0f * power_of_two(k - 1); }
template <int kShift = 0>
inline F32x4 exp2_fraction(F32x4 r) {
  constexpr float s = power_of_two(kShift);
  const F32x4 r2 = r * r;
  const F32x4 low =
      multiply_add(splat(s * 6.931469670652649e-1f), r, splat(s * 1.0000000716546416f));
  const F32x4 mid =
      multiply_add(splat(s * 5.550713272875391e-2f), r, splat(s * 2.402211972396918e-1f));
  const F32x4 high =
      multiply_add(splat(s * 1.3276472167819944e-3f), r, splat(s * 9.675541331021392e-3f));
  return multiply_add(multiply_add(high, r2, mid), r2, low);
}

// 2^(e - 127) for e in [0, 254] held as a float in biased = e + 1.5 * 2^23, which holds e in its
// low mantissa bits (the bits of 0x4B400000 plus e): moved into the exponent field they are
// 2^(e - 127), and +0 for e = 0. No float<->int conversion: V8 expands those into several
// instructions each.
constexpr float kMagic = 12582912.0f;
inline F32x4 exponent_of(F32x4 biased) {
  return shift_bits_left<23>(add_bits(biased, -0x4B400000));
}

// 2^n as the exponent field n + kBias<kLowest>, which is 0 (so 2^n is +0) at n = kLowest - 1,
// times 2^kShiftOf<kLowest> 2^r: the same bits as 2^n 2^r for every n >= kLowest, and never a
// subnormal for kLowest >= -125. The polynomial carries the power of two exactly.
template <int kLowest>
constexpr int kShiftOf = kLowest - kLowestExponent;
template <int kLowest>
constexpr float kBias = 1 - kLowest;

// What exp2_split and exp_nonpositive share: 2^(n + r) from |r| <= 1/2 and biased, which holds
// the exponent field n + kBias<kLowest> (n >= kLowest - 1) after kMagic, as exponent_of reads it.
template <int kLowest>
inline F32x4 exp2_biased(F32x4 biased, F32x4 r) {
  static_assert(kLowest >= kLowestExponent && kLowest <= 0);
  return exp2_fraction<kShiftOf<kLowest>>(r) * exponent_of(biased);
}

// 2^(n + r) for n an integer in [kLowest - 1, 127] held as a float and |r| <= 1/2, exactly +0
// for n = kLowest - 1 (the caller clamps n there).
template <int kLowest = kLowestExponent>
inline F32x4 exp2_split(F32x4 n, F32x4 r) {
  return exp2_biased<kLowest>(n + splat(kMagic + kBias<kLowest>), r);
}

// exp(x) for x <= 0 or NaN (softmax's x - max), as 2^t with t = x log2(e) = n + r, n the nearest
// integer and |r| <= 1/2 (exp2_biased; the product x log2(e) adds |x| log2(e) ulp). t is clamped
// to kLowest - 1, where the result is exactly 0, as for every n < kLowest: masked weights are
// exactly zero, and above the default kLowest no result is subnormal. NaN stays NaN.
template <int kLowest = kLowestExponent>
inline F32x4 exp_nonpositive(F32x4 x) {
  // A NaN x survives the clamp: max keeps a NaN in its first operand.
  const F32x4 t = max(x * splat(1.44269504088896341f), splat(static_cast<float>(kLowest - 1)));
  // Adding kMagic + bias rounds t to the nearest integer n (ties to even) and leaves n + bias in
  // the low mantissa bits, where exponent_of reads it: one instruction where a rounding one
  // (f32x4.nearest, roundps) is two on x86, and the bias's add comes free.
  const F32x4 shift = splat(kMagic + kBias<kLowest>);
  const F32x4 biased = t + shift;
  return exp2_biased<kLowest>(biased, t - (biased - shift));
}

// tanh(x) as a ratio of an odd degree-13 and an even degree-6 polynomial in x (Eigen's
// generic_fast_tanh_float coefficients) for |x| < 7.9053, and exactly +-1 from there, where tanh
// is within 2.7e-7 of +-1. Within 6 ulp of tanh everywhere (tests/cpp/test_microkernels.cpp
// measures it). One division and no exp: a softcap costs a fraction of the softmax's exp per
// score. Eigen clamps x first; here the select alone decides past the limit, so the ratio may
// overflow there (inf / inf) unread, and the clamp's two instructions go. NaN stays NaN (it
// fails the comparison and the ratio keeps it). Its error is relative (6 ulp) and up to 3.4e-7
// absolute near +-1, where activation_kernels.cpp's tanh, through exp, keeps the 2e-7 absolute
// bound that the recurrent layers' tests hold it to.
inline F32x4 tanh(F32x4 x) {
  const F32x4 limit = splat(7.90531110763549805f);
  const F32x4 x2 = x * x;
  F32x4 p = multiply_add(x2, splat(-2.76076847742355e-16f), splat(2.00018790482477e-13f));
  p = multiply_add(x2, p, splat(-8.60467152213735e-11f));
  p = multiply_add(x2, p, splat(5.12229709037114e-08f));
  p = multiply_add(x2, p, splat(1.48572235717979e-05f));
  p = multiply_add(x2, p, splat(6.37261928875436e-04f));
  p = multiply_add(x2, p, splat(4.89352455891786e-03f));
  F32x4 q = multiply_add(x2, splat(1.19825839466702e-06f), splat(1.18534705686654e-04f));
  q = multiply_add(x2, q, splat(2.26843463243900e-03f));
  q = multiply_add(x2, q, splat(4.89352518554385e-03f));
  // p / q first: x * p would underflow for tiny x. Past the limit exactly +-1: the ratio there
  // is 1 or 1 - 5 ulp depending on whether the multiply-adds fuse (relaxed SIMD leaves that to
  // the CPU), and a saturated softcap's derivative 1 - tanh^2 must be 0.
  return select_at_least(abs(x), limit, copy_sign(splat(1.0f), x), x * (p / q));
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
