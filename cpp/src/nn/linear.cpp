#include "attn/linear.hpp"

#include "checks.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn {

Matrix linear(const MatrixRef& x, const MatrixRef& weight, const VectorRef& bias) {
  detail::require_shape("weight", {-1, x.cols()}, detail::shape_of(weight));
  if (bias.size() != 0 && bias.size() != weight.rows()) {
    detail::fail("bias", "shape " + detail::shape_string({weight.rows()}) + " or none",
                 detail::shape_string({bias.size()}));
  }
  Matrix y = detail::matmul_transposed(x, weight);
  if (bias.size() != 0) detail::add_bias_rows(y, bias.data());
  return y;
}

LinearGradients linear_backward(const MatrixRef& x, const MatrixRef& weight, const MatrixRef& dy) {
  detail::require_shape("weight", {-1, x.cols()}, detail::shape_of(weight));
  detail::require_shape("dy", {x.rows(), weight.rows()}, detail::shape_of(dy));
  LinearGradients g{detail::matmul(dy, weight), Matrix::Zero(weight.rows(), weight.cols()),
                    Vector::Zero(weight.rows())};
  detail::accumulate_weight_gradient(dy, x, g.dweight, g.dbias.data());
  return g;
}

}  // namespace attn
