// The Transformer's building blocks against double-precision references written here from
// PyTorch's definitions: LayerNorm, d2l's AddNorm and PositionWiseFFN, and dropout. Gradients are
// checked against central finite differences of the double references.

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "attn/dropout.hpp"
#include "attn/feed_forward.hpp"
#include "attn/layer_norm.hpp"
#include "gradient_reference.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;
using attn::Vector;
using Catch::Matchers::Contains;

namespace {

using Doubles = std::vector<double>;

Doubles widen(const float* data, Index n) { return Doubles(data, data + n); }
Doubles widen(const Matrix& m) { return widen(m.data(), m.size()); }
Doubles widen(const Vector& v) { return widen(v.data(), v.size()); }

// nn.LayerNorm over rows of x [n, d] (row-major doubles), biased variance.
Doubles layer_norm_ref(const Doubles& x, Index d, const Doubles& weight, const Doubles& bias,
                       double eps = 1e-5) {
  Doubles y(x.size());
  for (size_t r = 0; r < x.size() / static_cast<size_t>(d); ++r) {
    const double* row = &x[r * static_cast<size_t>(d)];
    double mean = 0.0, var = 0.0;
    for (Index j = 0; j < d; ++j) mean += row[j] / static_cast<double>(d);
    for (Index j = 0; j < d; ++j) var += (row[j] - mean) * (row[j] - mean) / static_cast<double>(d);
    for (Index j = 0; j < d; ++j) {
      y[r * static_cast<size_t>(d) + static_cast<size_t>(j)] =
          (row[j] - mean) / std::sqrt(var + eps) * weight[static_cast<size_t>(j)] +
          bias[static_cast<size_t>(j)];
    }
  }
  return y;
}

double weighted_sum(const Doubles& y, const Doubles& dy) {
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * dy[i];
  return s;
}

// relu(x W1^T + b1) W2^T + b2 in doubles.
Doubles ffn_ref(const Doubles& x, Index n, Index d, const Doubles& w1, const Doubles& b1,
                Index hidden, const Doubles& w2, const Doubles& b2, Index out) {
  Doubles y(static_cast<size_t>(n * out));
  Doubles h(static_cast<size_t>(hidden));
  for (Index i = 0; i < n; ++i) {
    for (Index k = 0; k < hidden; ++k) {
      double z = b1[static_cast<size_t>(k)];
      for (Index j = 0; j < d; ++j)
        z += x[static_cast<size_t>(i * d + j)] * w1[static_cast<size_t>(k * d + j)];
      h[static_cast<size_t>(k)] = std::max(z, 0.0);
    }
    for (Index o = 0; o < out; ++o) {
      double z = b2[static_cast<size_t>(o)];
      for (Index k = 0; k < hidden; ++k)
        z += h[static_cast<size_t>(k)] * w2[static_cast<size_t>(o * hidden + k)];
      y[static_cast<size_t>(i * out + o)] = z;
    }
  }
  return y;
}

void check_gradient(const Matrix& got, const Doubles& want, const char* what) {
  ref::check_gradient(got.data(), want, {got.rows(), got.cols()}, what);
}
void check_gradient(const Vector& got, const Doubles& want, const char* what) {
  ref::check_gradient(got.data(), want, {got.size()}, what);
}

}  // namespace

TEST_CASE("LayerNorm matches nn.LayerNorm's definition, its gradients the finite differences",
          "[layer_norm]") {
  const Index n = 5, d = 7;
  // Rows far from zero (a Transformer's embeddings are scaled by sqrt(d)) with small spread.
  Matrix x = ref::random_matrix(n, d, 1, -1.0f, 1.0f);
  x.row(1).array() += 300.0f;
  const Vector weight = ref::random_vector(d, 2, 0.5f, 1.5f);
  const Vector bias = ref::random_vector(d, 3);
  const Matrix dy = ref::random_matrix(n, d, 4);

  const Doubles y = layer_norm_ref(widen(x), d, widen(weight), widen(bias));
  ref::check_close(attn::layer_norm(x, weight, bias).data(), y.data(), y.size(), ref::kSum, "y",
                   {n, d});

  const attn::LayerNormGradients g = attn::layer_norm_backward(x, weight, dy);
  const Doubles dyd = widen(dy);
  check_gradient(g.dx,
                 ref::numeric_gradient(
                     widen(x),
                     [&](const Doubles& xs) {
                       return weighted_sum(layer_norm_ref(xs, d, widen(weight), widen(bias)), dyd);
                     }),
                 "dx");
  check_gradient(g.dweight,
                 ref::numeric_gradient(widen(weight),
                                       [&](const Doubles& w) {
                                         return weighted_sum(
                                             layer_norm_ref(widen(x), d, w, widen(bias)), dyd);
                                       }),
                 "dweight");
  check_gradient(g.dbias,
                 ref::numeric_gradient(widen(bias),
                                       [&](const Doubles& b) {
                                         return weighted_sum(
                                             layer_norm_ref(widen(x), d, widen(weight), b), dyd);
                                       }),
                 "dbias");
}

