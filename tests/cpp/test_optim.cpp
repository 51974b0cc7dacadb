// Adam and gradient-norm clipping against double-precision transcriptions of PyTorch's
// algorithms (torch.optim.Adam, torch.nn.utils.clip_grad_norm_), plus closed forms.

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "attn/optim.hpp"
#include "reference.hpp"

using attn::Index;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("Adam's first step moves every parameter by lr against its gradient's sign", "[optim]") {
  // With m = (1 - b1) g and v = (1 - b2) g^2, bias correction gives m^ = g and v^ = g^2, so the
  // step is lr * g / (|g| + eps): lr * sign(g) up to eps.
  std::vector<float> p{1.0f, -2.0f, 0.5f}, g{0.3f, -4.0f, 1e-3f};
  attn::Adam adam({3});
  adam.step({{p.data(), 3}}, {{g.data(), 3}}, 0.01f);
  CHECK_THAT(p[0], WithinAbs(1.0 - 0.01, 1e-6));
  CHECK_THAT(p[1], WithinAbs(-2.0 + 0.01, 1e-6));
  CHECK_THAT(p[2], WithinAbs(0.5 - 0.01 * 1e-3 / (1e-3 + 1e-8), 1e-6));
  CHECK(adam.steps() == 1);
}

TEST_CASE("Adam carries its moments across steps as torch.optim.Adam does", "[optim]") {
  const std::vector<Index> sizes{4, 2};
  std::vector<std::vector<float>> params{ref::uniform(4, 1), ref::uniform(2, 2)};
  std::vector<std::vector<double>> p(2), m(2), v(2);
  for (size_t t = 0; t < 2; ++t) {
    p[t].assign(params[t].begin(), params[t].end());
    m[t].assign(params[t].size(), 0.0);
    v[t].assign(params[t].size(), 0.0);
  }
  const attn::AdamOptions options{0.8f, 0.95f, 1e-6f};
  attn::Adam adam(sizes, options);
  const double lrs[] = {0.1, 0.05, 0.2, 0.1};
  for (int step = 1; step <= 4; ++step) {
    std::vector<std::vector<float>> grads{ref::uniform(4, 10 + step, -2.0f, 2.0f),
                                          ref::uniform(2, 20 + step, -2.0f, 2.0f)};
    adam.step({{params[0].data(), 4}, {params[1].data(), 2}},
              {{grads[0].data(), 4}, {grads[1].data(), 2}}, static_cast<float>(lrs[step - 1]));
    for (size_t t = 0; t < 2; ++t) {
      for (size_t i = 0; i < p[t].size(); ++i) {
        const double g = grads[t][i];
        m[t][i] = 0.8 * m[t][i] + 0.2 * g;
        v[t][i] = 0.95 * v[t][i] + 0.05 * g * g;
        const double m_hat = m[t][i] / (1.0 - std::pow(0.8, step));
        const double v_hat = v[t][i] / (1.0 - std::pow(0.95, step));
        p[t][i] -= lrs[step - 1] * m_hat / (std::sqrt(v_hat) + 1e-6);
        CAPTURE(step, t, i);
        CHECK_THAT(params[t][i], WithinAbs(p[t][i], 2e-6));
      }
    }
  }
  adam.reset();
  CHECK(adam.steps() == 0);
}

TEST_CASE("Adam checks its arguments", "[optim]") {
  std::vector<float> p(3), g(3);
  attn::Adam adam({3});
  CHECK_THROWS_WITH(adam.step({{p.data(), 2}}, {{g.data(), 3}}, 0.1f),
                    "parameters[0]: expected shape [3], got [2]");
  CHECK_THROWS_WITH(adam.step({{p.data(), 3}}, {}, 0.1f), "gradients: expected shape [1], got [0]");
  CHECK_THROWS_WITH(adam.step({{p.data(), 3}}, {{g.data(), 3}}, 0.0f),
                    "lr: expected a finite number > 0, got 0");
}

TEST_CASE("clip_grad_norm scales every gradient by max_norm / (global norm + 1e-6)", "[optim]") {
  std::vector<float> a{3.0f, 0.0f}, b{0.0f, 4.0f, 0.0f};  // global norm 5
  const float norm = attn::clip_grad_norm({{a.data(), 2}, {b.data(), 3}}, 2.0f);
  CHECK_THAT(norm, WithinRel(5.0, 1e-7));
  const double factor = 2.0 / (5.0 + 1e-6);
  CHECK_THAT(a[0], WithinRel(3.0 * factor, 1e-6));
  CHECK_THAT(b[1], WithinRel(4.0 * factor, 1e-6));

  // Below the threshold nothing changes.
  std::vector<float> c{0.3f, -0.4f};
  CHECK_THAT(attn::clip_grad_norm({{c.data(), 2}}, 1.0f), WithinRel(0.5, 1e-6));
  CHECK(c[0] == 0.3f);
  CHECK(c[1] == -0.4f);
  CHECK_THROWS_WITH(attn::clip_grad_norm({{c.data(), 2}}, -1.0f),
                    "max_norm: expected a finite number > 0, got -1");
}
