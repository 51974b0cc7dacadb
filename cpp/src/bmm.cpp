#include "attn/bmm.hpp"

#include "checks.hpp"
#include "gemm.hpp"

namespace attn {

void bmm(ConstBatch a, ConstBatch b, MutableBatch out) {
  detail::require_shape("b", {a.batch, a.cols, -1}, detail::shape_of(b));
  detail::require_shape("out", {a.batch, a.rows, b.cols}, detail::shape_of(out));
  for (Index i = 0; i < a.batch; ++i) {
    detail::f32_gemm(a[i].data(), a.rows, a.cols, b[i].data(), b.cols, false, out[i].data());
  }
}

Tensor3 bmm(const Tensor3& a, const Tensor3& b) {
  Tensor3 out(a.batch, a.rows, b.cols);
  bmm(a.view(), b.view(), out.view());
  return out;
}

}  // namespace attn
