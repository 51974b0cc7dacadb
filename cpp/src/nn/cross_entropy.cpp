#include "attn/cross_entropy.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "attn/embedding.hpp"
#include "checks.hpp"
#include "parallel/split.hpp"

namespace attn {

namespace {

// Two exps and a few adds per logit (the softmax's sum, then its gradient).
constexpr Index kWorkPerLogit = 32;

}  // namespace

CrossEntropyResult masked_cross_entropy(const MatrixRef& logits, const int32_t* labels, int32_t pad,
                                        bool need_gradient, const char* argument) {
  const Index N = logits.rows(), V = logits.cols();
  check_token_ids(argument, labels, N, V);
  CrossEntropyResult result;
  for (Index i = 0; i < N; ++i) result.count += labels[i] != pad;
  if (result.count == 0) {
    detail::fail(argument, "at least one label other than pad " + std::to_string(pad), "only pad");
  }
  if (need_gradient) result.dlogits = Matrix(N, V);
  const float inv_count = 1.0f / static_cast<float>(result.count);
  // Rows are independent: runs of them go to the pool's threads; each row's loss is kept and the
  // losses are added in row order after, so every thread count gives the same bits.
  std::vector<double> losses(static_cast<size_t>(N), 0.0);
  detail::run_ranges(N, kWorkPerLogit * V, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      if (labels[i] == pad) {
        if (need_gradient) result.dlogits.row(i).setZero();
        continue;
      }
      const auto row = logits.row(i);
      const float max = row.maxCoeff();
      const float sum = (row.array() - max).exp().sum();
      const float log_sum = max + std::log(sum);
      losses[static_cast<size_t>(i)] = static_cast<double>(log_sum - row(labels[i]));
      if (need_gradient) {
        // d l_i / d logits_i = softmax(logits_i) - onehot(label_i), over the count.
        auto grad = result.dlogits.row(i);
        grad = (row.array() - log_sum).exp().matrix() * inv_count;
        grad(labels[i]) -= inv_count;
      }
    }
  });
  double total = 0.0;  // a sum of many positive terms: kept in double
  for (const double loss : losses) total += loss;
  result.loss = static_cast<float>(total / static_cast<double>(result.count));
  return result;
}

}  // namespace attn
