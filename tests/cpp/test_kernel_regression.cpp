// Nadaraya-Watson kernel regression and leave-one-out bandwidth selection.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/gaussian_attention.hpp"
#include "attn/kernel_regression.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;
using attn::Similarity;

namespace {

std::vector<double> widen(const std::vector<float>& x) { return {x.begin(), x.end()}; }

// Index of the first smallest entry.
size_t argmin(const std::vector<float>& x) {
  return static_cast<size_t>(std::min_element(x.begin(), x.end()) - x.begin());
}

// n bandwidths log-spaced from lo to hi.
std::vector<float> log_grid(double lo, double hi, int n) {
  std::vector<float> grid;
  for (int i = 0; i < n; ++i) {
    grid.push_back(static_cast<float>(lo * std::pow(hi / lo, static_cast<double>(i) / (n - 1))));
  }
  return grid;
}

}  // namespace

TEST_CASE("Nadaraya-Watson matches the reference for every kernel on 1-D data", "[regression]") {
  const Matrix keys = ref::random_matrix(30, 1, 1, 0.0f, 5.0f);
  const Matrix values = ref::random_matrix(30, 1, 2, -3.0f, 3.0f);
  const Matrix queries = ref::random_matrix(12, 1, 3, 0.0f, 5.0f);
  ref::check_kernel_regression(keys, values, queries, {0.5f, 1.0f, 2.0f});
}

TEST_CASE("Nadaraya-Watson matches the reference on vector keys and values", "[regression]") {
  const Matrix keys = ref::random_matrix(25, 4, 4);
  const Matrix values = ref::random_matrix(25, 3, 5);
  const Matrix queries = ref::random_matrix(8, 4, 6);
  for (Similarity kernel : ref::kAllKernels) {
    CAPTURE(attn::similarity_name(kernel));
    const auto got = attn::kernel_regression(keys, values, queries, kernel, 1.25f);
    const auto expected = ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values),
                                               ref::to_double(queries), kernel, 1.25);
    REQUIRE(got.output.rows() == 8);
    REQUIRE(got.output.cols() == 3);
    REQUIRE(got.weights.rows() == 8);
    REQUIRE(got.weights.cols() == 25);
    ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
    ref::check_close(got.output, expected.output, ref::kSum, "output");
  }
}

TEST_CASE("Similarity regression weights are non-negative and each row sums to 1", "[regression]") {
  const Matrix keys = ref::random_matrix(40, 2, 7);
  const Matrix values = ref::random_matrix(40, 1, 8);
  const Matrix queries = ref::random_matrix(10, 2, 9, -0.5f, 0.5f);
  for (Similarity kernel : ref::kAllKernels) {
    CAPTURE(attn::similarity_name(kernel));
    // sigma = 3 exceeds every distance in [-1, 1]^2, so every query reaches some key.
    const auto got = attn::kernel_regression(keys, values, queries, kernel, 3.0f);
    for (Index i = 0; i < got.weights.rows(); ++i) {
      CAPTURE(i);
      CHECK(got.weights.row(i).minCoeff() >= 0.0f);
      CHECK_THAT(got.weights.row(i).cast<double>().sum(), Catch::Matchers::WithinAbs(1.0, 1e-6));
    }
  }
}

TEST_CASE("The constant kernel averages the values", "[regression]") {
  const Matrix keys = ref::random_matrix(17, 3, 10);
  const Matrix values = ref::random_matrix(17, 2, 11, -5.0f, 5.0f);
  const Matrix queries = ref::random_matrix(4, 3, 12, -10.0f, 10.0f);
  const auto got = attn::kernel_regression(keys, values, queries, Similarity::Constant, 0.01f);
  ref::Mat expected(4, 2);
  for (Index c = 0; c < 2; ++c) {
    double mean = 0.0;
    for (Index i = 0; i < 17; ++i) mean += values(i, c);
    mean /= 17.0;
    for (Index q = 0; q < 4; ++q) expected(q, c) = mean;
  }
  ref::check_close(got.output, expected, ref::kSum, "output");
  ref::check_close(got.weights, ref::Mat(4, 17, 1.0 / 17.0), ref::kTight, "weights");
}

