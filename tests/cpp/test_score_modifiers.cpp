// Grouped-query heads and the score modifiers of current models (sliding window, softcap, ALiBi,
// sinks, the log-sum-exp) in scaled dot-product attention and its backward, against a
// double-precision reference written from the formulas of attn/attention.hpp, and every gradient
// (the sinks' included) against central finite differences of that reference.

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "gradient_reference.hpp"
#include "reference.hpp"
#include "score_reference.hpp"

using attn::AttentionOptions;
using attn::Index;
using attn::Tensor3;
using ref::Reference;
using ref::reference;
using ref::Shape;

namespace {

std::vector<double> widen(const Tensor3& t) { return {t.data.begin(), t.data.end()}; }

struct Inputs {
  Tensor3 q, k, v, grad;
};

Inputs random_inputs(const Shape& s, uint32_t seed, float range = 1.0f) {
  return {ref::random_tensor(s.batch * s.heads, s.nq, s.d, seed, -range, range),
          ref::random_tensor(s.batch * s.kv_heads, s.nk, s.d, seed + 1, -range, range),
          ref::random_tensor(s.batch * s.kv_heads, s.nk, s.dv, seed + 2),
          ref::random_tensor(s.batch * s.heads, s.nq, s.dv, seed + 3)};
}

AttentionOptions with_heads(const Shape& s, AttentionOptions o) {
  o.heads = s.heads;
  o.kv_heads = s.kv_heads;
  return o;
}

void check_forward(const Shape& s, const AttentionOptions& options, uint32_t seed,
                   float range = 1.0f) {
  CAPTURE(s.batch, s.heads, s.kv_heads, s.nq, s.nk, s.d, s.dv, seed);
  const Inputs in = random_inputs(s, seed, range);
  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, options, true, true);
  const Reference want = reference(s, widen(in.q), widen(in.k), widen(in.v), options);
  ref::check_close(got.output, want.output, ref::kSum, "output");
  ref::check_close(got.weights, want.weights, ref::kSum, "weights");
  ref::check_close(got.lse.data(), want.lse.data(), want.lse.size(), ref::kSum, "lse");
}

// Every gradient of sum(output * grad) against central differences of the reference.
void check_backward(const Shape& s, const AttentionOptions& options, uint32_t seed) {
  CAPTURE(s.batch, s.heads, s.kv_heads, s.nq, s.nk, s.d, s.dv, seed);
  const Inputs in = random_inputs(s, seed);
  const auto got = attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.grad, options);
  const std::vector<double> q = widen(in.q), k = widen(in.k), v = widen(in.v);
  const auto loss = [&](const std::vector<double>& q_, const std::vector<double>& k_,
                        const std::vector<double>& v_, const AttentionOptions& o) {
    const Reference r = reference(s, q_, k_, v_, o);
    double sum = 0.0;
    for (size_t t = 0; t < r.output.v.size(); ++t) sum += r.output.v[t] * in.grad.data[t];
    return sum;
  };
  ref::check_gradient(
      got.dq.data.data(),
      ref::numeric_gradient(q, [&](const auto& x) { return loss(x, k, v, options); }),
      {in.q.batch, in.q.rows, in.q.cols}, "dq");
  ref::check_gradient(
      got.dk.data.data(),
      ref::numeric_gradient(k, [&](const auto& x) { return loss(q, x, v, options); }),
      {in.k.batch, in.k.rows, in.k.cols}, "dk");
  ref::check_gradient(
      got.dv.data.data(),
      ref::numeric_gradient(v, [&](const auto& x) { return loss(q, k, x, options); }),
      {in.v.batch, in.v.rows, in.v.cols}, "dv");
  if (options.sinks.empty()) {
    REQUIRE(got.dsinks.empty());
    return;
  }
  const std::vector<double> sinks(options.sinks.begin(), options.sinks.end());
  // The reference keeps the sinks as floats: a step of 1e-3 (float's 1e-7 relative resolution
  // at these magnitudes) leaves a difference error of O(1e-4 * step^2) and rounding of O(1e-7).
  const auto dsinks = ref::numeric_gradient(
      sinks,
      [&](const std::vector<double>& x) {
        AttentionOptions o = options;
        o.sinks.assign(x.begin(), x.end());
        return loss(q, k, v, o);
      },
      1e-3);
  ref::check_gradient(got.dsinks.data(), dsinks, {s.heads}, "dsinks");
}

}  // namespace

TEST_CASE("Grouped K/V heads equal attention over K and V repeated per query head", "[gqa]") {
  for (const Shape& s : {Shape{2, 4, 2, 7, 9, 4, 3}, Shape{1, 8, 1, 5, 130, 8, 8},
                         Shape{2, 3, 3, 6, 6, 4, 5}, Shape{1, 8, 8, 1, 40, 16, 4}}) {
    check_forward(s, with_heads(s, {}), 10);
    AttentionOptions causal;
    causal.mask.causal = true;
    check_forward(s, with_heads(s, causal), 11);
  }
}

TEST_CASE("Sliding windows hide the keys outside i - left .. i + right", "[window]") {
  const Shape s{1, 2, 1, 300, 300, 8, 4};
  for (auto [left, right] : {std::pair<Index, Index>{5, 0}, {0, 0}, {3, 2}, {200, -1}, {-1, 7}}) {
    CAPTURE(left, right);
    AttentionOptions o;
    o.mask.window_left = left;
    o.mask.window_right = right;
    check_forward(s, with_heads(s, o), 20);
    o.mask.causal = true;
    check_forward(s, with_heads(s, o), 21);
  }
  AttentionOptions lens;  // with valid lengths, an empty row included (uniform under d2l's fill)
  lens.mask.window_left = 2;
  lens.mask.window_right = 1;
  lens.mask.valid_lens = {150, 0};
  const Shape two{2, 1, 1, 160, 170, 4, 4};
  check_forward(two, lens, 22);
}

