#include "attn/kernel_regression.hpp"

#include <cmath>
#include <limits>

#include "checks.hpp"
#include "gemm.hpp"

namespace attn {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

void check_keys_values(const MatrixRef& keys, const MatrixRef& values) {
  detail::require_shape("values", {keys.rows(), -1}, detail::shape_of(values));
}

// Unnormalised kernel weights [m, n] between queries and keys.
Matrix kernel_matrix(const MatrixRef& queries, const MatrixRef& keys, Kernel kernel,
                     float bandwidth) {
  detail::require_positive_finite("bandwidth", bandwidth);
  Matrix weights(queries.rows(), keys.rows());
  for (Index i = 0; i < queries.rows(); ++i) {
    for (Index j = 0; j < keys.rows(); ++j) {
      const float distance = (queries.row(i) - keys.row(j)).norm();
      weights(i, j) = detail::kernel_of_scaled_distance(kernel, distance / bandwidth);
    }
  }
  return weights;
}

// Divides each row by its sum; a row with nothing in it stays zero.
void normalise_rows(Matrix& weights) {
  for (Index i = 0; i < weights.rows(); ++i) {
    const float total = weights.row(i).sum();
    if (total > 0) weights.row(i) /= total;
  }
}

// Pools values with normalised weights; rows whose weights are all zero give NaN.
Matrix pool(const Matrix& weights, const MatrixRef& values) {
  Matrix output = detail::matmul(weights, values);
  for (Index i = 0; i < weights.rows(); ++i) {
    if (!(weights.row(i).sum() > 0)) output.row(i).setConstant(kNaN);
  }
  return output;
}

}  // namespace

KernelRegression kernel_regression(const MatrixRef& keys, const MatrixRef& values,
                                   const MatrixRef& queries, Kernel kernel, float bandwidth) {
  check_keys_values(keys, values);
  detail::require_shape("queries", {-1, keys.cols()}, detail::shape_of(queries));
  KernelRegression result;
  result.weights = kernel_matrix(queries, keys, kernel, bandwidth);
  normalise_rows(result.weights);
  result.output = pool(result.weights, values);
  return result;
}

BandwidthSearch leave_one_out(const MatrixRef& keys, const MatrixRef& values, Kernel kernel,
                              const std::vector<float>& bandwidths) {
  check_keys_values(keys, values);
  if (bandwidths.empty()) detail::fail("bandwidths", "at least one bandwidth", "none");
  for (float bandwidth : bandwidths) detail::require_positive_finite("bandwidths", bandwidth);

  const Index n = keys.rows();
  BandwidthSearch search{{}, kNaN};
  float best_error = std::numeric_limits<float>::infinity();
  for (float bandwidth : bandwidths) {
    Matrix weights = kernel_matrix(keys, keys, kernel, bandwidth);
    weights.diagonal().setZero();  // each key is predicted without itself
    normalise_rows(weights);
    const Matrix predictions = pool(weights, values);
    float error = std::numeric_limits<float>::infinity();
    if (n >= 2 && predictions.allFinite()) {
      error = (predictions - values).rowwise().squaredNorm().mean();
    }
    search.errors.push_back(error);
    if (error < best_error) {
      best_error = error;
      search.best = bandwidth;
    }
  }
  return search;
}

}  // namespace attn
