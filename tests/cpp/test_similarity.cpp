// Similarity kernels alpha(d) and their use on vector queries and keys.

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "attn/kernel_regression.hpp"
#include "attn/scoring.hpp"
#include "attn/similarity.hpp"
#include "attn/softmax.hpp"
#include "reference.hpp"

using attn::Matrix;
using attn::Similarity;

namespace {}  // namespace

TEST_CASE("similarity_value follows each kernel's formula", "[kernels]") {
  const std::vector<float> distances = {0.0f, 0.1f, 0.37f, 0.999f, 1.5f, 2.25f, 4.0f};
  const std::vector<float> bandwidths = {0.25f, 0.5f, 1.0f, 2.0f, 3.5f};
  for (Similarity kernel : ref::kAllKernels) {
    for (float d : distances) {
      for (float sigma : bandwidths) {
        CAPTURE(attn::similarity_name(kernel), d, sigma);
        const double expected = ref::similarity_value(kernel, d, sigma);
        CHECK(ref::close(attn::similarity_value(kernel, d, sigma), expected, ref::kTight));
      }
    }
  }
}

TEST_CASE("similarity_values follows each kernel's formula at every distance, in place too",
          "[kernels]") {
  const std::vector<float> distances = {0.0f, 0.1f, 0.37f, 0.999f, 1.5f, 2.25f, 4.0f};
  for (Similarity kernel : ref::kAllKernels) {
    std::vector<float> values = distances;
    attn::similarity_values(kernel, values.data(), static_cast<attn::Index>(values.size()), 0.5f,
                            values.data());
    for (size_t i = 0; i < distances.size(); ++i) {
      CAPTURE(attn::similarity_name(kernel), distances[i]);
      CHECK(ref::close(values[i], ref::similarity_value(kernel, distances[i], 0.5f), ref::kTight));
    }
  }
}

TEST_CASE("similarity_values refuses a negative or NaN distance and writes nothing", "[kernels]") {
  std::vector<float> values = {1.0f, -0.5f, 2.0f};
  CHECK_THROWS_WITH(
      attn::similarity_values(Similarity::Gaussian, values.data(), 3, 1.0f, values.data()),
      "distances: expected distances >= 0, got -0.5 at index 1");
  CHECK(values == std::vector<float>{1.0f, -0.5f, 2.0f});
  values[1] = std::nanf("");
  CHECK_THROWS_WITH(
      attn::similarity_values(Similarity::Boxcar, values.data(), 3, 1.0f, values.data()),
      Catch::Contains("got nan at index 1") || Catch::Contains("got NaN at index 1"));
}

TEST_CASE("The Gaussian kernel is exp(-(d / sigma)^2 / 2) at known points", "[kernels]") {
  using Catch::Matchers::WithinRel;
  CHECK(attn::similarity_value(Similarity::Gaussian, 0.0f, 1.0f) == 1.0f);
  CHECK_THAT(attn::similarity_value(Similarity::Gaussian, 1.0f, 1.0f),
             WithinRel(std::exp(-0.5), 1e-6));
  CHECK_THAT(attn::similarity_value(Similarity::Gaussian, 2.0f, 1.0f),
             WithinRel(std::exp(-2.0), 1e-6));
  CHECK_THAT(attn::similarity_value(Similarity::Gaussian, 3.0f, 2.0f),
             WithinRel(std::exp(-1.125), 1e-6));
}

TEST_CASE("The boxcar kernel includes the edge d == sigma", "[kernels]") {
  CHECK(attn::similarity_value(Similarity::Boxcar, 0.5f, 0.5f) == 1.0f);
  CHECK(attn::similarity_value(Similarity::Boxcar, 0.3f, 0.3f) == 1.0f);
  CHECK(attn::similarity_value(Similarity::Boxcar, 0.0f, 0.3f) == 1.0f);
  CHECK(attn::similarity_value(Similarity::Boxcar, std::nextafter(0.5f, 1.0f), 0.5f) == 0.0f);
  CHECK(attn::similarity_value(Similarity::Boxcar, 7.0f, 0.5f) == 0.0f);
}

TEST_CASE("The Epanechnikov kernel is 1 - d / sigma and 0 from the edge on", "[kernels]") {
  using Catch::Matchers::WithinAbs;
  CHECK(attn::similarity_value(Similarity::Epanechnikov, 0.0f, 2.0f) == 1.0f);
  CHECK_THAT(attn::similarity_value(Similarity::Epanechnikov, 0.5f, 2.0f), WithinAbs(0.75, 1e-7));
  CHECK(attn::similarity_value(Similarity::Epanechnikov, 2.0f, 2.0f) == 0.0f);
  CHECK(attn::similarity_value(Similarity::Epanechnikov, 5.0f, 2.0f) == 0.0f);
}

