#pragma once
// Optimisation: torch.optim.Adam with PyTorch's defaults, and torch.nn.utils.clip_grad_norm_.

#include <cstdint>
#include <vector>

#include "attn/tensor.hpp"

namespace attn {

// A run of floats not owned: one parameter tensor or its gradient.
struct FloatSpan {
  float* data = nullptr;
  Index size = 0;
};
struct ConstFloatSpan {
  const float* data = nullptr;
  Index size = 0;
};

// clip_grad_norm_(parameters, max_norm): the global L2 norm over every gradient; when
// max_norm / (norm + 1e-6) < 1 every gradient is scaled by that factor. Returns the norm before
// clipping. Throws std::invalid_argument unless max_norm is finite and > 0.
float clip_grad_norm(const std::vector<FloatSpan>& gradients, float max_norm);

struct AdamOptions {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
};

// torch.optim.Adam (no weight decay, no amsgrad): per parameter tensor, step t = 1, 2, ...
//   m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2,
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps),
// with the state (m, v, t) carried across steps.
class Adam {
 public:
  // One state per parameter tensor, of the sizes given.
  explicit Adam(const std::vector<Index>& sizes, const AdamOptions& options = {});

  // Throws std::invalid_argument when the spans do not match the sizes, or unless lr is finite
  // and > 0.
  void step(const std::vector<FloatSpan>& parameters, const std::vector<ConstFloatSpan>& gradients,
            float lr);

  // Betas and eps for the steps after this call; m, v and t are kept (PyTorch's param_groups
  // may change them between steps too). Throws std::invalid_argument naming beta1, beta2 (each
  // in [0, 1)) or eps (finite and > 0).
  void set_options(const AdamOptions& options);
  const AdamOptions& options() const { return options_; }
  int64_t steps() const { return steps_; }
  void reset();  // forget m, v and t

 private:
  AdamOptions options_;
  std::vector<std::vector<float>> m_, v_;
  int64_t steps_ = 0;
};

}  // namespace attn