TEST_CASE("A query that no key reaches has zero weights and a NaN output", "[regression]") {
  Matrix keys(3, 1);
  keys << 0.0f, 1.0f, 2.0f;
  Matrix values(3, 2);
  values << 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f;
  Matrix queries(2, 1);
  queries << 1.0f, 10.0f;  // the first sits on a key, the second is far from all of them
  for (Similarity kernel : {Similarity::Boxcar, Similarity::Epanechnikov}) {
    CAPTURE(attn::similarity_name(kernel));
    const auto got = attn::kernel_regression(keys, values, queries, kernel, 1e-3f);
    // Reached: only key 1, with weight 1.
    CHECK(got.weights(0, 0) == 0.0f);
    CHECK(got.weights(0, 1) == 1.0f);
    CHECK(got.weights(0, 2) == 0.0f);
    CHECK(got.output(0, 0) == 3.0f);
    CHECK(got.output(0, 1) == 4.0f);
    // Not reached: zero weights, NaN output.
    for (Index i = 0; i < 3; ++i) CHECK(got.weights(1, i) == 0.0f);
    CHECK(std::isnan(got.output(1, 0)));
    CHECK(std::isnan(got.output(1, 1)));
  }
}

TEST_CASE("Leave-one-out errors match the reference and best is their argmin", "[regression]") {
  const Matrix keys = ref::random_matrix(20, 2, 13);
  const Matrix values = ref::random_matrix(20, 2, 14);
  const std::vector<float> bandwidths = {0.3f, 0.5f, 0.8f, 1.2f, 2.0f, 5.0f};
  for (Similarity kernel : {Similarity::Gaussian, Similarity::Epanechnikov, Similarity::Boxcar}) {
    CAPTURE(attn::similarity_name(kernel));
    const auto got = attn::leave_one_out(keys, values, kernel, bandwidths);
    const auto expected =
        ref::leave_one_out(ref::to_double(keys), ref::to_double(values), kernel, widen(bandwidths));
    REQUIRE(got.errors.size() == bandwidths.size());
    ref::check_close(got.errors.data(), expected.errors.data(), got.errors.size(), ref::kSum,
                     "errors");
    if (std::isnan(expected.best)) {
      CHECK(std::isnan(got.best));
    } else {
      CHECK(got.best == bandwidths[argmin(got.errors)]);
      CHECK(got.best == static_cast<float>(expected.best));
    }
  }
}

TEST_CASE("Leave-one-out picks an interior bandwidth for f(x) = 2 sin x + x", "[regression]") {
  // 40 evenly spaced points on [0, 5), targets with seeded Gaussian noise (sd 0.5). A tiny
  // bandwidth interpolates the noise of the neighbours, a huge one predicts the global mean:
  // cross-validation must settle in between.
  const Index n = 40;
  const auto noise = ref::normal(static_cast<size_t>(n), 2024, 0.0f, 0.5f);
  Matrix x(n, 1), y(n, 1);
  for (Index i = 0; i < n; ++i) {
    x(i, 0) = 5.0f * static_cast<float>(i) / static_cast<float>(n);
    y(i, 0) = 2.0f * std::sin(x(i, 0)) + x(i, 0) + noise[static_cast<size_t>(i)];
  }
  const std::vector<float> grid = log_grid(0.02, 20.0, 13);
  const auto got = attn::leave_one_out(x, y, Similarity::Gaussian, grid);
  const auto expected =
      ref::leave_one_out(ref::to_double(x), ref::to_double(y), Similarity::Gaussian, widen(grid));
  ref::check_close(got.errors.data(), expected.errors.data(), grid.size(), ref::kSum, "errors");

  const size_t best = argmin(got.errors);
  CAPTURE(best, got.best);
  CHECK(got.best == grid[best]);
  CHECK(best > 0);
  CHECK(best < grid.size() - 1);
  CHECK(got.best == static_cast<float>(expected.best));
}

TEST_CASE("Leave-one-out takes the first bandwidth on ties", "[regression]") {
  // The constant kernel ignores the bandwidth: every error is the same.
  const Matrix keys = ref::random_matrix(6, 1, 15);
  const Matrix values = ref::random_matrix(6, 1, 16);
  const auto got = attn::leave_one_out(keys, values, Similarity::Constant, {3.0f, 1.0f, 2.0f});
  REQUIRE(got.errors.size() == 3);
  CHECK(got.errors[0] == got.errors[1]);
  CHECK(got.errors[1] == got.errors[2]);
  CHECK(got.best == 3.0f);
}