TEST_CASE("LayerNorm of a constant row is its bias, with finite gradients", "[layer_norm]") {
  const Matrix x = Matrix::Constant(2, 4, 1e6f);
  const Vector weight = Vector::Constant(4, 2.0f), bias = ref::random_vector(4, 5);
  const Matrix y = attn::layer_norm(x, weight, bias);
  for (Index i = 0; i < 2; ++i) {
    for (Index j = 0; j < 4; ++j) REQUIRE(y(i, j) == bias(j));
  }
  const attn::LayerNormGradients g = attn::layer_norm_backward(x, weight, Matrix::Ones(2, 4));
  REQUIRE(g.dx.allFinite());
}

TEST_CASE("AddNorm is LayerNorm(dropout(Y) + X), and its gradients match finite differences",
          "[layer_norm]") {
  const Index n = 4, d = 6;
  const Matrix x = ref::random_matrix(n, d, 6), y = ref::random_matrix(n, d, 7);
  const Vector weight = ref::random_vector(d, 8, 0.5f, 1.5f), bias = ref::random_vector(d, 9);
  const Matrix dout = ref::random_matrix(n, d, 10);
  for (const float p : {0.0f, 0.5f}) {
    CAPTURE(p);
    const attn::DropoutOptions dropout{p, 42};
    // The factors dropout applies (0 or 1 / (1 - p)), read off a tensor of ones.
    const Doubles factors = widen(attn::dropout(Matrix::Ones(n, d), dropout));
    const auto forward = [&](const Doubles& xs, const Doubles& ys) {
      Doubles sum(xs.size());
      for (size_t i = 0; i < sum.size(); ++i) sum[i] = xs[i] + factors[i] * ys[i];
      return layer_norm_ref(sum, d, widen(weight), widen(bias));
    };
    const Doubles want = forward(widen(x), widen(y));
    ref::check_close(attn::add_norm(x, y, weight, bias, dropout).data(), want.data(), want.size(),
                     ref::kSum, "add_norm", {n, d});

    const attn::AddNormGradients g = attn::add_norm_backward(x, y, weight, dout, dropout);
    const Doubles dd = widen(dout);
    check_gradient(
        g.dx,
        ref::numeric_gradient(
            widen(x), [&](const Doubles& xs) { return weighted_sum(forward(xs, widen(y)), dd); }),
        "dx");
    check_gradient(
        g.dy,
        ref::numeric_gradient(
            widen(y), [&](const Doubles& ys) { return weighted_sum(forward(widen(x), ys), dd); }),
        "dy");
  }
}

TEST_CASE("dropout keeps or zeroes each entry, scales the kept by 1/(1-p), repeats per seed",
          "[dropout]") {
  const Matrix x = ref::random_matrix(64, 64, 11, 1.0f, 2.0f);
  const attn::DropoutOptions options{0.25f, 7};
  const Matrix a = attn::dropout(x, options), b = attn::dropout(x, options);
  REQUIRE(a == b);
  Index dropped = 0;
  for (Index i = 0; i < x.size(); ++i) {
    if (a.data()[i] == 0.0f) {
      ++dropped;
    } else {
      REQUIRE(a.data()[i] == x.data()[i] * (1.0f / 0.75f));
    }
  }
  // 4096 Bernoulli(0.25) draws: mean 1024, standard deviation 27.7; 6 sigma either way.
  REQUIRE(std::abs(static_cast<double>(dropped) - 1024.0) < 6 * 27.7);
  REQUIRE(attn::dropout(x, {0.25f, 8}) != a);
  REQUIRE(attn::dropout(x, {0.0f, 7}) == x);
  REQUIRE_THROWS_WITH(attn::dropout(x, {1.0f, 0}), Contains("dropout") && Contains("[0, 1)"));
}

