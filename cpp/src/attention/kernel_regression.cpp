#include "attn/kernel_regression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "checks.hpp"
#include "parallel/split.hpp"
#include "similarity.hpp"

namespace attn {

namespace {

using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using RowRef = Eigen::Ref<RowVector>;
using ConstRowRef = Eigen::Ref<const RowVector>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr Index kNoKey = -1;
// Query rows per task: every row is computed alone, so the split changes no bit of the result;
// a fixed size keeps the tasks the same whatever the thread count.
constexpr Index kRowsPerTask = 16;

Index row_tasks(Index rows) { return (rows + kRowsPerTask - 1) / kRowsPerTask; }

// The work of `rows` queries against n keys, as multiply-adds (an exp counted as 16): what
// run_split weighs against waking the workers.
Index row_work(Index rows, const MatrixRef& keys, const MatrixRef& values) {
  return rows * keys.rows() * (2 * keys.cols() + values.cols() + 16);
}

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
  const Index m = queries.rows(), tasks = row_tasks(m);
  // Without weights to write into, each thread's rows go through a scratch row of its own.
  std::vector<RowVector> scratch(
      static_cast<size_t>(std::min<Index>(detail::thread_pool().threads(), tasks)),
      RowVector(weights ? 0 : keys.rows()));
  detail::run_split(tasks, row_work(m, keys, values), [&](Index task, int slot) {
    for (Index i = task * kRowsPerTask; i < std::min(m, (task + 1) * kRowsPerTask); ++i) {
      auto out = output.row(i);
      if (weights) {
        auto row = weights->row(i);
        estimate_row(queries.row(i), keys, values, similarity, bandwidth, kNoKey, row, out);
      } else {
        estimate_row(queries.row(i), keys, values, similarity, bandwidth, kNoKey,
                     scratch[static_cast<size_t>(slot)], out);
      }
    }
  });
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

  const Index n = keys.rows(), tasks = row_tasks(n);
  const auto count = static_cast<Index>(bandwidths.size());
  // Each (bandwidth, key) prediction is computed alone, a block of keys a task, into its own
  // entries; the sums then run in key order, as one thread would add them.
  std::vector<double> errors(static_cast<size_t>(count * n));
  std::vector<char> reached(errors.size());
  const auto slots =
      static_cast<size_t>(std::min<Index>(detail::thread_pool().threads(), count * tasks));
  std::vector<RowVector> weights(slots, RowVector(n)), prediction(slots, RowVector(values.cols()));
  detail::run_split(count * tasks, count * row_work(n, keys, values), [&](Index task, int slot) {
    const Index b = task / tasks, first = task % tasks * kRowsPerTask;
    for (Index i = first; i < std::min(n, first + kRowsPerTask); ++i) {
      const auto at = static_cast<size_t>(b * n + i);
      RowVector& p = prediction[static_cast<size_t>(slot)];
      reached[at] =
          estimate_row(keys.row(i), keys, values, similarity, bandwidths[static_cast<size_t>(b)], i,
                       weights[static_cast<size_t>(slot)], p);
      errors[at] = reached[at] ? (p - values.row(i)).cast<double>().squaredNorm() : 0.0;
    }
  });
  BandwidthSearch search{{}, kNaN};
  float best_error = kInfinity;
  for (Index b = 0; b < count; ++b) {
    // Summed in double: n squared errors of similar size would lose ~log2(n) bits in float.
    double total = n >= 2 ? 0.0 : double{kInfinity};
    for (Index i = 0; i < n; ++i) {
      if (!reached[static_cast<size_t>(b * n + i)]) {
        total = double{kInfinity};  // key i has no estimate: this bandwidth cannot be scored
        break;
      }
      total += errors[static_cast<size_t>(b * n + i)];
    }
    const float error = static_cast<float>(total / static_cast<double>(n));
    search.errors.push_back(error);
    // NaN (from NaN inputs) compares false: like +infinity, it is never the best.
    if (error < best_error) {
      best_error = error;
      search.best = bandwidths[static_cast<size_t>(b)];
    }
  }
  return search;
}

}  // namespace attn