TEST_CASE("A bandwidth that leaves a key without neighbours has infinite error", "[regression]") {
  // Keys 1 apart: a boxcar of width 0.5 reaches no other key, one of width 1 reaches them.
  Matrix keys(4, 1), values(4, 1);
  keys << 0.0f, 1.0f, 2.0f, 3.0f;
  values << 1.0f, 2.0f, 4.0f, 8.0f;
  const auto got = attn::leave_one_out(keys, values, Similarity::Boxcar, {0.5f, 1.0f});
  REQUIRE(got.errors.size() == 2);
  CHECK(std::isinf(got.errors[0]));
  CHECK(got.errors[0] > 0.0f);
  // Width 1: predictions 2, 2.5, 5, 4 -> errors 1, 0.25, 1, 16 -> mean 4.5625.
  CHECK_THAT(got.errors[1], Catch::Matchers::WithinRel(4.5625, 1e-6));
  CHECK(got.best == 1.0f);

  const auto none = attn::leave_one_out(keys, values, Similarity::Boxcar, {0.25f, 0.5f});
  CHECK(std::isinf(none.errors[0]));
  CHECK(std::isinf(none.errors[1]));
  CHECK(std::isnan(none.best));
}

TEST_CASE("Leave-one-out with a single key has nothing to leave out", "[regression]") {
  Matrix keys(1, 1), values(1, 1);
  keys << 0.5f;
  values << 2.0f;
  const auto got = attn::leave_one_out(keys, values, Similarity::Gaussian, {1.0f, 2.0f});
  CHECK(std::isnan(got.best));
}

TEST_CASE("Similarity regression with no keys has nothing to average and gives NaN",
          "[regression]") {
  // The header's rule for a query that no key reaches, applied to n = 0.
  const Matrix keys(0, 2), values(0, 3);
  const Matrix queries = ref::random_matrix(2, 2, 17);
  const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 1.0f);
  REQUIRE(got.weights.rows() == 2);
  REQUIRE(got.weights.cols() == 0);
  REQUIRE(got.output.rows() == 2);
  REQUIRE(got.output.cols() == 3);
  for (Index i = 0; i < got.output.size(); ++i) CHECK(std::isnan(got.output.data()[i]));
}

// ---------------------------------------------------------------------------------------------
// Small Gaussian bandwidths: the log-sum-exp form

TEST_CASE("A far query with a small Gaussian bandwidth gets the nearest key's value",
          "[regression]") {
  // exp(-(d / sigma)^2 / 2) underflows to 0 for every key here (d / sigma >= 20): the plain form
  // divides 0 by 0. In softmax form the nearest key (2) has weight 1 and the others
  // exp(-(9 - 1) / (2 sigma^2)) and exp(-(4 - 1) / (2 sigma^2)), exactly 0 in float.
  Matrix keys(3, 1), values(3, 1), queries(1, 1);
  keys << 0.0f, 1.0f, 2.0f;
  values << 0.0f, 1.0f, 2.0f;
  queries << 3.0f;
  for (float sigma : {0.05f, 1e-3f, 1e-20f, std::numeric_limits<float>::denorm_min()}) {
    CAPTURE(sigma);
    const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, sigma);
    CHECK(got.output(0, 0) == 2.0f);
    CHECK(got.weights(0, 0) == 0.0f);
    CHECK(got.weights(0, 1) == 0.0f);
    CHECK(got.weights(0, 2) == 1.0f);
  }
}

TEST_CASE("Two Gaussian keys far from the query match the logistic closed form", "[regression]") {
  // Keys 0 and 1, query x: the weight of key 1 is 1 / (1 + exp(-(2x - 1) / (2 sigma^2))), the
  // logistic of the difference of the scores. With x = 1000 and 2 sigma^2 near 2x - 1 the weight
  // is O(1), while each exp(-d^2 / (2 sigma^2)) is below exp(-499) and underflows.
  Matrix keys(2, 1), values(2, 2), queries(1, 1);
  keys << 0.0f, 1.0f;
  values << -3.0f, 5.0f, 4.0f, 0.5f;
  queries << 1000.0f;
  for (float sigma : {20.0f, 31.6f, 45.0f, 80.0f}) {
    CAPTURE(sigma);
    const double s2 = 2.0 * static_cast<double>(sigma) * static_cast<double>(sigma);
    const double w1 = 1.0 / (1.0 + std::exp(-1999.0 / s2));
    const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, sigma);
    CHECK_THAT(got.weights(0, 1), Catch::Matchers::WithinRel(w1, 1e-6));
    CHECK_THAT(got.weights(0, 0), Catch::Matchers::WithinRel(1.0 - w1, 1e-5));
    CHECK_THAT(got.output(0, 0), Catch::Matchers::WithinRel(-3.0 * (1.0 - w1) + 4.0 * w1, 1e-5));
    CHECK_THAT(got.output(0, 1), Catch::Matchers::WithinRel(5.0 * (1.0 - w1) + 0.5 * w1, 1e-5));
  }
}

