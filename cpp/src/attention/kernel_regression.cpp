#include "attn/kernel_regression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "checks.hpp"
#include "similarity.hpp"

namespace attn {

namespace {

using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using RowRef = Eigen::Ref<RowVector>;
using ConstRowRef = Eigen::Ref<const RowVector>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr Index kNoKey = -1;

void check_keys_values(const MatrixRef& keys, const MatrixRef& values) {
  detail::require_shape("values", {keys.rows(), -1}, detail::shape_of(values));
}

// Squared distance in double: the Gaussian exponent divides it by 2 sigma^2, which for a small
// sigma magnifies float rounding of d^2 (relative 1e-7) into visibly wrong weights between keys
// at nearly equal distances; from float inputs, double keeps it at 1e-16.
double squared_distance(const ConstRowRef& query, const MatrixRef& keys, Index j) {
  return (keys.row(j).cast<double>() - query.cast<double>()).squaredNorm();
}

// Gaussian weights of one query in log-sum-exp form: alpha_j / max_i alpha_i
// = exp(-(d_j^2 - min_i d_i^2) / (2 sigma^2)). The nearest key gets exactly 1, so the row sum is
// >= 1 however small sigma is, where exp(-d_j^2 / (2 sigma^2)) alone underflows to 0 for every
// key once d / sigma > ~14 (float). In double, sigma^2 of a float sigma neither underflows nor
// overflows. Distances are computed twice rather than stored: no buffer of n doubles per query.
void gaussian_row(const ConstRowRef& query, const MatrixRef& keys, float bandwidth, Index skip,
                  RowRef row) {
  double nearest = std::numeric_limits<double>::infinity();
  for (Index j = 0; j < keys.rows(); ++j) {
    if (j != skip) nearest = std::min(nearest, squared_distance(query, keys, j));
  }
  const double two_sigma_squared = 2.0 * double{bandwidth} * double{bandwidth};
  for (Index j = 0; j < keys.rows(); ++j) {
    const double excess = squared_distance(query, keys, j) - nearest;
    // The skipped key may be nearer than `nearest`: exp of its negative excess could overflow.
    if (j == skip) {
      row(j) = 0.0f;
    } else {
      row(j) = excess == 0.0 ? 1.0f : static_cast<float>(std::exp(-excess / two_sigma_squared));
    }
  }
}

// Normalised similarity weights of one query against every key except `skip` (leave-one-out), in
// `row` [n]. Returns false, with `row` all zeros, when no key reaches the query.
bool weights_row(const ConstRowRef& query, const MatrixRef& keys, Similarity similarity,
                 float bandwidth, Index skip, RowRef row) {
  if (similarity == Similarity::Gaussian) {
    gaussian_row(query, keys, bandwidth, skip, row);
  } else {
    for (Index j = 0; j < keys.rows(); ++j) {
      const float distance = (keys.row(j) - query).norm();
      row(j) = detail::similarity_of_scaled_distance(similarity, distance / bandwidth);
    }
  }
  if (skip != kNoKey) row(skip) = 0.0f;  // (the Gaussian row has it already)
  const float total = row.sum();
  if (!(total > 0.0f)) {
    row.setZero();
    return false;
  }
  row /= total;
  return true;
}

// One query's estimate in `output` [dy], its normalised weights in `weights` [n]: the weighted
// mean of the values, or NaN when no key reaches the query. Returns whether one did.
bool estimate_row(const ConstRowRef& query, const MatrixRef& keys, const MatrixRef& values,
                  Similarity similarity, float bandwidth, Index skip, RowRef weights,
                  RowRef output) {
  const bool reached = weights_row(query, keys, similarity, bandwidth, skip, weights);
  if (reached) {
    output.noalias() = weights * values;
  } else {
    output.setConstant(kNaN);
  }
  return reached;
}

}  // namespace

void kernel_regression(const MatrixRef& keys, const MatrixRef& values, const MatrixRef& queries,
                       Similarity similarity, float bandwidth, MatrixMap output,
                       MatrixMap* weights) {
  check_keys_values(keys, values);
  detail::require_shape("queries", {-1, keys.cols()}, detail::shape_of(queries));
  detail::require_positive_finite("bandwidth", bandwidth);
  detail::require_shape("output", {queries.rows(), values.cols()}, detail::shape_of(output));
  if (weights) {
    detail::require_shape("weights", {queries.rows(), keys.rows()}, detail::shape_of(*weights));
  }
  RowVector scratch(weights ? 0 : keys.rows());
  for (Index i = 0; i < queries.rows(); ++i) {
    auto out = output.row(i);
    if (weights) {
      auto row = weights->row(i);
      estimate_row(queries.row(i), keys, values, similarity, bandwidth, kNoKey, row, out);
    } else {
      estimate_row(queries.row(i), keys, values, similarity, bandwidth, kNoKey, scratch, out);
    }
  }
}

KernelRegression kernel_regression(const MatrixRef& keys, const MatrixRef& values,
                                   const MatrixRef& queries, Similarity similarity, float bandwidth,
                                   bool need_weights) {
  KernelRegression result;  // sized from the inputs; the call below checks that they fit
  result.output.resize(queries.rows(), values.cols());
  if (need_weights) result.weights.resize(queries.rows(), keys.rows());
  MatrixMap output(result.output.data(), result.output.rows(), result.output.cols());
  MatrixMap weights(result.weights.data(), result.weights.rows(), result.weights.cols());
  kernel_regression(keys, values, queries, similarity, bandwidth, output,
                    need_weights ? &weights : nullptr);
  return result;
}

BandwidthSearch leave_one_out(const MatrixRef& keys, const MatrixRef& values, Similarity similarity,
                              const std::vector<float>& bandwidths) {
  check_keys_values(keys, values);
  if (bandwidths.empty()) detail::fail("bandwidths", "at least one bandwidth", "none");
  for (float bandwidth : bandwidths) detail::require_positive_finite("bandwidths", bandwidth);

  const Index n = keys.rows();
  BandwidthSearch search{{}, kNaN};
  float best_error = kInfinity;
  RowVector weights(n), prediction(values.cols());
  for (float bandwidth : bandwidths) {
    // Summed in double: n squared errors of similar size would lose ~log2(n) bits in float.
    double total = n >= 2 ? 0.0 : double{kInfinity};
    for (Index i = 0; i < n; ++i) {
      if (!estimate_row(keys.row(i), keys, values, similarity, bandwidth, i, weights, prediction)) {
        total = double{kInfinity};  // key i has no estimate: this bandwidth cannot be scored
        break;
      }
      total += (prediction - values.row(i)).cast<double>().squaredNorm();
    }
    const float error = static_cast<float>(total / static_cast<double>(n));
    search.errors.push_back(error);
    // NaN (from NaN inputs) compares false: like +infinity, it is never the best.
    if (error < best_error) {
      best_error = error;
      search.best = bandwidth;
    }
  }
  return search;
}

}  // namespace attn
