// The multi-layer GRU against a double-precision GRU written from PyTorch's equations
// (recurrent_reference.hpp): outputs, final states, and every gradient of backpropagation
// through time against central differences of that reference.

#include <catch2/catch.hpp>
#include <vector>

#include "attn/gru.hpp"
#include "gradient_reference.hpp"
#include "recurrent_reference.hpp"

using attn::Index;

namespace {

attn::Matrix to_float(const ref::Mat& m) {
  attn::Matrix out(m.rows, m.cols);
  for (size_t i = 0; i < m.v.size(); ++i) out.data()[i] = static_cast<float>(m.v[i]);
  return out;
}

attn::Vector to_float(const std::vector<double>& v) {
  attn::Vector out(static_cast<Index>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) out[static_cast<Index>(i)] = static_cast<float>(v[i]);
  return out;
}

// The float copies of the reference's layers, and views of them for the library.
struct FloatLayers {
  explicit FloatLayers(const std::vector<ref::GruLayer>& layers) {
    for (const auto& l : layers) {
      w_ih.push_back(to_float(l.w_ih));
      w_hh.push_back(to_float(l.w_hh));
      b_ih.push_back(to_float(l.b_ih));
      b_hh.push_back(to_float(l.b_hh));
    }
  }
  std::vector<attn::GruLayerWeights> views() const {
    std::vector<attn::GruLayerWeights> out;
    for (size_t l = 0; l < w_ih.size(); ++l) {
      out.push_back(attn::gru_layer_weights(w_ih[l], w_hh[l], b_ih[l], b_hh[l]));
    }
    return out;
  }
  std::vector<attn::Matrix> w_ih, w_hh;
  std::vector<attn::Vector> b_ih, b_hh;
};

struct Setup {
  Index T, B, in, H, L;
  double dropout;
  bool training;
};

void check_gru(const Setup& s) {
  CAPTURE(s.T, s.B, s.in, s.H, s.L, s.dropout, s.training);
  const uint64_t seed = 11;
  std::vector<ref::GruLayer> layers;
  for (Index l = 0; l < s.L; ++l) {
    layers.push_back(ref::random_gru_layer(l == 0 ? s.in : s.H, s.H, 100 + 10 * l));
  }
  const attn::Tensor3 x = ref::random_tensor(s.T, s.B, s.in, 1);
  const attn::Tensor3 h0 = ref::random_tensor(s.L, s.B, s.H, 2, -0.8f, 0.8f);
  const attn::Tensor3 d_output = ref::random_tensor(s.T, s.B, s.H, 3);
  const attn::Tensor3 d_h_n = ref::random_tensor(s.L, s.B, s.H, 4);

  const FloatLayers floats(layers);
  attn::GruForward gru(floats.views(), x.view(), h0.view(),
                       {static_cast<float>(s.dropout), s.training, seed});
  const ref::Batch xd = ref::to_double(x), h0d = ref::to_double(h0);
  const ref::GruResult want = ref::gru(layers, xd, h0d, s.dropout, seed, s.training);
  ref::check_close(gru.output(), want.output, {1e-5, 1e-6}, "output");
  ref::check_close(gru.h_n(), want.h_n, {1e-5, 1e-6}, "h_n");

  const attn::GruGradients got = gru.backward(d_output.view(), d_h_n.view());
  const ref::Batch dO = ref::to_double(d_output), dH = ref::to_double(d_h_n);
  auto loss = [&](const std::vector<ref::GruLayer>& ls, const ref::Batch& xx,
                  const ref::Batch& hh) {
    const ref::GruResult r = ref::gru(ls, xx, hh, s.dropout, seed, s.training);
    return ref::dot(r.output, dO) + ref::dot(r.h_n, dH);
  };
  ref::check_gradient(got.dx,
                      ref::numeric_gradient<ref::Batch>(
                          xd, [&](const ref::Batch& v) { return loss(layers, v, h0d); }),
                      "dx");
  ref::check_gradient(got.dh0,
                      ref::numeric_gradient<ref::Batch>(
                          h0d, [&](const ref::Batch& v) { return loss(layers, xd, v); }),
                      "dh0");
  for (Index l = 0; l < s.L; ++l) {
    auto& layer = layers[static_cast<size_t>(l)];
    const auto& g = got.layers[static_cast<size_t>(l)];
    const std::string suffix = "_l" + std::to_string(l);
    auto numeric = [&](std::vector<double>& values) {
      return ref::numeric_gradient(values, [&](const std::vector<double>& v) {
        const std::vector<double> saved = values;
        values = v;
        const double out = loss(layers, xd, h0d);
        values = saved;
        return out;
      });
    };
    ref::check_gradient(g.dweight_ih.data(), numeric(layer.w_ih.v),
                        {g.dweight_ih.rows(), g.dweight_ih.cols()}, "dweight_ih" + suffix);
    ref::check_gradient(g.dweight_hh.data(), numeric(layer.w_hh.v),
                        {g.dweight_hh.rows(), g.dweight_hh.cols()}, "dweight_hh" + suffix);
    ref::check_gradient(g.dbias_ih.data(), numeric(layer.b_ih), {g.dbias_ih.size()},
                        "dbias_ih" + suffix);
    ref::check_gradient(g.dbias_hh.data(), numeric(layer.b_hh), {g.dbias_hh.size()},
                        "dbias_hh" + suffix);
  }
}

}  // namespace

TEST_CASE(
    "a one-layer GRU matches PyTorch's equations, and its BPTT gradients match finite "
    "differences",
    "[gru]") {
  check_gru({5, 3, 4, 6, 1, 0.0, false});
}

TEST_CASE(
    "a two-layer GRU matches PyTorch's equations, and its BPTT gradients match finite "
    "differences",
    "[gru]") {
  check_gru({4, 3, 5, 4, 2, 0.0, false});
  // Hidden sizes past one 16-column GEMM panel.
  check_gru({3, 2, 3, 19, 2, 0.0, false});
}

TEST_CASE("GRU dropout between layers follows the documented seeded mask, in training only",
          "[gru]") {
  check_gru({4, 3, 5, 4, 3, 0.25, true});
  // Not training: the dropout probability changes nothing (the reference ignores it).
  check_gru({4, 3, 5, 4, 2, 0.25, false});
}

TEST_CASE("GRU arguments are checked, naming the argument", "[gru]") {
  const attn::Matrix w_ih = attn::Matrix::Zero(12, 3), w_hh = attn::Matrix::Zero(12, 4);
  const attn::Vector b = attn::Vector::Zero(12), short_bias = attn::Vector::Zero(11);
  const attn::Tensor3 x(2, 1, 3), wrong_x(2, 1, 5), h0(2, 1, 4);
  const auto layer = attn::gru_layer_weights(w_ih, w_hh, b, b);
  CHECK_THROWS_WITH(attn::GruForward({layer}, wrong_x.view(), {}),
                    "weight_ih_l0: expected shape [12, 5], got [12, 3]");
  CHECK_THROWS_WITH(
      attn::GruForward({attn::gru_layer_weights(w_ih, w_hh, short_bias, b)}, x.view(), {}),
      "bias_ih_l0: expected shape [12], got [11]");
  CHECK_THROWS_WITH(attn::GruForward({layer}, x.view(), h0.view()),
                    "h0: expected shape [1, 1, 4], got [2, 1, 4]");
  CHECK_THROWS_WITH(attn::GruForward({layer}, x.view(), {}, {1.0f, true, 0}),
                    "dropout: expected a probability in [0, 1), got 1");
}
