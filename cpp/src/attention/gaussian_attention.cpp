#include "gaussian_attention.hpp"

#include <limits>
#include <vector>

#include "kernels/fused_attention.hpp"
#include "kernels/seeded_dropout.hpp"

namespace attn::detail {

GaussianAttention::GaussianAttention(const MatrixRef& keys, const MatrixRef& values,
                                     const MatrixRef* queries)
    : data_(keys, queries), values_(values) {}

bool GaussianAttention::exact_enough(float bandwidth) const {
  const double sigma2 = double{bandwidth} * double{bandwidth};
  return data_.rounding_bound() / sigma2 <= kWeightTolerance;  // false for NaN and infinite data
}

void GaussianAttention::run(float bandwidth, float* output, float* weights) const {
  const double sigma2 = double{bandwidth} * double{bandwidth};
  const Index n = data_.keys.rows(), d = data_.keys.cols(), dy = values_.cols();
  const Matrix& queries = data_.centred_queries();
  const Index m = queries.rows();
  std::vector<float> bias(static_cast<size_t>(n));
  for (Index j = 0; j < n; ++j) {
    bias[static_cast<size_t>(j)] =
        static_cast<float>(-data_.key_squared_norms[static_cast<size_t>(j)] / (2.0 * sigma2));
  }
  FusedExtras extras;
  extras.modifiers.key_bias = bias.data();
  extras.modifiers.exclude_self = data_.leave_one_out;
  Mask mask;
  mask.fill = -std::numeric_limits<float>::infinity();  // nothing is masked but the query's own key
  const MutableBatch weight_view{weights, 1, m, n};
  attention_fused({queries.data(), 1, m, d}, {data_.keys.data(), 1, n, d},
                  {values_.data(), 1, n, dy}, static_cast<float>(1.0 / sigma2), mask,
                  /*batch_heads=*/1, Dropout(0.0f, 0), {output, 1, m, dy},
                  weights ? &weight_view : nullptr, HiddenBlocks::Skip, extras);
}

}  // namespace attn::detail