TEST_CASE("A query midway between two keys takes their mean as sigma goes to 0", "[regression]") {
  Matrix keys(3, 1), values(3, 1), queries(1, 1);
  keys << -1.0f, 1.0f, 4.0f;
  values << 2.0f, 7.0f, 100.0f;
  queries << 0.0f;  // keys -1 and 1 tie at distance 1
  const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 1e-4f);
  CHECK(got.output(0, 0) == 4.5f);
  CHECK(got.weights(0, 0) == 0.5f);
  CHECK(got.weights(0, 1) == 0.5f);
  CHECK(got.weights(0, 2) == 0.0f);
}

TEST_CASE("Gaussian regression matches the log-sum-exp reference for tiny bandwidths",
          "[regression]") {
  // Bandwidths from 1e-6 to 10 on keys in [-1, 1]^2: most of them underflow the plain form.
  const Matrix keys = ref::random_matrix(30, 2, 18);
  const Matrix values = ref::random_matrix(30, 3, 19);
  const Matrix queries = ref::random_matrix(9, 2, 20, -2.0f, 2.0f);
  for (float sigma : log_grid(1e-6, 10.0, 15)) {
    CAPTURE(sigma);
    const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, sigma);
    const auto expected =
        ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values), ref::to_double(queries),
                             Similarity::Gaussian, sigma);
    REQUIRE(got.output.allFinite());
    ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
    ref::check_close(got.output, expected.output, ref::kSum, "output");
  }
}

TEST_CASE("Leave-one-out scores small Gaussian bandwidths by the nearest neighbour's error",
          "[regression]") {
  // As sigma -> 0 each key is predicted by its nearest other key: 0 <- 1, 1 <- 0, 3 <- 1, 6 <- 3.
  Matrix keys(4, 1), values(4, 1);
  keys << 0.0f, 1.0f, 3.0f, 6.0f;
  values << 1.0f, -2.0f, 0.5f, 4.0f;
  const double nearest_error = (9.0 + 9.0 + 6.25 + 12.25) / 4.0;
  const auto got = attn::leave_one_out(keys, values, Similarity::Gaussian, {0.02f, 1e-3f, 1e-30f});
  for (float error : got.errors) CHECK_THAT(error, Catch::Matchers::WithinRel(nearest_error, 1e-6));
  CHECK(got.best == 0.02f);  // the first of three equal errors
}

TEST_CASE("Leave-one-out picks a small Gaussian bandwidth when it predicts best", "[regression]") {
  // Pairs of keys 0.01 apart with equal values, the pairs 5 apart: the nearest neighbour predicts
  // every key exactly (error 0), a bandwidth of 2 mixes the pairs. sigma = 5e-4 puts the partner
  // at d / sigma = 20, where the plain form's weights are all 0 and its error was +infinity.
  Matrix keys(6, 1), values(6, 1);
  keys << 0.0f, 0.01f, 5.0f, 5.01f, 10.0f, 10.01f;
  values << 1.0f, 1.0f, 7.0f, 7.0f, -3.0f, -3.0f;
  const auto got = attn::leave_one_out(keys, values, Similarity::Gaussian, {2.0f, 5e-4f});
  const auto expected = ref::leave_one_out(ref::to_double(keys), ref::to_double(values),
                                           Similarity::Gaussian, {2.0, static_cast<double>(5e-4f)});
  CHECK(got.errors[1] == 0.0f);
  CHECK(got.errors[0] > 0.1f);  // clearly worse than 0
  CHECK_THAT(got.errors[0], Catch::Matchers::WithinRel(expected.errors[0], 1e-5));
  CHECK(got.best == 5e-4f);
}

