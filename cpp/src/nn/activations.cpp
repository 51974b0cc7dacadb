#include "attn/activations.hpp"

#include <cmath>

#include "checks.hpp"
#include "parallel/split.hpp"

namespace attn {

namespace {

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

float sigmoid(float g) { return 1.0f / (1.0f + std::exp(-g)); }

// Entries are independent: runs of rows go to the pool's threads, each filling its rows of the
// output, so every thread count gives the same bits. A tanh or an exp costs tens of flops.
constexpr Index kWorkPerEntry = 32;

template <typename Rows>
void by_rows(Index rows, Index cols, Rows&& fill) {
  detail::run_ranges(rows, kWorkPerEntry * cols,
                     [&](Index begin, Index end) { fill(begin, end - begin); });
}

void check_gate_up(const MatrixRef& x) {
  if (x.cols() % 2 != 0) {
    detail::fail("x", "an even number of columns (gate and up side by side)",
                 std::to_string(x.cols()));
  }
}

}  // namespace

Matrix gelu_tanh(const MatrixRef& x) {
  Matrix y(x.rows(), x.cols());
  by_rows(x.rows(), x.cols(), [&](Index first, Index count) {
    y.middleRows(first, count) = x.middleRows(first, count).unaryExpr([](float v) {
      return 0.5f * v * (1.0f + std::tanh(kGeluScale * (v + kGeluCubic * v * v * v)));
    });
  });
  return y;
}

Matrix gelu_tanh_backward(const MatrixRef& x, const MatrixRef& dy) {
  detail::require_shape("dy", detail::shape_of(x), detail::shape_of(dy));
  Matrix dx(x.rows(), x.cols());
  by_rows(x.rows(), x.cols(), [&](Index first, Index count) {
    dx.middleRows(first, count) =
        x.middleRows(first, count).binaryExpr(dy.middleRows(first, count), [](float v, float g) {
          const float t = std::tanh(kGeluScale * (v + kGeluCubic * v * v * v));
          const float dt = (1.0f - t * t) * kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
          return g * (0.5f * (1.0f + t) + 0.5f * v * dt);
        });
  });
  return dx;
}

Matrix swiglu(const MatrixRef& x) {
  check_gate_up(x);
  const Index m = x.cols() / 2;
  Matrix y(x.rows(), m);
  by_rows(x.rows(), m, [&](Index first, Index count) {
    const auto rows = x.middleRows(first, count);
    y.middleRows(first, count) = rows.leftCols(m).binaryExpr(
        rows.rightCols(m), [](float g, float u) { return g * sigmoid(g) * u; });
  });
  return y;
}

// d/dg silu(g) = s (1 + g (1 - s)), s = sigmoid(g).
Matrix swiglu_backward(const MatrixRef& x, const MatrixRef& dy) {
  check_gate_up(x);
  const Index m = x.cols() / 2;
  detail::require_shape("dy", {x.rows(), m}, detail::shape_of(dy));
  Matrix dx(x.rows(), x.cols());
  by_rows(x.rows(), m, [&](Index first, Index count) {
    const auto rows = x.middleRows(first, count);
    const auto gate = rows.leftCols(m), up = rows.rightCols(m);
    const auto dys = dy.middleRows(first, count);
    auto out = dx.middleRows(first, count);
    out.leftCols(m) = gate.binaryExpr(up,
                                      [](float g, float u) {
                                        const float s = sigmoid(g);
                                        return u * s * (1.0f + g * (1.0f - s));
                                      })
                          .cwiseProduct(dys);
    out.rightCols(m) = gate.unaryExpr([](float g) { return g * sigmoid(g); }).cwiseProduct(dys);
  });
  return dx;
}

}  // namespace attn
