#include "additive_features.hpp"

#include <vector>

#include "kernels/activation_kernels.hpp"

namespace attn::detail {

namespace {

// f = tanh(pq + pk), one pair's features.
void features(const float* pq, const float* pk, Index h, float* f) {
  for (Index c = 0; c < h; ++c) f[c] = pq[c] + pk[c];
  f32_tanh(f, f, h);
}

}  // namespace

void additive_scores(const float* pq, Index nq, const float* pk, Index nk, Index h, const float* wv,
                     float* scores, Index ld) {
  std::vector<float> f(static_cast<size_t>(h));
  for (Index i = 0; i < nq; ++i) {
    for (Index j = 0; j < nk; ++j) {
      features(pq + i * h, pk + j * h, h, f.data());
      float score = 0.0f;
      for (Index c = 0; c < h; ++c) score += wv[c] * f[static_cast<size_t>(c)];
      scores[i * ld + j] = score;
    }
  }
}

void additive_scores_backward(const float* ds, Index ld, const float* pq, Index nq, const float* pk,
                              Index nk, Index h, const float* wv, float* dpq, float* dpk,
                              float* dwv) {
  std::vector<float> f(static_cast<size_t>(h));
  for (Index i = 0; i < nq; ++i) {
    for (Index j = 0; j < nk; ++j) {
      const float d = ds[i * ld + j];
      if (d == 0.0f) continue;
      features(pq + i * h, pk + j * h, h, f.data());
      for (Index c = 0; c < h; ++c) {
        const float fc = f[static_cast<size_t>(c)];
        const float g = d * wv[c] * (1.0f - fc * fc);
        dwv[c] += d * fc;
        dpq[i * h + c] += g;
        dpk[j * h + c] += g;
      }
    }
  }
}

}  // namespace attn::detail
