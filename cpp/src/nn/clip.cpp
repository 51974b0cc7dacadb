#include <cmath>

#include "attn/optim.hpp"
#include "checks.hpp"

namespace attn {

float clip_grad_norm(const std::vector<FloatSpan>& gradients, float max_norm) {
  detail::require_positive_finite("max_norm", max_norm);
  double sum_squares = 0.0;  // over every gradient of a model: kept in double
  for (const FloatSpan& g : gradients) {
    for (Index i = 0; i < g.size; ++i) sum_squares += double{g.data[i]} * g.data[i];
  }
  const float norm = static_cast<float>(std::sqrt(sum_squares));
  // PyTorch: clip_coef = max_norm / (total_norm + 1e-6), applied when below 1.
  const float coefficient = max_norm / (norm + 1e-6f);
  if (coefficient < 1.0f) {
    for (const FloatSpan& g : gradients) {
      for (Index i = 0; i < g.size; ++i) g.data[i] *= coefficient;
    }
  }
  return norm;
}

}  // namespace attn