TEST_CASE("Leave-one-out ranks the finite errors when compact kernels leave keys unreached",
          "[regression]") {
  // Keys 1 apart except one at 10: bandwidths below 7 leave it alone (+infinity), whatever their
  // place in the list; `best` is the smallest finite error among the others.
  Matrix keys(4, 1), values(4, 1);
  keys << 0.0f, 1.0f, 3.0f, 10.0f;
  values << 1.0f, 2.0f, 4.0f, 8.0f;
  const std::vector<float> bandwidths = {0.5f, 8.0f, 2.0f, 20.0f, 7.5f};
  for (Similarity kernel : {Similarity::Boxcar, Similarity::Epanechnikov}) {
    CAPTURE(attn::similarity_name(kernel));
    const auto got = attn::leave_one_out(keys, values, kernel, bandwidths);
    const auto expected =
        ref::leave_one_out(ref::to_double(keys), ref::to_double(values), kernel, widen(bandwidths));
    CHECK(std::isinf(got.errors[0]));
    CHECK(std::isinf(got.errors[2]));
    ref::check_close(got.errors.data(), expected.errors.data(), got.errors.size(), ref::kSum,
                     "errors");
    size_t finite_argmin = 1;
    for (size_t i : {3, 4}) {
      if (got.errors[i] < got.errors[finite_argmin]) finite_argmin = i;
    }
    CHECK(got.best == bandwidths[finite_argmin]);
  }
}

// ---------------------------------------------------------------------------------------------
// Weights only on request

TEST_CASE("Similarity regression without weights gives the same output and no m x n matrix",
          "[regression]") {
  const Matrix keys = ref::random_matrix(20, 3, 21);
  const Matrix values = ref::random_matrix(20, 2, 22);
  const Matrix queries = ref::random_matrix(7, 3, 23);
  for (Similarity kernel : ref::kAllKernels) {
    CAPTURE(attn::similarity_name(kernel));
    const auto with = attn::kernel_regression(keys, values, queries, kernel, 0.7f, true);
    const auto without = attn::kernel_regression(keys, values, queries, kernel, 0.7f, false);
    CHECK(without.weights.size() == 0);
    // Bitwise equal, NaN rows included: the same row computation either way.
    REQUIRE(without.output.rows() == 7);
    REQUIRE(without.output.cols() == 2);
    for (Index i = 0; i < with.output.size(); ++i) {
      const float a = with.output.data()[i], b = without.output.data()[i];
      CHECK((a == b || (std::isnan(a) && std::isnan(b))));
    }
  }
}

TEST_CASE("Similarity regression into caller buffers checks their shapes", "[regression]") {
  const Matrix keys = ref::random_matrix(5, 2, 24);
  const Matrix values = ref::random_matrix(5, 3, 25);
  const Matrix queries = ref::random_matrix(4, 2, 26);
  std::vector<float> out(4 * 3), w(4 * 5);
  attn::MatrixMap output(out.data(), 4, 3), weights(w.data(), 4, 5);
  attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 1.0f, output, &weights);
  const auto expected = ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values),
                                             ref::to_double(queries), Similarity::Gaussian, 1.0);
  ref::check_close(Matrix(output), expected.output, ref::kSum, "output");
  ref::check_close(Matrix(weights), expected.weights, ref::kTight, "weights");

  attn::MatrixMap short_output(out.data(), 3, 3), wide_weights(w.data(), 4, 4);
  CHECK_THROWS_AS(
      attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 1.0f, short_output),
      std::invalid_argument);
  CHECK_THROWS_WITH(attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 1.0f,
                                            output, &wide_weights),
                    Catch::Matchers::StartsWith("weights"));
}

// ---------------------------------------------------------------------------------------------
// The Gaussian through attention (attention/gaussian_attention.hpp)

namespace {

// The smallest bandwidth at which the float products are exact enough: the bound of
// gaussian_attention.hpp, (d + 6) u (Q + K)^2 / sigma^2 <= tolerance, solved for sigma, with Q and
// K the largest norms about the keys' mean, here in double from the float data.
double smallest_bandwidth(const Matrix& keys, const Matrix& queries) {
  const Eigen::RowVectorXd mean = keys.cast<double>().colwise().mean();
  const auto largest = [&](const Matrix& rows) {
    return (rows.cast<double>().rowwise() - mean).rowwise().norm().maxCoeff();
  };
  const double spread = largest(keys) + largest(queries);
  return std::sqrt(static_cast<double>(keys.cols() + 6) * 0x1p-24 * spread * spread /
                   attn::detail::kWeightTolerance);
}

}  // namespace