TEST_CASE("Softcap, ALiBi and sinks follow their formulas, alone and together", "[modifiers]") {
  const Shape s{2, 4, 2, 37, 141, 8, 6};
  AttentionOptions o = with_heads(s, {});
  o.softcap = 2.5f;
  check_forward(s, o, 30);
  o.softcap.reset();
  o.alibi_slopes = {0.5f, 0.25f, 0.125f, 0.0625f};
  check_forward(s, o, 31);
  o.alibi_slopes.clear();
  o.sinks = {0.0f, 1.5f, -2.0f, 40.0f};  // the last takes nearly all weight from its rows
  check_forward(s, o, 32);
  o.softcap = 30.0f;
  o.alibi_slopes = {0.5f, 0.25f, 0.125f, 0.0625f};
  o.mask.causal = true;
  o.mask.window_left = 16;
  check_forward(s, o, 33);
  // Large logits: scores of ~1e3 under a softcap of 30 stay finite and exact.
  AttentionOptions large = with_heads(s, {});
  large.softcap = 30.0f;
  check_forward(s, large, 34, 40.0f);
}

TEST_CASE("A sink takes the whole weight of a row with no visible key", "[modifiers]") {
  const Shape s{2, 2, 1, 4, 6, 4, 3};
  AttentionOptions o = with_heads(s, {});
  o.sinks = {0.5f, -0.5f};
  o.mask.valid_lens = {0, 6};
  o.mask.fill = -std::numeric_limits<float>::infinity();
  check_forward(s, o, 40);  // batch row 0: output 0, lse = the sink, weights 0 (not NaN)
  const Inputs in = random_inputs(s, 40);
  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, o, false, true);
  for (Index i = 0; i < s.nq; ++i) REQUIRE(got.lse[static_cast<size_t>(i)] == 0.5f);
  // Without keys at all the lse is the sink too, and -inf without one.
  const Tensor3 q(2 * 2, 3, 4), k(2, 0, 4), v(2, 0, 3);
  o.mask.valid_lens.clear();
  const auto empty = attn::scaled_dot_product_attention(q, k, v, o, false, true);
  REQUIRE(empty.lse[0] == 0.5f);
  REQUIRE(empty.lse[3] == -0.5f);
  o.sinks.clear();
  REQUIRE(std::isinf(attn::scaled_dot_product_attention(q, k, v, o, false, true).lse[0]));
}

TEST_CASE("Gradients of grouped heads and every modifier against finite differences",
          "[gqa][modifiers][backward]") {
  const Shape s{1, 4, 2, 6, 9, 4, 3};
  AttentionOptions o = with_heads(s, {});
  check_backward(s, o, 50);
  o.softcap = 1.5f;
  check_backward(s, o, 51);
  o.alibi_slopes = {0.5f, 0.25f, 0.125f, 0.0625f};
  o.sinks = {0.0f, 1.0f, -1.0f, 2.0f};
  check_backward(s, o, 52);
  o.mask.causal = true;
  o.mask.window_left = 2;
  check_backward(s, o, 53);
  const Shape mqa{2, 3, 1, 5, 4, 4, 2};  // one K/V head, a window with a right side
  AttentionOptions w = with_heads(mqa, {});
  w.mask.window_left = 1;
  w.mask.window_right = 1;
  w.sinks = {0.3f, -0.2f, 0.1f};
  check_backward(mqa, w, 54);
}

TEST_CASE("Heads and modifiers that do not fit are named", "[errors]") {
  const Tensor3 q(6, 4, 8);
  Tensor3 k(4, 4, 8), v(4, 4, 8);
  AttentionOptions o;
  o.heads = 3;
  o.kv_heads = 2;
  REQUIRE_THROWS_WITH(attn::scaled_dot_product_attention(q, k, v, o), Catch::Contains("kv_heads"));
  o.kv_heads = 3;
  REQUIRE_THROWS_WITH(attn::scaled_dot_product_attention(q, k, v, o), Catch::StartsWith("k:"));
  o.heads = o.kv_heads = 3;
  k = v = Tensor3(6, 4, 8);
  o.softcap = 0.0f;
  REQUIRE_THROWS_WITH(attn::scaled_dot_product_attention(q, k, v, o), Catch::StartsWith("softcap"));
  o.softcap.reset();
  o.alibi_slopes = {1.0f, 1.0f};
  REQUIRE_THROWS_WITH(attn::scaled_dot_product_attention(q, k, v, o),
                      Catch::StartsWith("alibi_slopes"));
  o.alibi_slopes.clear();
  o.sinks = {1.0f, std::nanf(""), 1.0f};
  REQUIRE_THROWS_WITH(attn::scaled_dot_product_attention(q, k, v, o), Catch::StartsWith("sinks"));
  o.sinks.clear();
  o.mask.window_left = -2;
  REQUIRE_THROWS_WITH(attn::scaled_dot_product_attention(q, k, v, o), Catch::StartsWith("window"));
  // Additive attention takes no heads or modifiers.
  AttentionOptions additive;
  additive.softcap = 1.0f;
  attn::ScoreParams params;
  params.Wq = attn::Matrix::Zero(2, 8);
  params.Wk = attn::Matrix::Zero(2, 8);
  params.wv = attn::Vector::Zero(2);
  REQUIRE_THROWS_WITH(attn::additive_attention(q, q, q, params, additive),
                      Catch::StartsWith("softcap"));
}
