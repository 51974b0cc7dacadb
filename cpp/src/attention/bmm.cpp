#include "attn/bmm.hpp"

#include "checks.hpp"
#include "kernels/gemm.hpp"
#include "parallel/split.hpp"

namespace attn {

void bmm(ConstBatch a, ConstBatch b, MutableBatch out) {
  detail::require_shape("b", {a.batch, a.cols, -1}, detail::shape_of(b));
  detail::require_shape("out", {a.batch, a.rows, b.cols}, detail::shape_of(out));
  detail::run_products(a.batch, a.rows * a.cols * b.cols, [&](Index i) {
    detail::f32_gemm(a[i].data(), a.rows, a.cols, b[i].data(), b.cols, false, out[i].data());
  });
}

Tensor3 bmm(const Tensor3& a, const Tensor3& b) {
  Tensor3 out(a.batch, a.rows, b.cols);
  bmm(a.view(), b.view(), out.view());
  return out;
}

BmmGradients bmm_backward(const Tensor3& a, const Tensor3& b, const Tensor3& dc) {
  detail::require_shape("b", {a.batch, a.cols, -1}, {b.batch, b.rows, b.cols});
  detail::require_shape("dc", {a.batch, a.rows, b.cols}, {dc.batch, dc.rows, dc.cols});
  BmmGradients gradients{Tensor3(a.batch, a.rows, a.cols), Tensor3(b.batch, b.rows, b.cols)};
  for (Index i = 0; i < a.batch; ++i) {
    gradients.da.view()[i] = detail::matmul_transposed(dc.view()[i], b.view()[i]);
    gradients.db.view()[i] = detail::matmul(a.view()[i].transpose(), dc.view()[i]);
  }
  return gradients;
}

}  // namespace attn
