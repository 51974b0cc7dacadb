#include "attn/activations.hpp"

#include <cmath>

#include "checks.hpp"

namespace attn {

namespace {

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

float sigmoid(float g) { return 1.0f / (1.0f + std::exp(-g)); }

void check_gate_up(const MatrixRef& x) {
  if (x.cols() % 2 != 0) {
    detail::fail("x", "an even number of columns (gate and up side by side)",
                 std::to_string(x.cols()));
  }
}

}  // namespace

Matrix gelu_tanh(const MatrixRef& x) {
  return x.unaryExpr([](float v) {
    return 0.5f * v * (1.0f + std::tanh(kGeluScale * (v + kGeluCubic * v * v * v)));
  });
}

Matrix gelu_tanh_backward(const MatrixRef& x, const MatrixRef& dy) {
  detail::require_shape("dy", detail::shape_of(x), detail::shape_of(dy));
  return x.binaryExpr(dy, [](float v, float g) {
    const float t = std::tanh(kGeluScale * (v + kGeluCubic * v * v * v));
    const float dt = (1.0f - t * t) * kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
    return g * (0.5f * (1.0f + t) + 0.5f * v * dt);
  });
}

Matrix swiglu(const MatrixRef& x) {
  check_gate_up(x);
  const Index m = x.cols() / 2;
  const auto gate = x.leftCols(m), up = x.rightCols(m);
  return gate.binaryExpr(up, [](float g, float u) { return g * sigmoid(g) * u; });
}

// d/dg silu(g) = s (1 + g (1 - s)), s = sigmoid(g).
Matrix swiglu_backward(const MatrixRef& x, const MatrixRef& dy) {
  check_gate_up(x);
  const Index m = x.cols() / 2;
  detail::require_shape("dy", {x.rows(), m}, detail::shape_of(dy));
  Matrix dx(x.rows(), x.cols());
  const auto gate = x.leftCols(m), up = x.rightCols(m);
  dx.leftCols(m) = gate.binaryExpr(up,
                                   [](float g, float u) {
                                     const float s = sigmoid(g);
                                     return u * s * (1.0f + g * (1.0f - s));
                                   })
                       .cwiseProduct(dy);
  dx.rightCols(m) = gate.unaryExpr([](float g) { return g * sigmoid(g); }).cwiseProduct(dy);
  return dx;
}

}  // namespace attn
