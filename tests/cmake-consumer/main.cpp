// Uses the public API as a downstream project would and checks two results against closed forms
// computed here in double: a softmax row and a one-query scaled dot-product attention.
#include <attn/attn.hpp>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

int failures = 0;

void expect_close(const char* what, double got, double expected) {
  if (std::fabs(got - expected) > 1e-6 * std::fmax(1.0, std::fabs(expected))) {
    std::printf("%s: got %.9g, expected %.9g\n", what, got, expected);
    ++failures;
  }
}

}  // namespace

int main() {
  // softmax([1, 2, 3]) = e^i / (e + e^2 + e^3)
  attn::Matrix logits(1, 3);
  logits << 1.0f, 2.0f, 3.0f;
  const attn::Matrix p = attn::softmax(logits);
  const double total = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  for (int j = 0; j < 3; ++j) expect_close("softmax", p(0, j), std::exp(j + 1.0) / total);

  // q = [1, 0], keys e1 and e2, values [1, 2] and [3, 4], scale 1/sqrt(2): the scores are
  // [1/sqrt(2), 0], so the output is w0 [1, 2] + w1 [3, 4] with w = softmax(scores).
  attn::Tensor3 q(1, 1, 2), k(1, 2, 2), v(1, 2, 2);
  q.data = {1, 0};
  k.data = {1, 0, 0, 1};
  v.data = {1, 2, 3, 4};
  const attn::AttentionResult r = attn::scaled_dot_product_attention(q, k, v, {}, true);
  const double w0 = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
  expect_close("weights[0]", r.weights.at(0, 0, 0), w0);
  expect_close("weights[1]", r.weights.at(0, 0, 1), 1.0 - w0);
  expect_close("output[0]", r.output.at(0, 0, 0), w0 * 1 + (1 - w0) * 3);
  expect_close("output[1]", r.output.at(0, 0, 1), w0 * 2 + (1 - w0) * 4);

  // Errors cross as std::invalid_argument naming the argument.
  try {
    attn::scaled_dot_product_attention(q, v, attn::Tensor3(1, 3, 2));
    std::printf("mismatched v: no error\n");
    ++failures;
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).rfind("v:", 0) != 0) {
      std::printf("mismatched v: message '%s' does not name v\n", e.what());
      ++failures;
    }
  }
  std::printf("cmake consumer: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
