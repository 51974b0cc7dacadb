#include "attn/feed_forward.hpp"

#include "attn/linear.hpp"
#include "checks.hpp"

namespace attn {

namespace {

void check_weights(const MatrixRef& x, const FeedForwardWeights& w) {
  const Index hidden = w.dense1_weight.rows();
  detail::require_shape("dense1_weight", {-1, x.cols()}, detail::shape_of(w.dense1_weight));
  detail::require_shape("dense1_bias", {hidden}, {w.dense1_bias.size()});
  detail::require_shape("dense2_weight", {-1, hidden}, detail::shape_of(w.dense2_weight));
  detail::require_shape("dense2_bias", {w.dense2_weight.rows()}, {w.dense2_bias.size()});
}

Matrix hidden_of(const MatrixRef& x, const FeedForwardWeights& w) {
  return linear(x, w.dense1_weight, w.dense1_bias).cwiseMax(0.0f);
}

}  // namespace

Matrix position_wise_ffn(const MatrixRef& x, const FeedForwardWeights& weights, Matrix* hidden) {
  check_weights(x, weights);
  Matrix h = hidden_of(x, weights);
  Matrix y = linear(h, weights.dense2_weight, weights.dense2_bias);
  if (hidden) *hidden = std::move(h);
  return y;
}

// ReLU passes the gradient where its output is positive: relu(z) > 0 exactly where z > 0.
FeedForwardGradients position_wise_ffn_backward(const MatrixRef& x,
                                                const FeedForwardWeights& weights,
                                                const MatrixRef& dy, const Matrix* hidden) {
  check_weights(x, weights);
  const Matrix recomputed = hidden ? Matrix() : hidden_of(x, weights);
  const Matrix& h = hidden ? *hidden : recomputed;
  detail::require_shape("hidden", {x.rows(), weights.dense1_weight.rows()}, detail::shape_of(h));
  LinearGradients second = linear_backward(h, weights.dense2_weight, dy);
  second.dx = (h.array() > 0.0f).select(second.dx.array(), 0.0f).matrix();
  LinearGradients first = linear_backward(x, weights.dense1_weight, second.dx);
  return {std::move(first.dx), std::move(first.dweight), std::move(second.dweight),
          std::move(first.dbias), std::move(second.dbias)};
}

}  // namespace attn
