#include "additive_features.hpp"

#include <algorithm>

#include "kernels/activation_kernels.hpp"
#include "kernels/row_kernels.hpp"

namespace attn::detail {

namespace {

// The features are formed a run of kRun at a time on the stack, so that nothing here allocates:
// the Bahdanau decoder calls these from its tasks, one batch row each. A score sums its runs in
// order, each run's products in lanes (f32_dot): a fixed order, whatever the thread count.
constexpr Index kRun = 64;

// f[0, n) = tanh(pq + pk)[c0, c0 + n), a run of one pair's features.
void features(const float* pq, const float* pk, Index c0, Index n, float* f) {
  for (Index c = 0; c < n; ++c) f[c] = pq[c0 + c] + pk[c0 + c];
  f32_tanh(f, f, n);
}

}  // namespace

void additive_scores(const float* pq, Index nq, const float* pk, Index nk, Index h, const float* wv,
                     float* scores, Index ld) {
  float f[kRun];
  for (Index i = 0; i < nq; ++i) {
    for (Index j = 0; j < nk; ++j) {
      float score = 0.0f;
      for (Index c0 = 0; c0 < h; c0 += kRun) {
        const Index n = std::min(kRun, h - c0);
        features(pq + i * h, pk + j * h, c0, n, f);
        score += f32_dot(wv + c0, f, n);
      }
      scores[i * ld + j] = score;
    }
  }
}

void additive_scores_backward(const float* ds, Index ld, const float* pq, Index nq, const float* pk,
                              Index nk, Index h, const float* wv, float* dpq, float* dpk,
                              float* dwv) {
  float f[kRun];
  for (Index i = 0; i < nq; ++i) {
    for (Index j = 0; j < nk; ++j) {
      const float d = ds[i * ld + j];
      if (d == 0.0f) continue;
      for (Index c0 = 0; c0 < h; c0 += kRun) {
        const Index n = std::min(kRun, h - c0);
        features(pq + i * h, pk + j * h, c0, n, f);
        for (Index c = 0; c < n; ++c) {
          const float g = d * wv[c0 + c] * (1.0f - f[c] * f[c]);
          dwv[c0 + c] += d * f[c];
          dpq[i * h + c0 + c] += g;
          dpk[j * h + c0 + c] += g;
        }
      }
    }
  }
}

}  // namespace attn::detail
