// The compact kernels (boxcar, Epanechnikov) through their reach from float products
// (attention/compact_reach.hpp): keys on the edge of the support, within an ulp of it, where the
// products alone cannot tell inside from outside, and ragged shapes far from the origin.

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "attention/compact_reach.hpp"
#include "attn/kernel_regression.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;
using attn::Similarity;

namespace {

constexpr float kBandwidth = 4.0f;

// Keys and queries in [90, 110) (far from the origin: the centring's case) with, for each of the
// first `planted` queries, three keys that differ from it in feature 0 alone: by exactly the
// bandwidth (on the edge: boxcar weight 1, Epanechnikov 0), by the float after that (out of reach),
// and by the float before (in reach). q + 4 and its neighbours are exact floats in [64, 128), so
// the distances are what they say.
struct EdgeData {
  Matrix keys, queries, values;
};

EdgeData edge_data(Index key_count, Index query_count, Index planted, Index dim) {
  EdgeData data{ref::random_matrix(key_count, dim, 61, 90.0f, 110.0f),
                ref::random_matrix(query_count, dim, 62, 90.0f, 110.0f),
                ref::random_matrix(key_count, 2, 63)};
  for (Index i = 0; i < planted; ++i) {
    const float edge = data.queries(i, 0) + kBandwidth;
    const float beyond[] = {edge, std::nextafter(edge, 200.0f), std::nextafter(edge, 0.0f)};
    for (Index k = 0; k < 3; ++k) {
      data.keys.row(3 * i + k) = data.queries.row(i);
      data.keys(3 * i + k, 0) = beyond[k];
    }
  }
  return data;
}

// The regression at kBandwidth, and its float64 reference.
std::pair<attn::KernelRegression, ref::Regression> regress(const EdgeData& data,
                                                           Similarity kernel) {
  return {attn::kernel_regression(data.keys, data.values, data.queries, kernel, kBandwidth),
          ref::nadaraya_watson(ref::to_double(data.keys), ref::to_double(data.values),
                               ref::to_double(data.queries), kernel, kBandwidth)};
}

// Whether kernel regression takes the reach at this bandwidth (else the rows in double).
bool narrow(const Matrix& keys, const Matrix* queries, float bandwidth) {
  const Matrix keys_t = keys.transpose();  // feature-major
  if (!queries)
    return attn::detail::CompactReach(keys, keys_t.data(), nullptr).narrow_enough(bandwidth);
  const attn::MatrixRef query_ref(*queries);
  return attn::detail::CompactReach(keys, keys_t.data(), &query_ref).narrow_enough(bandwidth);
}

}  // namespace

TEST_CASE("Compact kernels through their reach weigh keys on the edge as the exact distances do",
          "[regression]") {
  // 300 keys (ragged against 16-key panels), 130 queries (against 16-query tasks), d = 16: the
  // products' rounding (bound about 4e-3 in d^2 here, typically 1e-4) is past the gap between
  // the edge key and its neighbours (6e-5 in d^2), so only exact distances can place them.
  const EdgeData data = edge_data(300, 130, 40, 16);
  REQUIRE(narrow(data.keys, &data.queries, kBandwidth));
  for (Similarity kernel : {Similarity::Boxcar, Similarity::Epanechnikov}) {
    CAPTURE(attn::similarity_name(kernel));
    const auto [got, expected] = regress(data, kernel);
    for (Index i = 0; i < 40; ++i) {
      CAPTURE(i);
      const bool boxcar = kernel == Similarity::Boxcar;
      CHECK((got.weights(i, 3 * i) > 0.0f) == boxcar);  // on the edge
      CHECK(got.weights(i, 3 * i + 1) == 0.0f);         // the float beyond it
      CHECK(got.weights(i, 3 * i + 2) > 0.0f);          // the float before it
    }
    ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
    ref::check_close(got.output, expected.output, ref::kSum, "output");
  }
}

