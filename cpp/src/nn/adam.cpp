#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "attn/optim.hpp"
#include "checks.hpp"
#include "parallel/split.hpp"

namespace attn {

Adam::Adam(const std::vector<Index>& sizes, const AdamOptions& options) : options_(options) {
  for (Index size : sizes) {
    m_.emplace_back(static_cast<size_t>(size), 0.0f);
    v_.emplace_back(static_cast<size_t>(size), 0.0f);
  }
}

void Adam::set_options(const AdamOptions& options) {
  const std::pair<const char*, float> betas[] = {{"beta1", options.beta1},
                                                 {"beta2", options.beta2}};
  for (const auto& [name, beta] : betas) {
    if (!(beta >= 0.0f && beta < 1.0f)) {
      detail::fail(name, "a number in [0, 1)", detail::number_string(beta));
    }
  }
  detail::require_positive_finite("eps", options.eps);
  options_ = options;
}

void Adam::reset() {
  for (auto& m : m_) std::fill(m.begin(), m.end(), 0.0f);
  for (auto& v : v_) std::fill(v.begin(), v.end(), 0.0f);
  steps_ = 0;
}

void Adam::step(const std::vector<FloatSpan>& parameters,
                const std::vector<ConstFloatSpan>& gradients, float lr) {
  detail::require_positive_finite("lr", lr);
  const Index count = static_cast<Index>(m_.size());
  detail::require_shape("parameters", {count}, {static_cast<Index>(parameters.size())});
  detail::require_shape("gradients", {count}, {static_cast<Index>(gradients.size())});
  for (size_t p = 0; p < m_.size(); ++p) {
    const Index size = static_cast<Index>(m_[p].size());
    const std::string index = "[" + std::to_string(p) + "]";
    detail::require_shape("parameters" + index, {size}, {parameters[p].size});
    detail::require_shape("gradients" + index, {size}, {gradients[p].size});
  }
  ++steps_;
  // PyTorch forms the bias corrections in Python floats (double), the updates in float.
  const double t = static_cast<double>(steps_);
  const float b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  const float step_size = static_cast<float>(lr / (1.0 - std::pow(double{b1}, t)));
  const float correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(double{b2}, t)));
  for (size_t p = 0; p < m_.size(); ++p) {
    float* param = parameters[p].data;
    const float* grad = gradients[p].data;
    float* m = m_[p].data();
    float* v = v_[p].data();
    // Each entry's update reads that entry alone: runs of entries go to the pool's threads.
    detail::run_ranges(static_cast<Index>(m_[p].size()), 16, [&](Index begin, Index end) {
      for (Index i = begin; i < end; ++i) {
        m[i] = b1 * m[i] + (1.0f - b1) * grad[i];
        v[i] = b2 * v[i] + (1.0f - b2) * grad[i] * grad[i];
        param[i] -= step_size * m[i] / (std::sqrt(v[i]) / correction2_sqrt + eps);
      }
    });
  }
}

}  // namespace attn
