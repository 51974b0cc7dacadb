#include "attn/cross_entropy.hpp"

#include <cmath>
#include <string>

#include "attn/embedding.hpp"
#include "checks.hpp"

namespace attn {

CrossEntropyResult masked_cross_entropy(const MatrixRef& logits, const int32_t* labels, int32_t pad,
                                        bool need_gradient, const char* argument) {
  const Index N = logits.rows(), V = logits.cols();
  check_token_ids(argument, labels, N, V);
  CrossEntropyResult result;
  for (Index i = 0; i < N; ++i) result.count += labels[i] != pad;
  if (result.count == 0) {
    detail::fail(argument, "at least one label other than pad " + std::to_string(pad), "only pad");
  }
  if (need_gradient) result.dlogits = Matrix::Zero(N, V);
  const float inv_count = 1.0f / static_cast<float>(result.count);
  double total = 0.0;  // a sum of many positive terms: kept in double
  for (Index i = 0; i < N; ++i) {
    if (labels[i] == pad) continue;
    const auto row = logits.row(i);
    const float max = row.maxCoeff();
    const float sum = (row.array() - max).exp().sum();
    const float log_sum = max + std::log(sum);
    total += static_cast<double>(log_sum - row(labels[i]));
    if (need_gradient) {
      // d l_i / d logits_i = softmax(logits_i) - onehot(label_i), over the count.
      auto grad = result.dlogits.row(i);
      grad = (row.array() - log_sum).exp().matrix() * inv_count;
      grad(labels[i]) -= inv_count;
    }
  }
  result.loss = static_cast<float>(total / static_cast<double>(result.count));
  return result;
}

}  // namespace attn
