// The compute micro-kernels tested directly, in the XNNPACK manner, against references in double:
// the GEMM (2x16 register tile) swept over m, n and k from 1 to two tiles plus one so that every
// tail path runs; the vector exp over [-88, 0] and tanh over [-12, 12] with their worst error in
// ulp; the Gaussian and compact kernel-regression weights; the online-softmax step against a
// two-pass softmax on rows of +-1e4; the steps of the masked softmax shared by every forward and
// backward (masked_softmax_rows, the softmax backward row, the skip rule) on ragged rows, +-1e4
// logits and fully masked rows. The same file runs natively in the two builds of
// scripts/test-native.sh (SIMD, and SIMD under ASan + UBSan) and in the wasm builds
// (scripts/test-wasm-microkernels.sh: SIMD128, relaxed SIMD, and the scalar twins,
// ATTN_SCALAR_KERNELS).

#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/gemm.hpp"
#include "kernels/kernel_table.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/product_loops.hpp"
#include "kernels/regression_rows.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/simd/f32x4.hpp"

using attn::Index;

namespace {

std::vector<float> random_values(size_t n, std::mt19937& random, float lo, float hi) {
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> values(n);
  for (float& x : values) x = uniform(random);
  return values;
}

// Distance from `got` to `want` in units of the float spacing at `want`.
double ulp_error(float got, double want) {
  const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

}  // namespace

TEST_CASE("The GEMM is exact to rounding on every tail of its 2x16 tile", "[microkernels]") {
  // m rows in pairs (an odd last row pairs with itself), n columns in panels of 16, any depth k:
  // 1 .. 2 tiles + 1 in each, B both as [k, n] and as [n, k], C stored and accumulated.
  std::mt19937 random(1);
  for (Index m = 1; m <= 5; ++m) {
    for (Index n = 1; n <= 33; ++n) {
      for (Index k = 1; k <= 33; ++k) {
        const auto a = random_values(static_cast<size_t>(m * k), random, -1.0f, 1.0f);
        const auto b = random_values(static_cast<size_t>(k * n), random, -1.0f, 1.0f);
        for (bool transposed : {false, true}) {
          std::vector<float> c(static_cast<size_t>(m * n), 0.5f);
          attn::detail::f32_gemm(a.data(), m, k, b.data(), n, transposed, c.data());
          std::vector<float> packed(static_cast<size_t>(attn::detail::round_up(n, 16) * k));
          attn::detail::f32_pack_panels(b.data(), transposed ? k : n, k, n, transposed,
                                        packed.data());
          std::vector<float> accumulated(static_cast<size_t>(m * n), 0.5f);
          attn::detail::f32_gemm_panels(a.data(), k, m, k, packed.data(), 16 * k, n,
                                        accumulated.data(), n, /*accumulate=*/true);
          for (Index i = 0; i < m; ++i) {
            for (Index j = 0; j < n; ++j) {
              double want = 0.0, magnitude = 0.0;
              for (Index t = 0; t < k; ++t) {
                const double bt = transposed ? b[static_cast<size_t>(j * k + t)]
                                             : b[static_cast<size_t>(t * n + j)];
                want += a[static_cast<size_t>(i * k + t)] * bt;
                magnitude += std::fabs(a[static_cast<size_t>(i * k + t)] * bt);
              }
              // A float sum of k products: within k half-ulps of the sum of magnitudes.
              const double tolerance = (k + 1) * magnitude * FLT_EPSILON + 1e-30;
              const auto at = static_cast<size_t>(i * n + j);
              if (std::fabs(c[at] - want) > tolerance ||
                  std::fabs(accumulated[at] - (want + 0.5)) > tolerance + FLT_EPSILON) {
                FAIL("m " << m << " n " << n << " k " << k << " transposed " << transposed
                          << " at [" << i << ", " << j << "]: got " << c[at] << " and "
                          << accumulated[at] << " (accumulated onto 0.5), want " << want);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("Packing writes every panel entry as B's entry times the scale, and zero past n",
          "[microkernels]") {
  // Panel p holds columns [16p, 16p + 16) of B (of B's rows, transposed): entry (t, c) at
  // p * 16k + 16t + c. Whole panels of transposed B go through 4x4 transposes in registers
  // (depths a multiple of 4, the rest one entry at a time), so every shape of both is checked
  // for the exact product, lane by lane.
  std::mt19937 random(5);
  const float scale = 0.3f;
  for (Index n = 1; n <= 37; n += 3) {
    for (Index k = 1; k <= 13; ++k) {
      const auto b = random_values(static_cast<size_t>(k * n), random, -1.0f, 1.0f);
      for (bool transposed : {false, true}) {
        const Index ldb = transposed ? k + 2 : n + 1;  // rows longer than used
        std::vector<float> strided(static_cast<size_t>((transposed ? n : k) * ldb), NAN);
        for (Index t = 0; t < k; ++t) {
          for (Index j = 0; j < n; ++j) {
            strided[static_cast<size_t>(transposed ? j * ldb + t : t * ldb + j)] =
                b[static_cast<size_t>(t * n + j)];
          }
        }
        std::vector<float> packed(static_cast<size_t>(attn::detail::round_up(n, 16) * k), NAN);
        attn::detail::f32_pack_panels(strided.data(), ldb, k, n, transposed, packed.data(), scale);
        for (Index j = 0; j < attn::detail::round_up(n, 16); ++j) {
          for (Index t = 0; t < k; ++t) {
            const float got = packed[static_cast<size_t>(j / 16 * 16 * k + t * 16 + j % 16)];
            const float want = j < n ? b[static_cast<size_t>(t * n + j)] * scale : 0.0f;
            if (!(got == want)) {  // NaN fails too: an entry never written
              FAIL("n " << n << " k " << k << " transposed " << transposed << " column " << j
                        << " depth " << t << ": got " << got << ", want " << want);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("The vector exp is within its stated ulp of exp in double over [-88, 0]",
          "[microkernels]") {
  // Stated (SIMD build; SSE and wasm SIMD128 run the same operations): within 4 + |x| log2(e)
  // ulp, the reduction x log2(e) being rounded to float. Measured over every float of [-1, 0]
  // and every 8th of [-87.3, -1]: worst 65.2 ulp (at x = -83.18), 3.64 ulp on [-1, 0] (exp(0)
  // itself is 1 + 2^-23: the polynomial's constant term rounds up). Results below FLT_MIN
  // (x < -87.34) are within 2^-126 absolute, and x < -87.7 gives exactly 0, so that masked
  // softmax weights are exactly 0. The scalar twin is the C library's expf (within 1 ulp).
  double worst = 0.0, worst_near_zero = 0.0;
  float worst_at = 0.0f;
  int sampled = 0;
  std::mt19937 random(2);
  std::uniform_int_distribution<int> stride(1, 1024);
  for (float x = 0.0f; x >= -88.0f;) {
    alignas(16) float in[4], out[4];
    for (float& lane : in) {
      lane = x;
      for (int s = stride(random); s > 0; --s) x = std::nextafter(x, -100.0f);
    }
    // Through the kernel table, as the softmax rows call it: in the relaxed run, the relaxed
    // module's exp, whose polynomial is fused multiply-adds. exp(x - 0) is exp(x).
    std::copy(in, in + 4, out);
    attn::detail::kernel_table().exp_shifted_sum_full(out, 4, 0.0f);
    for (int lane = 0; lane < 4; ++lane) {
      ++sampled;
      const double want = std::exp(static_cast<double>(in[lane]));
      if (want < FLT_MIN) {
        if (std::fabs(out[lane] - want) > std::ldexp(1.0, -126)) {
          FAIL("exp(" << in[lane] << ") = " << out[lane] << ", want " << want);
        }
#if !defined(ATTN_SIMD_SCALAR)
        if (in[lane] < -87.7f) REQUIRE(out[lane] == 0.0f);
#endif
        continue;
      }
      const double error = ulp_error(out[lane], want);
      if (!(error <= 4.0 + std::fabs(in[lane]) * 1.4426950408889634)) {  // NaN fails too
        FAIL("exp(" << in[lane] << ") = " << out[lane] << ", want " << want << ": " << error
                    << " ulp");
      }
      if (error > worst) worst = error, worst_at = in[lane];
      if (in[lane] >= -1.0f) worst_near_zero = std::max(worst_near_zero, error);
    }
  }
  INFO("sampled " << sampled << " points; worst " << worst << " ulp at " << worst_at
                  << ", on [-1, 0] " << worst_near_zero << " ulp");
  CHECK(worst <= 65.2);
  CHECK(worst_near_zero <= 3.64);
  CHECK(sampled > 100000);
}

TEST_CASE("The pooled exp keeps the vector exp's bits down to 2^-100 and gives 0 below it",
          "[microkernels]") {
  // exp_nonpositive<kPooledLowest>, the fused forward's: where x log2(e) rounds to an integer
  // n >= -100, the same bits as exp_nonpositive (2^26 folded into the polynomial and taken back
  // from the exponent is exact); where n < -100, exactly 0; never a subnormal (each costs x86 a
  // microcode assist); NaN stays NaN. Every 4th float of [-71, -68] (n = -100 ends at
  // x = -69.66), a coarse sweep of [-90, 0], and x down to -inf.
  constexpr int kLowest = attn::detail::kPooledLowest;
  std::vector<float> points = {0.0f, -0.0f, -1.0f, -69.0f, -1e4f, -FLT_MAX, -INFINITY, NAN};
  for (float x = -68.0f; x >= -71.0f;) {
    points.push_back(x);
    for (int s = 0; s < 4; ++s) x = std::nextafter(x, -100.0f);
  }
  for (float x = 0.0f; x > -90.0f; x -= 0.37f) points.push_back(x);
  while (points.size() % 4 != 0) points.push_back(-1.0f);
  int kept = 0, dropped = 0;
  for (size_t p = 0; p < points.size(); p += 4) {
    float pooled[4], full[4];
    attn::simd::store(pooled, attn::simd::exp_nonpositive<kLowest>(attn::simd::load(&points[p])));
    attn::simd::store(full, attn::simd::exp_nonpositive(attn::simd::load(&points[p])));
    for (int lane = 0; lane < 4; ++lane) {
      const float x = points[p + static_cast<size_t>(lane)], y = pooled[lane];
      CAPTURE(x, y, full[lane]);
      if (std::isnan(x)) {
        REQUIRE(std::isnan(y));
        continue;
      }
      REQUIRE(std::fpclassify(y) != FP_SUBNORMAL);
      if (std::nearbyint(x * 1.44269504088896341f) < kLowest) {
        REQUIRE(y == 0.0f);
        ++dropped;
      } else {
        REQUIRE(y == full[lane]);
        REQUIRE(y >= std::ldexp(1.0f, kLowest - 1));
        ++kept;
      }
    }
  }
  CHECK(kept > 1000);
  CHECK(dropped > 1000);
}

TEST_CASE("The vector tanh is within its stated ulp of tanh in double on every sign and scale",
          "[microkernels]") {
  // Stated (SIMD build; the scalar twin is the C library's tanhf): within 6 ulp everywhere,
  // NaN kept, tanh(+-0) = +-0 exactly, tiny x without underflow. Sampled over [-12, 12] by a
  // random stride of 1..1024 floats (so densely near 0, where floats are), with the limit's
  // neighbours (past it +-1 stands for 1 - 2.7e-7, 4.6 ulp) and x up to the infinities.
  // Measured: worst 5.76 ulp (at -5.98) in wasm SIMD128, 5.45 (at 5.82) natively with FMA.
  double worst = 0.0;
  float worst_at = 0.0f;
  int sampled = 0;
  std::mt19937 random(4);
  std::uniform_int_distribution<int> stride(1, 1024);
  // Past the limit the ratio is not read: finite x whose powers overflow must still give +-1.
  std::vector<float> points = {0.0f,  -0.0f,  INFINITY, -INFINITY, 1e4f,    -1e4f,
                               1e20f, -1e20f, FLT_MAX,  -FLT_MAX,  7.9053f, -7.9054f};
  for (float x = 12.0f; x >= -12.0f;) {
    points.push_back(x);
    for (int s = stride(random); s > 0; --s) x = std::nextafter(x, -100.0f);
  }
  while (points.size() % 4 != 0) points.push_back(1.0f);
  for (size_t p = 0; p < points.size(); p += 4) {
    float out[4];
    attn::simd::store(out, attn::simd::tanh(attn::simd::load(points.data() + p)));
    for (int lane = 0; lane < 4; ++lane) {
      const float x = points[p + static_cast<size_t>(lane)];
      const double want = std::tanh(static_cast<double>(x));
      ++sampled;
      if (want == 0.0) {
        REQUIRE(out[lane] == 0.0f);
        REQUIRE(std::signbit(out[lane]) == std::signbit(x));
        continue;
      }
      const double error = ulp_error(out[lane], want);
      if (!(error <= 6.0)) {  // NaN fails too
        FAIL("tanh(" << x << ") = " << out[lane] << ", want " << want << ": " << error << " ulp");
      }
      if (error > worst) worst = error, worst_at = x;
    }
  }
  alignas(16) float nan[4] = {NAN, -NAN, NAN, NAN}, out[4];
  attn::simd::store(out, attn::simd::tanh(attn::simd::load(nan)));
  for (float y : out) REQUIRE(std::isnan(y));
  INFO("sampled " << sampled << " points; worst " << worst << " ulp at " << worst_at);
  CHECK(worst <= 5.77);
  CHECK(sampled > 40000);
}

TEST_CASE("The Gaussian regression weights are within 4 ulp of exp in double at any exponent",
          "[microkernels]") {
  // The exponent -(d^2 - nearest) / (2 sigma^2) is reduced in double, so the error does not grow
  // with it as the vector exp's does: stated 4 ulp for the weights kept, and exactly 0 where the
  // exponent's base-2 value rounds to an integer below -100 (kPooledLowest: they would make
  // subnormal products in the pooling), or the key is at +inf. Bandwidths from 1e-3 to 1e3 over
  // squared distances spread so the weights run from 1 down past underflow. Measured: worst 3.09
  // ulp, natively (FMA) and in wasm SIMD128 alike.
  std::mt19937 random(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double worst = 0.0;
  int sampled = 0;
  for (float sigma : {1e-3f, 0.37f, 1.0f, 20.0f, 1e3f}) {
    const double two_sigma_squared = 2.0 * double{sigma} * double{sigma};
    const Index n = 1003;  // every tail of the four-lane and 64-key blocks
    std::vector<double> squared(static_cast<size_t>(n));
    for (double& d2 : squared) d2 = 0.25 + unit(random) * 95.0 * two_sigma_squared;
    squared[7] = std::numeric_limits<double>::infinity();
    std::vector<float> w(static_cast<size_t>(n));
    attn::detail::gaussian_weights(squared.data(), n, 0.25, sigma, w.data());
    for (Index j = 0; j < n; ++j) {
      const double want = std::exp(-(squared[j] - 0.25) / two_sigma_squared);
      const float got = w[static_cast<size_t>(j)];
      ++sampled;
      const double exponent = -(squared[j] - 0.25) / two_sigma_squared * 1.4426950408889634;
      if (std::nearbyint(exponent) < attn::detail::kPooledLowest) {
        REQUIRE(got == 0.0f);
        continue;
      }
      REQUIRE(got >= std::ldexp(1.0f, attn::detail::kPooledLowest - 1));
      const double error = ulp_error(got, want);
      if (error > 4.0) FAIL("weight " << got << ", want " << want << ": " << error << " ulp");
      worst = std::max(worst, error);
    }
  }
  INFO("sampled " << sampled << "; worst " << worst << " ulp");
  CHECK(worst <= 3.09);
}

TEST_CASE("The compact kernels' weights are their scalar formula's bits in every lane and tail",
          "[microkernels]") {
  // u = sqrt(float(d^2)) / sigma, then boxcar u <= 1 ? 1 : 0 and Epanechnikov max(0, 1 - u),
  // each step correctly rounded, so the vector loop must give the scalar arithmetic's bits: on
  // keys planted one float either side of sigma, at +inf (out of reach) and NaN (weight 0),
  // with the hidden key 0, and the sum within n ulp of the weights' sum in double.
  std::mt19937 random(9);
  std::uniform_real_distribution<double> unit(0.0, 4.0);
  const float sigma = 0.37f;
  for (const attn::Similarity similarity :
       {attn::Similarity::Boxcar, attn::Similarity::Epanechnikov, attn::Similarity::Constant}) {
    for (Index n : {1, 3, 4, 5, 8, 1003}) {
      std::vector<double> squared(static_cast<size_t>(n));
      for (double& d2 : squared) d2 = unit(random) * double{sigma} * double{sigma};
      if (n >= 5) {
        const float below = std::nextafter(sigma, 0.0f), above = std::nextafter(sigma, 1.0f);
        squared[0] = double{below} * double{below};
        squared[1] = double{above} * double{above};
        squared[2] = std::numeric_limits<double>::infinity();
        squared[3] = std::numeric_limits<double>::quiet_NaN();
      }
      const Index skip = n / 2;
      std::vector<float> w(static_cast<size_t>(n));
      const float total =
          attn::detail::similarity_weights(similarity, squared.data(), n, sigma, skip, w.data());
      double sum = 0.0;
      for (Index j = 0; j < n; ++j) {
        const float u = std::sqrt(static_cast<float>(squared[static_cast<size_t>(j)])) / sigma;
        float want = similarity == attn::Similarity::Boxcar ? (u <= 1.0f ? 1.0f : 0.0f)
                     : similarity == attn::Similarity::Epanechnikov
                         ? (0.0f < 1.0f - u ? 1.0f - u : 0.0f)
                         : 1.0f;
        if (j == skip) want = 0.0f;
        INFO("n " << n << ", key " << j << ", u " << u);
        REQUIRE(w[static_cast<size_t>(j)] == want);
        sum += want;
      }
      CHECK(std::fabs(total - sum) <= static_cast<double>(n) * 0x1p-24 * sum);
    }
  }
}

TEST_CASE("The online-softmax step matches a two-pass softmax on rows of +-1e4", "[microkernels]") {
  // Rows a naive softmax overflows on (exp(1e4) = inf), split into blocks of 1 .. 33 scores
  // (every tail of the 4-wide exp and of the 16-wide tile), with a max that grows block after
  // block (alpha far below 1, down to 0) or jumps about.
  std::mt19937 random(3);
  const Index n = 700;
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<float> row = random_values(static_cast<size_t>(n), random, -1e4f, 1e4f);
    if (pattern == 1) {  // rising: every block raises the max
      for (Index j = 0; j < n; ++j) row[static_cast<size_t>(j)] = -1e4f + 28.0f * j;
    } else if (pattern == 2) {  // close scores, so that many weights are far from 0 and 1
      for (float& x : row) x = 1e4f + x * 1e-3f;
    }
    // Two-pass softmax in double: the max, then exp(s - max) and their sum.
    double max = -INFINITY, sum = 0.0;
    for (float x : row) max = std::max(max, static_cast<double>(x));
    for (float x : row) sum += std::exp(x - max);

    std::uniform_int_distribution<Index> block_size(1, 33);
    std::vector<float> p(row);
    std::vector<Index> block_start;
    std::vector<float> alphas;
    float running_max = -INFINITY, running_sum = 0.0f;
    for (Index j0 = 0; j0 < n;) {
      const Index len = std::min(n - j0, block_size(random));
      float* s = p.data() + j0;
      const float block_max = attn::detail::f32_row_max(s, len);
      alphas.push_back(attn::detail::f32_online_softmax_step(s, len, block_max, j0 == 0,
                                                             running_max, running_sum));
      block_start.push_back(j0);
      j0 += len;
    }
    CAPTURE(pattern);
    REQUIRE(running_max == static_cast<float>(max));
    REQUIRE_THAT(running_sum, Catch::Matchers::WithinRel(sum, 1e-5));
    // Weight j: its exp(s - block's max) rescaled by every later block's alpha, over the sum.
    for (size_t b = 0; b < block_start.size(); ++b) {
      double rescale = 1.0;
      for (size_t later = b + 1; later < alphas.size(); ++later) rescale *= alphas[later];
      const Index end = b + 1 < block_start.size() ? block_start[b + 1] : n;
      for (Index j = block_start[b]; j < end; ++j) {
        const double got = p[static_cast<size_t>(j)] * rescale / running_sum;
        const double want = std::exp(row[static_cast<size_t>(j)] - max) / sum;
        if (std::fabs(got - want) > 1e-5 * want + 1e-6) {
          FAIL("pattern " << pattern << " weight " << j << ": got " << got << ", want " << want);
        }
      }
    }
  }
}

namespace {

// Masked softmax of one row in double: the additive mask added, hidden keys set to fill.
std::vector<double> masked_softmax_reference(const float* s, Index n,
                                             const attn::detail::RowMask& mask, float fill) {
  std::vector<double> p(static_cast<size_t>(n));
  double max = -INFINITY, sum = 0.0;
  for (Index j = 0; j < n; ++j) {
    p[static_cast<size_t>(j)] = mask.hidden(j) ? fill : s[j];
    max = std::max(max, p[static_cast<size_t>(j)]);
  }
  for (double& x : p) sum += x = std::exp(x - max);
  for (double& x : p) x /= sum;
  return p;
}

}  // namespace

TEST_CASE("The masked softmax rows and their backward match double on ragged, masked rows of +-1e4",
          "[microkernels]") {
  // Rows of 0 .. 37 keys (every tail of the 4-wide exp), d2l's valid lengths per row from 0 (a
  // fully masked row: uniform under d2l's fill) to all, logits up to +-1e4, and a backward scale.
  std::mt19937 random(4);
  for (const float range : {3.0f, 1e4f}) {
    for (Index nk = 0; nk <= 37; ++nk) {
      const Index nq = 5;
      std::vector<float> scores =
          random_values(static_cast<size_t>(nq * nk), random, -range, range);
      const std::vector<float> dp = random_values(scores.size(), random, -1.0f, 1.0f);
      attn::Mask mask;
      for (Index i = 0; i < nq; ++i)
        mask.valid_lens.push_back(static_cast<int32_t>(nk * i / (nq - 1)));
      const attn::detail::MaskContext context{mask, 0, 1, 1};
      std::vector<float> weights = scores;
      attn::detail::masked_softmax_rows(attn::MatrixMap(weights.data(), nq, nk), context);
      std::vector<float> ds = dp;
      const float scale = 0.125f;
      attn::detail::masked_softmax_backward_rows(attn::ConstMatrixMap(weights.data(), nq, nk),
                                                 attn::MatrixMap(ds.data(), nq, nk), context,
                                                 scale);
      for (Index i = 0; i < nq; ++i) {
        const attn::detail::RowMask row(context, nq, nk, i);
        const std::vector<double> p =
            masked_softmax_reference(scores.data() + i * nk, nk, row, mask.fill);
        double delta = 0.0, norm = 0.0;
        for (Index j = 0; j < nk; ++j)
          delta += p[static_cast<size_t>(j)] * dp[static_cast<size_t>(i * nk + j)];
        for (Index j = 0; j < nk; ++j)
          norm = std::max(norm, std::fabs(dp[static_cast<size_t>(i * nk + j)] - delta));
        for (Index j = 0; j < nk; ++j) {
          const auto at = static_cast<size_t>(i * nk + j);
          CAPTURE(range, nk, i, j);
          REQUIRE_THAT(weights[at],
                       Catch::Matchers::WithinAbs(p[static_cast<size_t>(j)], 1e-6) ||
                           Catch::Matchers::WithinRel(p[static_cast<size_t>(j)], 1e-5));
          const double want =
              row.hidden(j) ? 0.0 : scale * p[static_cast<size_t>(j)] * (dp[at] - delta);
          REQUIRE_THAT(ds[at], Catch::Matchers::WithinAbs(want, 1e-6 * scale * (norm + 1.0)));
          if (row.hidden(j)) REQUIRE(ds[at] == 0.0f);  // exactly: a fill passes no gradient
        }
      }
    }
  }
}

TEST_CASE("The softmax backward row returns D and is 0 where every weight sits on one key",
          "[microkernels]") {
  // A one-hot row (logits 1e4 apart) has dS = p (dP - dP_hot): 0 everywhere, to rounding; and
  // D, the returned row sum of p dP, is dP_hot. A row of one key has dS = 0 exactly.
  std::vector<float> p = {0.0f, 1.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> ds = {0.3f, -0.7f, 2.0f, 5.0f, -1.0f};
  REQUIRE(attn::detail::f32_softmax_backward_row(p.data(), ds.data(), 5, 1.0f) == -0.7f);
  for (float x : ds) REQUIRE(x == 0.0f);
  float one = 1.0f, d_one = 42.0f;
  REQUIRE(attn::detail::f32_softmax_backward_row(&one, &d_one, 1, 0.5f) == 42.0f);
  REQUIRE(d_one == 0.0f);
  REQUIRE(attn::detail::f32_softmax_backward_row(nullptr, nullptr, 0, 1.0f) == 0.0f);
}

TEST_CASE("The skip rule computes the visible keys in whole panels and only vanishing tails",
          "[microkernels]") {
  // Two causal rows (0 and 20 of a 64 x 64 score matrix), keys [0, 64) in panels of 16.
  attn::Mask mask;
  mask.causal = true;
  const attn::detail::MaskContext context{mask, 0, 1, 1};
  using attn::detail::RowMask;
  const RowMask masks[2] = {RowMask(context, 64, 64, 0), RowMask(context, 64, 64, 20)};
  const float no_max[2] = {-INFINITY, -INFINITY};
  // Row 20 sees keys 0 .. 20: up to 21, rounded up to 32.
  REQUIRE(attn::detail::keys_to_compute(masks, no_max, 2, 0, 64, 16) == 32);
  REQUIRE(attn::detail::keys_to_compute(masks, no_max, 1, 0, 64, 16) == 16);
  // Visible scores far above d2l's fill: the hidden tail's weights are exactly 0.
  const float high[2] = {0.0f, 3.0f};
  REQUIRE(attn::detail::tail_vanishes(masks, high, 2, 0, 32, 64));
  // A max near the fill (every visible score near -1e6): the tail counts after all.
  const float near_fill[2] = {0.0f, -1e6f + 10.0f};
  REQUIRE_FALSE(attn::detail::tail_vanishes(masks, near_fill, 2, 0, 32, 64));
  // Keys [32, 64) are hidden from both rows: with a high running max the block is skipped.
  REQUIRE(attn::detail::keys_to_compute(masks, high, 2, 32, 32, 16) == 0);
  // A fully masked row (valid length 0) under d2l's fill is uniform: every key is computed.
  attn::Mask none;
  none.valid_lens = {0};
  const attn::detail::MaskContext none_context{none, 0, 1, 1};
  const RowMask hidden_row(none_context, 1, 40, 0);
  REQUIRE(attn::detail::keys_to_compute(&hidden_row, no_max, 1, 0, 40, 16) == 40);
  const float fill_max = none.fill;
  REQUIRE_FALSE(attn::detail::tail_vanishes(&hidden_row, &fill_max, 1, 0, 16, 40));
}
