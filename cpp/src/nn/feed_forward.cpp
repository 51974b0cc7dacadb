#include "attn/feed_forward.hpp"

#include "attn/linear.hpp"
#include "checks.hpp"
#include "nn/feed_forward_projections.hpp"

namespace attn {

namespace detail {

Matrix ffn_hidden(const MatrixRef& x, const Projection& dense1) {
  return project(x, dense1).cwiseMax(0.0f);
}

Matrix feed_forward(const MatrixRef& x, const Projection& dense1, const Projection& dense2,
                    Matrix* hidden) {
  Matrix h = ffn_hidden(x, dense1);
  Matrix y = project(h, dense2);
  if (hidden) *hidden = std::move(h);
  return y;
}

}  // namespace detail

namespace {

void check_weights(const MatrixRef& x, const FeedForwardWeights& w) {
  const Index hidden = w.dense1_weight.rows();
  detail::require_shape("dense1_weight", {-1, x.cols()}, detail::shape_of(w.dense1_weight));
  detail::require_shape("dense1_bias", {hidden}, {w.dense1_bias.size()});
  detail::require_shape("dense2_weight", {-1, hidden}, detail::shape_of(w.dense2_weight));
  detail::require_shape("dense2_bias", {w.dense2_weight.rows()}, {w.dense2_bias.size()});
}

}  // namespace

Matrix position_wise_ffn(const MatrixRef& x, const FeedForwardWeights& weights, Matrix* hidden) {
  check_weights(x, weights);
  return detail::feed_forward(x, detail::projection_of(weights.dense1_weight, weights.dense1_bias),
                              detail::projection_of(weights.dense2_weight, weights.dense2_bias),
                              hidden);
}

// ReLU passes the gradient where its output is positive: relu(z) > 0 exactly where z > 0.
FeedForwardGradients position_wise_ffn_backward(const MatrixRef& x,
                                                const FeedForwardWeights& weights,
                                                const MatrixRef& dy, const Matrix* hidden) {
  check_weights(x, weights);
  const Matrix recomputed =
      hidden ? Matrix()
             : detail::ffn_hidden(
                   x, detail::projection_of(weights.dense1_weight, weights.dense1_bias));
  const Matrix& h = hidden ? *hidden : recomputed;
  detail::require_shape("hidden", {x.rows(), weights.dense1_weight.rows()}, detail::shape_of(h));
  LinearGradients second = linear_backward(h, weights.dense2_weight, dy);
  second.dx = (h.array() > 0.0f).select(second.dx.array(), 0.0f).matrix();
  LinearGradients first = linear_backward(x, weights.dense1_weight, second.dx);
  return {std::move(first.dx), std::move(first.dweight), std::move(second.dweight),
          std::move(first.dbias), std::move(second.dbias)};
}

}  // namespace attn
