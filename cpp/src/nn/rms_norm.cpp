#include "attn/rms_norm.hpp"

#include <cmath>

#include "checks.hpp"

namespace attn {

namespace {

void check(const MatrixRef& x, const VectorRef& weight, float eps) {
  detail::require_shape("weight", {x.cols()}, {weight.size()});
  detail::require_positive_finite("eps", eps);
}

// 1 / sqrt(mean(x^2) + eps) of each row, the mean in double as PyTorch's float32 reduction is
// close to (it accumulates pairwise).
Vector inverse_rms(const MatrixRef& x, float eps) {
  Vector r(x.rows());
  for (Index i = 0; i < x.rows(); ++i) {
    double sum = 0.0;
    for (Index j = 0; j < x.cols(); ++j) sum += double{x(i, j)} * x(i, j);
    const double mean = x.cols() ? sum / static_cast<double>(x.cols()) : 0.0;
    r(i) = static_cast<float>(1.0 / std::sqrt(mean + eps));
  }
  return r;
}

}  // namespace

Matrix rms_norm(const MatrixRef& x, const VectorRef& weight, float eps) {
  check(x, weight, eps);
  const Vector r = inverse_rms(x, eps);
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    y.row(i) = (x.row(i) * r(i)).cwiseProduct(weight.transpose());
  }
  return y;
}

// With r = 1 / rms and u = dy * weight: dx = r u - x r^3 mean(u x), dweight = sum over rows of
// dy * x r.
RmsNormGradients rms_norm_backward(const MatrixRef& x, const VectorRef& weight, const MatrixRef& dy,
                                   float eps) {
  check(x, weight, eps);
  detail::require_shape("dy", {x.rows(), x.cols()}, detail::shape_of(dy));
  const Vector r = inverse_rms(x, eps);
  RmsNormGradients g{Matrix(x.rows(), x.cols()), Vector::Zero(x.cols())};
  const float d = static_cast<float>(x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    const auto u = dy.row(i).cwiseProduct(weight.transpose());
    const float mean_ux = u.dot(x.row(i)) / d;
    g.dx.row(i) = r(i) * u - x.row(i) * (r(i) * r(i) * r(i) * mean_ux);
    g.dweight += (dy.row(i).cwiseProduct(x.row(i)) * r(i)).transpose();
  }
  return g;
}

}  // namespace attn
