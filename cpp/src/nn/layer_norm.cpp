#include "attn/layer_norm.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"
#include "parallel/split.hpp"

namespace attn {

namespace {

void check_affine(const char* argument, const VectorRef& v, Index d) {
  detail::require_shape(argument, {d}, {v.size()});
}

void check_eps(float eps) { detail::require_positive_finite("eps", eps); }

// One row normalised, (x - mean) / sqrt(var + eps), in double: a row of a Transformer sits far
// from zero (embeddings scaled by sqrt(d)), where a float mean or float sums of squares would
// lose the digits that tell its entries apart. Writes x^ into `normalised` (d floats) and returns
// 1 / sqrt(var + eps).
double normalise(const float* row, Index d, float eps, float* normalised) {
  double sum = 0.0;
  for (Index j = 0; j < d; ++j) sum += row[j];
  const double mean = sum / static_cast<double>(d);
  double squares = 0.0;
  for (Index j = 0; j < d; ++j) squares += (row[j] - mean) * (row[j] - mean);
  const double inverse_std = 1.0 / std::sqrt(squares / static_cast<double>(d) + eps);
  for (Index j = 0; j < d; ++j) normalised[j] = static_cast<float>((row[j] - mean) * inverse_std);
  return inverse_std;
}

// Rows are independent: runs of them go to the pool's threads, each row normalised straight into
// its output row (no scratch, so a task allocates nothing).
constexpr Index kRowWorkPerEntry = 8;

}  // namespace

Matrix layer_norm(const MatrixRef& x, const VectorRef& weight, const VectorRef& bias, float eps) {
  const Index d = x.cols();
  check_affine("weight", weight, d);
  check_affine("bias", bias, d);
  check_eps(eps);
  Matrix y(x.rows(), d);
  detail::run_ranges(x.rows(), kRowWorkPerEntry * d, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      float* out = y.row(i).data();
      normalise(x.row(i).data(), d, eps, out);
      for (Index j = 0; j < d; ++j) out[j] = out[j] * weight[j] + bias[j];
    }
  });
  return y;
}

// With x^ = (x - mean) * r and g = dy * weight: dx = r (g - mean(g) - x^ mean(g x^)),
// dweight = sum over rows of dy x^, dbias = sum over rows of dy. Each run of rows sums its part
// of dweight and dbias; the parts are added in the order of the runs, which depend on the sizes
// alone, so the result is the same for every thread count.
LayerNormGradients layer_norm_backward(const MatrixRef& x, const VectorRef& weight,
                                       const MatrixRef& dy, float eps) {
  const Index n = x.rows(), d = x.cols();
  check_affine("weight", weight, d);
  detail::require_shape("dy", {n, d}, detail::shape_of(dy));
  check_eps(eps);
  LayerNormGradients g{Matrix(n, d), Vector::Zero(d), Vector::Zero(d)};
  const Index row_work = 2 * kRowWorkPerEntry * d, chunk = detail::range_chunk(row_work);
  Matrix parts = Matrix::Zero((n + chunk - 1) / chunk, 2 * d);  // [dweight, dbias] per run
  detail::run_ranges(n, row_work, [&](Index begin, Index end) {
    float* dweight = parts.row(begin / chunk).data();
    float* dbias = dweight + d;
    for (Index i = begin; i < end; ++i) {
      float* dx = g.dx.row(i).data();  // holds x^ until the row's dx overwrites it
      const auto inverse_std = static_cast<float>(normalise(x.row(i).data(), d, eps, dx));
      const float* dyi = dy.row(i).data();
      float sum_scaled = 0.0f, sum_product = 0.0f;
      for (Index j = 0; j < d; ++j) {
        const float scaled = dyi[j] * weight[j];
        sum_scaled += scaled;
        sum_product += scaled * dx[j];
        dweight[j] += dyi[j] * dx[j];
        dbias[j] += dyi[j];
      }
      const float mean_scaled = sum_scaled / static_cast<float>(d);
      const float mean_product = sum_product / static_cast<float>(d);
      for (Index j = 0; j < d; ++j) {
        dx[j] = inverse_std * (dyi[j] * weight[j] - mean_scaled - dx[j] * mean_product);
      }
    }
  });
  for (Index c = 0; c < parts.rows(); ++c) {
    g.dweight += parts.row(c).head(d).transpose();
    g.dbias += parts.row(c).tail(d).transpose();
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
