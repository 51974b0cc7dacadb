#pragma once
// Double-precision references for the backward passes: central finite differences of any loss,
// and the analytic attention gradients written from the textbook formulas (checked against the
// finite differences in test_attention_backward.cpp, so the larger cases, where differencing
// every input would be slow, still meet an independent reference). The loss is always
// sum(output * grad_output), the scalar whose gradient the library returns.

#include <functional>
#include <string>
#include <vector>

#include "reference.hpp"

namespace ref {

// d loss / d x by central differences, every entry of x in turn (x is copied and perturbed).
template <typename Tensor>
Tensor numeric_gradient(Tensor x, const std::function<double(const Tensor&)>& loss,
                        double step = 1e-6) {
  Tensor gradient = x;
  for (size_t t = 0; t < x.v.size(); ++t) {
    const double saved = x.v[t];
    x.v[t] = saved + step;
    const double up = loss(x);
    x.v[t] = saved - step;
    const double down = loss(x);
    x.v[t] = saved;
    gradient.v[t] = (up - down) / (2.0 * step);
  }
  return gradient;
}

inline std::vector<double> numeric_gradient(
    std::vector<double> x, const std::function<double(const std::vector<double>&)>& loss,
    double step = 1e-6) {
  struct Wrapped {
    std::vector<double> v;
  };
  return numeric_gradient<Wrapped>(
             {std::move(x)}, [&](const Wrapped& w) { return loss(w.v); }, step)
      .v;
}

inline double dot(const Batch& a, const Batch& b) {
  double sum = 0.0;
  for (size_t t = 0; t < a.v.size(); ++t) sum += a.v[t] * b.v[t];
  return sum;
}

// The rule for gradients: every entry within 2e-4 of the largest reference entry's
// magnitude (a gradient is a sum of many products; its small entries carry the big ones' error).
inline void check_gradient(const float* got, const std::vector<double>& expected,
                           const std::vector<Index>& shape, const std::string& what) {
  double largest = 0.0;
  for (double x : expected) largest = std::max(largest, std::abs(x));
  check_close(got, expected.data(), expected.size(), {0.0, 2e-4 * largest + 1e-7}, what, shape);
}

inline void check_gradient(const attn::Tensor3& got, const Batch& expected,
                           const std::string& what) {
  REQUIRE(got.batch == expected.batch);
  REQUIRE(got.rows == expected.rows);
  REQUIRE(got.cols == expected.cols);
  check_gradient(got.data.data(), expected.v, {got.batch, got.rows, got.cols}, what);
}

struct AttentionGradients {
  Batch dq, dk, dv;
};

// Gradients of sum(O * dO) for O = (P * F) v, P = softmax(mask(scale q k^T)); F [B, nq, nk]
// holds the dropout factors (empty: none). A masked score is a constant: no gradient.
inline AttentionGradients attention_backward(const Batch& q, const Batch& k, const Batch& v,
                                             const Batch& grad_output, const attn::Mask& mask,
                                             double scale, const Batch& factors = {}) {
  const Index B = q.batch, nq = q.rows, nk = k.rows;
  const Batch p = masked_softmax(score_dot(q, k, scale), mask);
  AttentionGradients g{Batch(B, nq, q.cols), Batch(B, nk, k.cols), Batch(B, nk, v.cols)};
  for (Index b = 0; b < B; ++b) {
    for (Index i = 0; i < nq; ++i) {
      std::vector<double> grad_weight(static_cast<size_t>(nk));  // F * (dO v^T)
      double delta = 0.0;
      for (Index j = 0; j < nk; ++j) {
        const double f = factors.v.empty() ? 1.0 : factors(b, i, j);
        double sum = 0.0;
        for (Index c = 0; c < v.cols; ++c) sum += grad_output(b, i, c) * v(b, j, c);
        grad_weight[static_cast<size_t>(j)] = f * sum;
        delta += p(b, i, j) * f * sum;
        for (Index c = 0; c < v.cols; ++c) g.dv(b, j, c) += p(b, i, j) * f * grad_output(b, i, c);
      }
      for (Index j = 0; j < nk; ++j) {
        if (masked(mask, B, 1, nq, nk, b, i, j)) continue;
        const double ds = scale * p(b, i, j) * (grad_weight[static_cast<size_t>(j)] - delta);
        for (Index c = 0; c < q.cols; ++c) {
          g.dq(b, i, c) += ds * k(b, j, c);
          g.dk(b, j, c) += ds * q(b, i, c);
        }
      }
    }
  }
  return g;
}

}  // namespace ref
