#include "attn/linear.hpp"

#include "checks.hpp"
#include "kernels/gemm.hpp"

namespace attn {

Matrix linear(const MatrixRef& x, const MatrixRef& weight, const VectorRef& bias) {
  detail::require_shape("weight", {-1, x.cols()}, detail::shape_of(weight));
  if (bias.size() != 0 && bias.size() != weight.rows()) {
    detail::fail("bias", "shape " + detail::shape_string({weight.rows()}) + " or none",
                 detail::shape_string({bias.size()}));
  }
  Matrix y = detail::matmul_transposed(x, weight);
  if (bias.size() != 0) y.rowwise() += bias.transpose();
  return y;
}

LinearGradients linear_backward(const MatrixRef& x, const MatrixRef& weight, const MatrixRef& dy) {
  detail::require_shape("weight", {-1, x.cols()}, detail::shape_of(weight));
  detail::require_shape("dy", {x.rows(), weight.rows()}, detail::shape_of(dy));
  return {detail::matmul(dy, weight), detail::matmul(dy.transpose(), x),
          dy.colwise().sum().transpose()};
}

}  // namespace attn
