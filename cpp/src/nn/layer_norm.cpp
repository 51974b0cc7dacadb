#include "attn/layer_norm.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"

namespace attn {

namespace {

void check_affine(const char* argument, const VectorRef& v, Index d) {
  detail::require_shape(argument, {d}, {v.size()});
}

void check_eps(float eps) { detail::require_positive_finite("eps", eps); }

// One row normalised, (x - mean) / sqrt(var + eps), in double: a row of a Transformer sits far
// from zero (embeddings scaled by sqrt(d)), where a float mean or float sums of squares would
// lose the digits that tell its entries apart. Returns 1 / sqrt(var + eps).
double normalise(const float* row, Index d, float eps, Eigen::ArrayXf& normalised) {
  double sum = 0.0;
  for (Index j = 0; j < d; ++j) sum += row[j];
  const double mean = sum / static_cast<double>(d);
  double squares = 0.0;
  for (Index j = 0; j < d; ++j) squares += (row[j] - mean) * (row[j] - mean);
  const double inverse_std = 1.0 / std::sqrt(squares / static_cast<double>(d) + eps);
  for (Index j = 0; j < d; ++j) normalised[j] = static_cast<float>((row[j] - mean) * inverse_std);
  return inverse_std;
}

}  // namespace

Matrix layer_norm(const MatrixRef& x, const VectorRef& weight, const VectorRef& bias, float eps) {
  const Index d = x.cols();
  check_affine("weight", weight, d);
  check_affine("bias", bias, d);
  check_eps(eps);
  Matrix y(x.rows(), d);
  Eigen::ArrayXf normalised(d);
  for (Index i = 0; i < x.rows(); ++i) {
    normalise(x.row(i).data(), d, eps, normalised);
    y.row(i) = (normalised * weight.array() + bias.array()).matrix().transpose();
  }
  return y;
}

// With x^ = (x - mean) * r and g = dy * weight: dx = r (g - mean(g) - x^ mean(g x^)),
// dweight = sum over rows of dy x^, dbias = sum over rows of dy.
LayerNormGradients layer_norm_backward(const MatrixRef& x, const VectorRef& weight,
                                       const MatrixRef& dy, float eps) {
  const Index n = x.rows(), d = x.cols();
  check_affine("weight", weight, d);
  detail::require_shape("dy", {n, d}, detail::shape_of(dy));
  check_eps(eps);
  LayerNormGradients g{Matrix(n, d), Vector::Zero(d), Vector::Zero(d)};
  Eigen::ArrayXf normalised(d), scaled(d);
  for (Index i = 0; i < n; ++i) {
    const auto inverse_std = static_cast<float>(normalise(x.row(i).data(), d, eps, normalised));
    scaled = dy.row(i).transpose().array() * weight.array();
    const float mean_scaled = scaled.mean();
    const float mean_product = (scaled * normalised).mean();
    g.dx.row(i) =
        (inverse_std * (scaled - mean_scaled - normalised * mean_product)).matrix().transpose();
    g.dweight.array() += dy.row(i).transpose().array() * normalised;
    g.dbias += dy.row(i).transpose();
  }
  return g;
}

namespace {

Matrix residual_sum(const MatrixRef& x, const MatrixRef& y, const DropoutOptions& options) {
  detail::require_shape("y", detail::shape_of(x), detail::shape_of(y));
  return dropout(y, options) + x;
}

}  // namespace

Matrix add_norm(const MatrixRef& x, const MatrixRef& y, const VectorRef& weight,
                const VectorRef& bias, const DropoutOptions& options) {
  return layer_norm(residual_sum(x, y, options), weight, bias);
}

AddNormGradients add_norm_backward(const MatrixRef& x, const MatrixRef& y, const VectorRef& weight,
                                   const MatrixRef& dout, const DropoutOptions& options) {
  LayerNormGradients ln = layer_norm_backward(residual_sum(x, y, options), weight, dout);
  Matrix dy = dropout(ln.dx, options);
  return {std::move(ln.dx), std::move(dy), std::move(ln.dweight), std::move(ln.dbias)};
}

}  // namespace attn
