#include "row_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::detail {

void f32_softmax_row(float* row, Index n) {
  float max = -std::numeric_limits<float>::infinity();
  for (Index i = 0; i < n; ++i) max = std::max(max, row[i]);
  float sum = 0.0f;
  for (Index i = 0; i < n; ++i) {
    row[i] = std::exp(row[i] - max);
    sum += row[i];
  }
  const float inverse = 1.0f / sum;
  for (Index i = 0; i < n; ++i) row[i] *= inverse;
}

void f32_axpy(float a, const float* x, float* y, Index n) {
  for (Index i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace attn::detail