TEST_CASE("The constant kernel is 1 at every distance", "[kernels]") {
  for (float d : {0.0f, 1.0f, 1e3f, 1e30f}) {
    CAPTURE(d);
    CHECK(attn::similarity_value(Similarity::Constant, d, 0.1f) == 1.0f);
  }
}

TEST_CASE("Similarity names parse and print back", "[kernels]") {
  for (Similarity kernel : ref::kAllKernels) {
    CHECK(attn::parse_similarity(attn::similarity_name(kernel)) == kernel);
  }
  CHECK(attn::parse_similarity("gaussian") == Similarity::Gaussian);
  CHECK(attn::parse_similarity("boxcar") == Similarity::Boxcar);
  CHECK(attn::parse_similarity("epanechnikov") == Similarity::Epanechnikov);
  CHECK(attn::parse_similarity("constant") == Similarity::Constant);
}

TEST_CASE("Kernels of vector queries and keys use the Euclidean distance", "[kernels]") {
  // Keys and queries in 3-D: the weights of kernel_regression are alpha(||q - k||) normalised,
  // so they test each kernel on vector arguments.
  const Matrix keys = ref::random_matrix(9, 3, 11);
  const Matrix values = ref::random_matrix(9, 2, 12);
  const Matrix queries = ref::random_matrix(5, 3, 13);
  ref::check_kernel_regression(keys, values, queries, {0.8f, 1.5f, 4.0f});
}

TEST_CASE("A vector key exactly sigma away is inside the boxcar", "[kernels]") {
  // ||(3, 4)|| = 5 exactly in float: the key at the edge is reached, the one just beyond is not.
  Matrix keys(3, 2);
  keys << 3.0f, 4.0f,  //
      0.0f, 0.0f,      //
      3.0f, 4.001f;
  Matrix values(3, 1);
  values << 10.0f, 20.0f, 1000.0f;
  Matrix query(1, 2);
  query << 0.0f, 0.0f;
  const auto got = attn::kernel_regression(keys, values, query, Similarity::Boxcar, 5.0f);
  CHECK(got.weights(0, 0) == 0.5f);
  CHECK(got.weights(0, 1) == 0.5f);
  CHECK(got.weights(0, 2) == 0.0f);
  CHECK(got.output(0, 0) == 15.0f);
}

TEST_CASE("A Gaussian kernel with sigma = 1 is the softmax of -||q - k||^2 / 2", "[kernels]") {
  // exp(-||q - k_i||^2 / 2) / sum_j exp(-||q - k_j||^2 / 2) = softmax_i(a(q, k_i)) with
  // a = neg-sq-dist: kernel regression is attention pooling with that score.
  const Matrix keys = ref::random_matrix(7, 4, 21, -2.0f, 2.0f);
  const Matrix values = ref::random_matrix(7, 3, 22);
  const Matrix queries = ref::random_matrix(6, 4, 23, -2.0f, 2.0f);

  const auto regression =
      attn::kernel_regression(keys, values, queries, Similarity::Gaussian, 1.0f);
  const attn::Tensor3 scores = attn::score(attn::ScoreFunction::NegSquaredDistance,
                                           ref::as_tensor(queries), ref::as_tensor(keys));
  REQUIRE(scores.batch == 1);
  REQUIRE(scores.rows == 6);
  REQUIRE(scores.cols == 7);
  const Matrix scores_matrix = attn::ConstMatrixMap(scores.data.data(), 6, 7);
  const Matrix via_softmax = attn::softmax(scores_matrix);

  ref::check_close(regression.weights, ref::to_double(via_softmax), ref::kSum,
                   "kernel weights vs softmax(neg-sq-dist)");
  // And both agree with the double reference of the softmax form.
  const ref::Batch scores_ref = ref::score_neg_sq_dist(ref::to_double(ref::as_tensor(queries)),
                                                       ref::to_double(ref::as_tensor(keys)));
  ref::Mat logits(6, 7);
  logits.v = scores_ref.v;
  ref::check_close(via_softmax, ref::softmax(logits), ref::kSum, "softmax(neg-sq-dist)");
  const auto expected = ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values),
                                             ref::to_double(queries), Similarity::Gaussian, 1.0);
  ref::check_close(regression.weights, expected.weights, ref::kTight, "kernel weights");
}