TEST_CASE("PositionWiseFFN is dense2(relu(dense1(x))), and its gradients match finite differences",
          "[feed_forward]") {
  const Index n = 5, d = 6, hidden = 9, out = 4;
  const Matrix x = ref::random_matrix(n, d, 12);
  const Matrix w1 = ref::random_matrix(hidden, d, 13), w2 = ref::random_matrix(out, hidden, 14);
  const Vector b1 = ref::random_vector(hidden, 15), b2 = ref::random_vector(out, 16);
  const attn::FeedForwardWeights weights{
      attn::ConstMatrixMap(w1.data(), hidden, d), Eigen::Map<const Vector>(b1.data(), hidden),
      attn::ConstMatrixMap(w2.data(), out, hidden), Eigen::Map<const Vector>(b2.data(), out)};
  const auto forward = [&](const Doubles& xs, const Doubles& w1s, const Doubles& b1s,
                           const Doubles& w2s, const Doubles& b2s) {
    return ffn_ref(xs, n, d, w1s, b1s, hidden, w2s, b2s, out);
  };
  const Doubles X = widen(x), W1 = widen(w1), B1 = widen(b1), W2 = widen(w2), B2 = widen(b2);
  const Doubles want = forward(X, W1, B1, W2, B2);
  Matrix hidden_kept;
  ref::check_close(attn::position_wise_ffn(x, weights, &hidden_kept).data(), want.data(),
                   want.size(), ref::kSum, "y", {n, out});

  const Matrix dy = ref::random_matrix(n, out, 17);
  const Doubles D = widen(dy);
  const Matrix* const kept = &hidden_kept;
  for (const Matrix* hidden_given : {static_cast<const Matrix*>(nullptr), kept}) {
    const attn::FeedForwardGradients g =
        attn::position_wise_ffn_backward(x, weights, dy, hidden_given);
    check_gradient(
        g.dx,
        ref::numeric_gradient(
            X, [&](const Doubles& v) { return weighted_sum(forward(v, W1, B1, W2, B2), D); }),
        "dx");
    check_gradient(
        g.dense1_weight,
        ref::numeric_gradient(
            W1, [&](const Doubles& v) { return weighted_sum(forward(X, v, B1, W2, B2), D); }),
        "dense1_weight");
    check_gradient(
        g.dense1_bias,
        ref::numeric_gradient(
            B1, [&](const Doubles& v) { return weighted_sum(forward(X, W1, v, W2, B2), D); }),
        "dense1_bias");
    check_gradient(
        g.dense2_weight,
        ref::numeric_gradient(
            W2, [&](const Doubles& v) { return weighted_sum(forward(X, W1, B1, v, B2), D); }),
        "dense2_weight");
    check_gradient(
        g.dense2_bias,
        ref::numeric_gradient(
            B2, [&](const Doubles& v) { return weighted_sum(forward(X, W1, B1, W2, v), D); }),
        "dense2_bias");
  }
}

TEST_CASE("the blocks name the argument whose shape does not fit", "[layer_norm][feed_forward]") {
  const Matrix x = Matrix::Ones(3, 4);
  REQUIRE_THROWS_WITH(attn::layer_norm(x, Vector::Ones(5), Vector::Zero(4)),
                      Contains("weight") && Contains("[4]") && Contains("[5]"));
  REQUIRE_THROWS_WITH(attn::layer_norm(x, Vector::Ones(4), Vector::Zero(4), 0.0f), Contains("eps"));
  REQUIRE_THROWS_WITH(attn::add_norm(x, Matrix::Ones(3, 5), Vector::Ones(4), Vector::Zero(4)),
                      Contains("y"));
  const Matrix w1 = Matrix::Ones(6, 5), w2 = Matrix::Ones(4, 6);
  const Vector b1 = Vector::Zero(6), b2 = Vector::Zero(4);
  const attn::FeedForwardWeights weights{
      attn::ConstMatrixMap(w1.data(), 6, 5), Eigen::Map<const Vector>(b1.data(), 6),
      attn::ConstMatrixMap(w2.data(), 4, 6), Eigen::Map<const Vector>(b2.data(), 4)};
  REQUIRE_THROWS_WITH(attn::position_wise_ffn(x, weights),
                      Contains("dense1_weight") && Contains("[*, 4]") && Contains("[6, 5]"));
}