TEST_CASE("Leave-one-out through the compact reach hides each key from itself alone",
          "[regression]") {
  // The same planted keys as their own queries: a key's edge partner is in reach of it.
  const EdgeData data = edge_data(300, 40, 40, 16);
  Matrix keys = data.keys;
  keys.middleRows(120, 40) = data.queries;  // past the planted keys: their queries are keys too
  REQUIRE(narrow(keys, nullptr, kBandwidth));
  const std::vector<float> bandwidths = {kBandwidth, 6.0f};
  for (Similarity kernel : {Similarity::Boxcar, Similarity::Epanechnikov}) {
    CAPTURE(attn::similarity_name(kernel));
    const auto got = attn::leave_one_out(keys, data.values, kernel, bandwidths);
    const auto expected = ref::leave_one_out(ref::to_double(keys), ref::to_double(data.values),
                                             kernel, {kBandwidth, 6.0});
    ref::check_close(got.errors.data(), expected.errors.data(), got.errors.size(), ref::kSum,
                     "errors");
  }
}

TEST_CASE("Compact kernels take their rows in double where the reach would not pay",
          "[regression]") {
  // Data spread over 1e4, d = 8: at sigma = 1 the products' bound (d^2 within about 0.4) is past a
  // quarter of sigma^2, so the call keeps the rows; at 100 the reach places most keys alone; at
  // 3000 most keys are within Epanechnikov's reach, and its rows go whole in double.
  const Matrix keys = ref::random_matrix(50, 8, 64, -1e4f, 1e4f);
  const Matrix queries = ref::random_matrix(20, 8, 65, -1e4f, 1e4f);
  const Matrix values = ref::random_matrix(50, 1, 66);
  CHECK_FALSE(narrow(keys, &queries, 1.0f));
  CHECK(narrow(keys, &queries, 100.0f));
  for (Similarity kernel : {Similarity::Boxcar, Similarity::Epanechnikov}) {
    for (float sigma : {1.0f, 100.0f, 3000.0f, 3e4f}) {
      CAPTURE(attn::similarity_name(kernel), sigma);
      const auto got = attn::kernel_regression(keys, values, queries, kernel, sigma);
      const auto expected = ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values),
                                                 ref::to_double(queries), kernel, sigma);
      ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
    }
  }
}

TEST_CASE("Epanechnikov's rows go whole in double where the reach meets most keys",
          "[regression]") {
  // The first 16 queries (the sample that decides whether the reach pays) are 1e6 away from
  // every key and reach none; the last four sit on keys and reach all 50 (sigma = 1e5 is past
  // the keys' diameter, 5.7e4): their rows take the rows' loop whole, the same bits.
  const Matrix keys = ref::random_matrix(50, 8, 67, -1e4f, 1e4f);
  Matrix queries = ref::random_matrix(20, 8, 68, 1e6f, 1.1e6f);
  queries.bottomRows(4) = keys.topRows(4);
  const Matrix values = ref::random_matrix(50, 2, 69);
  const float sigma = 1e5f;
  REQUIRE(narrow(keys, &queries, sigma));
  const auto got = attn::kernel_regression(keys, values, queries, Similarity::Epanechnikov, sigma);
  const auto expected =
      ref::nadaraya_watson(ref::to_double(keys), ref::to_double(values), ref::to_double(queries),
                           Similarity::Epanechnikov, sigma);
  ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
  for (Index i = 16; i < 20; ++i) CHECK(got.weights.row(i).minCoeff() > 0.0f);
}

TEST_CASE("A value that is not finite makes every estimate NaN, reached or not, as 0 x inf does",
          "[regression]") {
  // Few keys within reach, so the pooling would go over those alone; an infinite value at a key
  // out of every query's reach still gives NaN (0 * inf), as the dense product and the float64
  // reference do, while the weights are untouched.
  EdgeData data = edge_data(300, 130, 40, 16);
  data.values(299, 1) = std::numeric_limits<float>::infinity();
  for (Similarity kernel : {Similarity::Boxcar, Similarity::Epanechnikov}) {
    CAPTURE(attn::similarity_name(kernel));
    const auto [got, expected] = regress(data, kernel);
    ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
    for (Index i = 0; i < 40; ++i) {
      CAPTURE(i);
      CHECK(std::isnan(got.output(i, 1)));
      CHECK(got.output(i, 0) == Approx(expected.output(i, 0)).epsilon(1e-4));
    }
  }
}
