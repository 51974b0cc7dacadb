#include "centred_products.hpp"

#include <algorithm>
#include <cmath>

namespace attn::detail {

namespace {

// Each row's squared norm in double, and the largest norm (NaN if any row has a NaN).
std::vector<double> squared_norms(const Matrix& rows, double& largest) {
  std::vector<double> norms(static_cast<size_t>(rows.rows()));
  largest = 0.0;
  for (Index i = 0; i < rows.rows(); ++i) {
    double sum = 0.0;
    for (Index f = 0; f < rows.cols(); ++f) sum += double{rows(i, f)} * double{rows(i, f)};
    norms[static_cast<size_t>(i)] = sum;
    largest = std::isnan(sum) ? sum : std::max(largest, std::sqrt(sum));
  }
  return norms;
}

}  // namespace

CentredProducts::CentredProducts(const MatrixRef& keys_in, const MatrixRef* queries_in)
    : leave_one_out(queries_in == nullptr) {
  const Eigen::RowVectorXd mean = keys_in.cast<double>().colwise().mean();
  const Eigen::RowVectorXf centre = mean.cast<float>();
  keys = keys_in.rowwise() - centre;
  double key_largest = 0.0, query_largest = 0.0;
  key_squared_norms = squared_norms(keys, key_largest);
  if (queries_in) {
    queries = queries_in->rowwise() - centre;
    query_squared_norms = squared_norms(queries, query_largest);
  } else {
    query_largest = key_largest;
  }
  largest = key_largest + query_largest;
}

double CentredProducts::rounding_bound() const {
  return static_cast<double>(keys.cols() + 6) * 0x1p-24 * largest * largest;
}

}  // namespace attn::detail
