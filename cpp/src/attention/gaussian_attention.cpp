#include "gaussian_attention.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/fused_attention.hpp"
#include "kernels/seeded_dropout.hpp"

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

GaussianAttention::GaussianAttention(const MatrixRef& keys, const MatrixRef& values,
                                     const MatrixRef* queries)
    : n_(keys.rows()),
      m_(queries ? queries->rows() : keys.rows()),
      d_(keys.cols()),
      dy_(values.cols()),
      leave_one_out_(queries == nullptr),
      values_(values) {
  // Centring shrinks the norms that the rounding bound grows with (data far from the origin
  // would otherwise pay for their offset); distances do not change.
  const Eigen::RowVectorXd mean = keys.cast<double>().colwise().mean();
  const Eigen::RowVectorXf centre = mean.cast<float>();
  keys_ = keys.rowwise() - centre;
  double key_largest = 0.0, query_largest = 0.0;
  key_norms_ = squared_norms(keys_, key_largest);
  if (queries) {
    queries_ = queries->rowwise() - centre;
    squared_norms(queries_, query_largest);
  } else {
    query_largest = key_largest;
  }
  largest_ = key_largest + query_largest;
}

bool GaussianAttention::exact_enough(float bandwidth) const {
  const double sigma2 = double{bandwidth} * double{bandwidth};
  const double bound = static_cast<double>(d_ + 6) * 0x1p-24 * largest_ * largest_ / sigma2;
  return bound <= kWeightTolerance;  // false for NaN and infinite data
}

void GaussianAttention::run(float bandwidth, float* output, float* weights) const {
  const double sigma2 = double{bandwidth} * double{bandwidth};
  std::vector<float> bias(static_cast<size_t>(n_));
  for (Index j = 0; j < n_; ++j) {
    bias[static_cast<size_t>(j)] =
        static_cast<float>(-key_norms_[static_cast<size_t>(j)] / (2.0 * sigma2));
  }
  FusedExtras extras;
  extras.modifiers.key_bias = bias.data();
  extras.modifiers.exclude_self = leave_one_out_;
  Mask mask;
  mask.fill = -std::numeric_limits<float>::infinity();  // nothing is masked but the query's own key
  const Matrix& queries = leave_one_out_ ? keys_ : queries_;
  const MutableBatch weight_view{weights, 1, m_, n_};
  attention_fused({queries.data(), 1, m_, d_}, {keys_.data(), 1, n_, d_},
                  {values_.data(), 1, n_, dy_}, static_cast<float>(1.0 / sigma2), mask,
                  /*batch_heads=*/1, Dropout(0.0f, 0), {output, 1, m_, dy_},
                  weights ? &weight_view : nullptr, HiddenBlocks::Skip, extras);
}

}  // namespace attn::detail
