#include "regression_rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/similarity.hpp"
#include "product_loops.hpp"
#include "simd/f32x4.hpp"
#include "simd/f64x2.hpp"

namespace attn::detail {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Four running minima of squared[begin, end) folded into m: one would chain every comparison on
// the one before. NaN compares false and is passed over.
void fold_min(const double* squared, Index begin, Index end, double (&m)[4]) {
  Index j = begin;
  for (; j + 4 <= end; j += 4) {
    for (int lane = 0; lane < 4; ++lane) {
      m[lane] = squared[j + lane] < m[lane] ? squared[j + lane] : m[lane];
    }
  }
  for (; j < end; ++j) m[0] = squared[j] < m[0] ? squared[j] : m[0];
}

// w[j..j+3] = weights(squared + j), four keys at a time, the tail padded with keys at +inf.
template <typename Weights>
void in_fours(const double* squared, Index n, float* w, Weights weights) {
  Index j = 0;
  for (; j + 4 <= n; j += 4) simd::store(w + j, weights(squared + j));
  if (j < n) {
    alignas(16) double four[4] = {kInfinity, kInfinity, kInfinity, kInfinity};
    alignas(16) float tail[4];
    std::copy(squared + j, squared + n, four);
    simd::store(tail, weights(four));
    std::copy(tail, tail + (n - j), w + j);
  }
}

}  // namespace

double f64_squared_distances(const float* query, const float* keys_t, Index n, Index dim,
                             Index skip, double* squared) {
  // Loops over contiguous keys, which the compiler turns into two-lane double vectors with the
  // query's feature held in a register. (Four keys at a time over every feature in registers,
  // from keys packed in groups of four, measured slower at d = 1 and no faster at d = 64.)
  for (Index f = 0; f < dim; ++f) {
    const double q = query[f];
    const float* k = keys_t + f * n;
    for (Index j = 0; j < n; ++j) {
      const double difference = static_cast<double>(k[j]) - q;
      squared[j] = (f == 0 ? 0.0 : squared[j]) + difference * difference;
    }
  }
  if (dim == 0) std::fill(squared, squared + n, 0.0);
  double m[4] = {kInfinity, kInfinity, kInfinity, kInfinity};
  if (skip >= 0 && skip < n) {
    fold_min(squared, 0, skip, m);
    fold_min(squared, skip + 1, n, m);
    squared[skip] = kInfinity;
  } else {
    fold_min(squared, 0, n, m);
  }
  return std::min(std::min(m[0], m[1]), std::min(m[2], m[3]));
}

double f64_squared_distance(const float* query, const float* key, Index dim) {
  // f64_squared_distances' sum for one key: the first square added to 0.0, the rest in order.
  double sum = 0.0;
  for (Index f = 0; f < dim; ++f) {
    const double difference = static_cast<double>(key[f]) - static_cast<double>(query[f]);
    sum = sum + difference * difference;
  }
  return sum;
}

float gaussian_weights(const double* squared, Index n, double nearest, float bandwidth, float* w) {
  using simd::F32x4;
  using simd::F64x2;
  // In double, sigma^2 of a float sigma neither underflows nor overflows.
  const F64x2 factor =
      simd::splat64(-1.4426950408889634 / (2.0 * double{bandwidth} * double{bandwidth}));
  const F64x2 shift = simd::splat64(nearest), floor = simd::splat64(kPooledLowest - 1.0);
  // Rounding to the nearest integer by adding and taking away 1.5 * 2^52 (|t| <= 127).
  const F64x2 magic = simd::splat64(0x1.8p52);
  // Four keys: t in double, clamped to -101 (a NaN stays NaN), split into its nearest integer
  // and the rest, which float holds exactly enough (|r| <= 1/2); 2^t in float, 0 below 2^-100 as
  // the fused kernels' weights (kPooledLowest, exp2_split): the pooling multiplies them by
  // values, and tinier ones would make subnormal products (1.1x slower at sigma = 0.05, d = 1).
  const auto weights = [&](const double* four) {
    const F64x2 low = simd::max((simd::load(four) - shift) * factor, floor);
    const F64x2 high = simd::max((simd::load(four + 2) - shift) * factor, floor);
    const F64x2 low_whole = (low + magic) - magic, high_whole = (high + magic) - magic;
    return simd::exp2_split<kPooledLowest>(simd::narrow(low_whole, high_whole),
                                           simd::narrow(low - low_whole, high - high_whole));
  };
  F32x4 sum = simd::splat(0.0f);
  in_fours(squared, n, w, [&](const double* four) {  // a key at +inf adds 0
    const F32x4 weight = weights(four);
    sum = sum + weight;
    return weight;
  });
  return simd::horizontal_sum(sum);
}

float similarity_weights(Similarity similarity, const double* squared, Index n, float bandwidth,
                         Index skip, float* w) {
  using simd::F32x4;
  const F32x4 one = simd::splat(1.0f), zero = simd::splat(0.0f), by = simd::splat(bandwidth);
  // u = sqrt(d^2 rounded once to float) / bandwidth: within an ulp of the distance, as a float
  // norm of the difference would be. Each lane's operations are correctly rounded, so every
  // weight has the bits of similarity_of_scaled_distance's scalar arithmetic.
  const auto scaled = [&](const double* four) {
    return simd::sqrt(simd::narrow(simd::load(four), simd::load(four + 2))) / by;
  };
  switch (similarity) {
    case Similarity::Boxcar:  // u <= 1 ? 1 : 0, a NaN 0
      in_fours(squared, n, w, [&](const double* four) {
        return simd::select_at_least(one, scaled(four), one, zero);
      });
      break;
    case Similarity::Epanechnikov:  // max(0, 1 - u), a NaN 0
      in_fours(squared, n, w,
               [&](const double* four) { return simd::max(zero, one - scaled(four)); });
      break;
    default:  // the others' arithmetic a key at a time
      for (Index j = 0; j < n; ++j) {
        const float distance = std::sqrt(static_cast<float>(squared[j]));
        w[j] = similarity_of_scaled_distance(similarity, distance / bandwidth);
      }
  }
  if (skip >= 0 && skip < n) w[skip] = 0.0f;
  return f32_sum(w, n);
}

float f32_sum(const float* w, Index n) {
  simd::F32x4 sum = simd::splat(0.0f);
  Index j = 0;
  for (; j + 4 <= n; j += 4) sum = sum + simd::load(w + j);
  float total = simd::horizontal_sum(sum);
  for (; j < n; ++j) total += w[j];
  return total;
}

void f32_divide(float* x, Index n, float divisor) {
  const simd::F32x4 by = simd::splat(divisor);
  Index j = 0;
  for (; j + 4 <= n; j += 4) simd::store(x + j, simd::load(x + j) / by);
  for (; j < n; ++j) x[j] /= divisor;
}

}  // namespace attn::detail