TEST_CASE("The Gaussian through attention keeps each weight within its stated tolerance",
          "[regression]") {
  // Ragged shapes past one block of 64 queries and 128 keys, data far from the origin (the
  // centring's case), at the smallest bandwidth the bound admits (the largest error allowed) and
  // just below it (the double rows): each weight within 2 tolerances of the float64 reference
  // (a weight is a ratio of two exps, each within one) and exp's few ulp.
  const Matrix keys = ref::random_matrix(300, 16, 41, 99.0f, 101.0f);
  const Matrix queries = ref::random_matrix(130, 16, 42, 99.0f, 101.0f);
  const attn::MatrixRef query_ref(queries);
  const Matrix values = ref::random_matrix(300, 3, 43);
  const double edge = smallest_bandwidth(keys, queries);
  for (const double factor : {1.001, 4.0, 0.999}) {
    const auto sigma = static_cast<float>(edge * factor);
    CAPTURE(sigma, factor);
    const attn::detail::GaussianAttention attention(keys, values, &query_ref);
    CHECK(attention.exact_enough(sigma) == (factor > 1.0));
    const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, sigma);
    const auto expected =
        ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values), ref::to_double(queries),
                             Similarity::Gaussian, sigma);
    double worst = 0.0;
    for (Index i = 0; i < queries.rows(); ++i) {
      for (Index j = 0; j < keys.rows(); ++j) {
        const double want = expected.weights(i, j);
        if (want < 1e-30) continue;  // exp flushes what lies below float's normal range
        worst = std::max(worst, std::abs(got.weights(i, j) - want) / want);
      }
    }
    CHECK(worst <= 2.0 * attn::detail::kWeightTolerance + 1e-6);
    ref::check_close(got.output, expected.output, ref::kSum, "output");
  }
}

TEST_CASE("Leave-one-out through attention hides each key from itself alone", "[regression]") {
  // 300 keys (past two key blocks), each its own query: the errors of the float64 reference,
  // whose predictions leave key i out of query i and nothing else. The small bandwidth goes
  // through the double rows, the others through attention, in one call.
  const Matrix keys = ref::random_matrix(300, 5, 44);
  const Matrix values = ref::random_matrix(300, 2, 45);
  const std::vector<float> bandwidths = {1e-3f, 0.8f, 1.5f, 3.0f};
  const attn::detail::GaussianAttention attention(keys, values, nullptr);
  CHECK_FALSE(attention.exact_enough(bandwidths[0]));
  for (size_t b = 1; b < bandwidths.size(); ++b) CHECK(attention.exact_enough(bandwidths[b]));
  const auto got = attn::leave_one_out(keys, values, Similarity::Gaussian, bandwidths);
  const auto expected = ref::leave_one_out(ref::to_double(keys), ref::to_double(values),
                                           Similarity::Gaussian, widen(bandwidths));
  ref::check_close(got.errors.data(), expected.errors.data(), got.errors.size(), ref::kSum,
                   "errors");
  CHECK(got.best == static_cast<float>(expected.best));
}

TEST_CASE("The Gaussian through attention gives the same output with and without weights",
          "[regression]") {
  const Matrix keys = ref::random_matrix(200, 8, 46);
  const Matrix values = ref::random_matrix(200, 4, 47);
  const Matrix queries = ref::random_matrix(70, 8, 48);
  const auto weighted = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 0.8f);
  const auto plain =
      attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 0.8f, false);
  CHECK(plain.weights.size() == 0);
  CHECK(weighted.output == plain.output);
}

TEST_CASE("The Gaussian through attention with no value columns gives empty outputs",
          "[regression]") {
  const Matrix keys = ref::random_matrix(300, 4, 49);
  const Matrix values(300, 0);
  const Matrix queries = ref::random_matrix(70, 4, 50);
  const auto got = attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 2.0f);
  REQUIRE(got.output.rows() == 70);
  REQUIRE(got.output.cols() == 0);
  const auto expected = ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values),
                                             ref::to_double(queries), Similarity::Gaussian, 2.0);
  ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
  const auto search = attn::leave_one_out(keys, values, Similarity::Gaussian, {2.0f});
  CHECK(search.errors[0] == 0.0f);
}
