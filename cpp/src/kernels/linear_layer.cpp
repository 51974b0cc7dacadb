#include "linear_layer.hpp"

#include <vector>

#include "gemm.hpp"
#include "parallel/split.hpp"

namespace attn::detail {

void add_bias_rows(Matrix& y, const float* bias) {
  const Eigen::Map<const Vector> b(bias, y.cols());
  run_ranges(y.rows(), y.cols(), [&](Index begin, Index end) {
    y.middleRows(begin, end - begin).rowwise() += b.transpose();
  });
}

void accumulate_weight_gradient(const MatrixRef& dy, const MatrixRef& x, Eigen::Ref<Matrix> dweight,
                                float* dbias) {
  const Index rows = dy.rows(), out = dy.cols(), in = x.cols();
  // The product's left operand is dY^T, row-major: transposed here, a run of output units per
  // task, each unit's bias gradient summed from its transposed row (in row order, as dY's
  // column).
  Matrix dy_t(out, rows);
  run_ranges(out, 2 * rows, [&](Index begin, Index end) {
    dy_t.middleRows(begin, end - begin) = dy.middleCols(begin, end - begin).transpose();
    if (!dbias) return;
    for (Index o = begin; o < end; ++o) {
      const float* column = dy_t.data() + o * rows;
      float sum = 0.0f;
      for (Index i = 0; i < rows; ++i) sum += column[i];
      dbias[o] += sum;
    }
  });
  const std::vector<float> packed = pack(x);
  f32_gemm_panels(dy_t.data(), rows, out, rows, packed.data(), kPanel * rows, in, dweight.data(),
                  dweight.outerStride(), /*accumulate=*/true);
}

}  // namespace attn::detail
