#include "causal_lm_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace attn::detail {

int32_t sample_token(const float* logits, Index vocab, const GenerateOptions& options, double u) {
  if (options.temperature == 0.0f) {
    return static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
  }
  // Most likely first; equal logits keep their token order.
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  size_t kept = order.size();
  if (options.top_k > 0) kept = std::min(kept, static_cast<size_t>(options.top_k));
  // Probabilities in double over the top-k, relative to the largest logit.
  std::vector<double> p(kept);
  const double top = logits[order[0]];
  double total = 0.0;
  for (size_t i = 0; i < kept; ++i) {
    p[i] = std::exp((logits[order[i]] - top) / options.temperature);
    total += p[i];
  }
  // Top-p: keep a token while the tokens before it hold less than top_p (the first always).
  double before = 0.0;
  size_t nucleus = 0;
  while (nucleus < kept && before < options.top_p * total) before += p[nucleus++];
  double mass = 0.0;
  for (size_t i = 0; i < nucleus; ++i) mass += p[i];
  const double target = u * mass;
  double running = 0.0;
  for (size_t i = 0; i < nucleus; ++i) {
    running += p[i];
    if (target < running) return order[i];
  }
  return order[nucleus - 1];  // u * mass rounded up to the whole mass
}

}  // namespace attn::detail
