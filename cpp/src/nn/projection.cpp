#include "nn/projection.hpp"

#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn::detail {

Matrix project(const MatrixRef& x, const Projection& p) {
  Matrix projected =
      p.panels ? matmul_transposed_packed(x, *p.panels, p.out) : matmul_transposed(x, p.matrix());
  if (p.bias) add_bias_rows(projected, p.bias);
  return projected;
}

Projection PanelStore::packed(Projection p) {
  panels_.push_back(pack_transposed(p.matrix()));
  p.panels = &panels_.back();
  return p;
}

}  // namespace attn::detail
