#include "activation_kernels.hpp"

#include <algorithm>

#include "simd/f32x4.hpp"

namespace attn::detail {

using simd::F32x4;

namespace {

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|) in [0, 1]: the exponent is never
// positive, so the softmax's exp kernel serves and nothing overflows (|x| > 44 gives e = 0 and
// exactly +-1). Near 0, 1 - e cancels to an absolute error of a few ulp of 1, which bounds the
// absolute error; the recurrences and scores use tanh only in sums with terms of order 1.
inline F32x4 tanh4(F32x4 x) {
  const F32x4 e = simd::exp_nonpositive(simd::splat(-2.0f) * simd::abs(x));
  const F32x4 one = simd::splat(1.0f);
  return simd::copy_sign((one - e) / (one + e), x);
}

template <typename Op>
void map(const float* x, float* y, Index n, Op op) {
  Index i = 0;
  for (; i + 4 <= n; i += 4) simd::store(y + i, op(simd::load(x + i)));
  if (i < n) {  // the tail through one padded vector, so every element takes the same path
    alignas(16) float tail[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::copy(x + i, x + n, tail);
    simd::store(tail, op(simd::load(tail)));
    std::copy(tail, tail + (n - i), y + i);
  }
}

}  // namespace

void f32_tanh(const float* x, float* y, Index n) { map(x, y, n, tanh4); }

void f32_sigmoid(const float* x, float* y, Index n) {
  map(x, y, n, [](F32x4 v) {
    const F32x4 half = simd::splat(0.5f);
    return half + half * tanh4(half * v);
  });
}

}  // namespace attn::detail
