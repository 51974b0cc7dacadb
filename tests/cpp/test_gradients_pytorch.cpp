// The backward passes against PyTorch autograd (issue 10): the fixtures in
// tests/fixtures/gradients, written by scripts/fixtures/gradients.py in float64 from float32
// inputs. Tolerance, the rule: |got - want| <= 2e-4 * max|want| per tensor. The forward
// outputs of the same fixtures are checked by test_fixtures_forward.cpp.

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/multi_head_attention.hpp"
#include "fixtures.hpp"

using attn::Tensor3;

namespace {

void check_matrix(const attn::Matrix& got, const fixtures::json& want,
                  const fixtures::json& expected, const std::string& what) {
  fixtures::check(got.data(), {got.rows(), got.cols()}, want, expected, what);
}

Tensor3 sum(const Tensor3& a, const Tensor3& b, const Tensor3& c) {
  REQUIRE(a.data.size() == b.data.size());
  REQUIRE(a.data.size() == c.data.size());
  Tensor3 out(a.batch, a.rows, a.cols);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = a.data[i] + b.data[i] + c.data[i];
  return out;
}

}  // namespace

TEST_CASE("scaled dot-product attention backward matches PyTorch autograd", "[gradients]") {
  for (const auto& c : fixtures::load("gradients/sdpa.json")) {
    DYNAMIC_SECTION(c.name) {
      const fixtures::AttentionCase a(c);
      const auto grads =
          attn::scaled_dot_product_attention_backward(a.q, a.k, a.v, a.grad_output, a.options);
      fixtures::check(grads.dq, c.expected["dq"], c.expected, "dq");
      fixtures::check(grads.dk, c.expected["dk"], c.expected, "dk");
      fixtures::check(grads.dv, c.expected["dv"], c.expected, "dv");
    }
  }
}

TEST_CASE("additive attention backward matches PyTorch autograd", "[gradients]") {
  for (const auto& c : fixtures::load("gradients/additive.json")) {
    DYNAMIC_SECTION(c.name) {
      const fixtures::AttentionCase a(c);
      const auto grads =
          attn::additive_attention_backward(a.q, a.k, a.v, a.params, a.grad_output, a.options);
      fixtures::check(grads.dq, c.expected["dq"], c.expected, "dq");
      fixtures::check(grads.dk, c.expected["dk"], c.expected, "dk");
      fixtures::check(grads.dv, c.expected["dv"], c.expected, "dv");
      check_matrix(grads.dparams.Wq, c.expected["dWq"], c.expected, "dWq");
      check_matrix(grads.dparams.Wk, c.expected["dWk"], c.expected, "dWk");
      const attn::Vector& dwv = grads.dparams.wv;
      fixtures::check(dwv.data(), {dwv.size()}, c.expected["dwv"], c.expected, "dwv");
    }
  }
}

TEST_CASE("multi-head attention backward matches PyTorch autograd", "[gradients]") {
  for (const auto& c : fixtures::load("gradients/mha.json")) {
    DYNAMIC_SECTION(c.name) {
      const fixtures::MultiHeadCase m(c);
      // Self-attention passes one tensor three times, as a caller does.
      const bool self = c.expected.contains("dSelf");
      const auto grads = m.mha.backward(m.query, self ? m.query : m.key, self ? m.query : m.value,
                                        m.grad_output, m.options);
      fixtures::check(grads.d_query, c.expected["dQuery"], c.expected, "dQuery");
      fixtures::check(grads.d_key, c.expected["dKey"], c.expected, "dKey");
      fixtures::check(grads.d_value, c.expected["dValue"], c.expected, "dValue");
      if (self) {
        // The one tensor's gradient is the sum of the three.
        fixtures::check(sum(grads.d_query, grads.d_key, grads.d_value), c.expected["dSelf"],
                        c.expected, "dQuery + dKey + dValue");
      }
      // Exactly the state-dict names, each with PyTorch's gradient.
      const auto& want = c.expected["dParameters"];
      std::vector<std::string> names, want_names;
      for (const auto& p : grads.d_parameters) names.push_back(p.name);
      for (const auto& item : want.items()) want_names.push_back(item.key());
      std::sort(names.begin(), names.end());
      std::sort(want_names.begin(), want_names.end());
      CHECK(names == want_names);
      for (const auto& p : grads.d_parameters) {
        if (!want.contains(p.name)) continue;
        INFO(p.name);
        REQUIRE(p.data.size() == want[p.name]["data"].size());
        fixtures::check(p.data.data(), p.shape, want[p.name], c.expected, "d " + p.name);
      }
    }
  }
}
