// Backward of scaled dot-product and additive attention: against central differences of the
// double-precision forward reference on small shapes (every mask kind, nk = 1, empty and full
// valid lengths, causal with nq != nk, logits near +-1e4, dropout), and against the analytic
// double reference on shapes that cross the kernel's 64-query and 128-key tiles.

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "attn/attention.hpp"
#include "gradient_reference.hpp"

using attn::AttentionOptions;
using attn::Index;
using attn::Tensor3;

namespace {

struct Inputs {
  Tensor3 q, k, v, grad_output;
};

Inputs random_inputs(Index batch, Index nq, Index nk, Index d, Index dv, uint32_t seed) {
  return {ref::random_tensor(batch, nq, d, seed), ref::random_tensor(batch, nk, d, seed + 1),
          ref::random_tensor(batch, nk, dv, seed + 2), ref::random_tensor(batch, nq, dv, seed + 3)};
}

Tensor3 to_float(const ref::Batch& x) {
  Tensor3 t(x.batch, x.rows, x.cols);
  for (size_t i = 0; i < x.v.size(); ++i) t.data[i] = static_cast<float>(x.v[i]);
  return t;
}

double scale_of(const AttentionOptions& options, Index d) {
  return options.scale ? *options.scale : 1.0 / std::sqrt(static_cast<double>(d));
}

// The dropout factors F the forward applied: with v the identity, (P * F) v is P * F itself.
ref::Batch dropout_factors(const Inputs& in, const AttentionOptions& options) {
  const Index batch = in.q.batch, nq = in.q.rows, nk = in.k.rows;
  Tensor3 identity(batch, nk, nk);
  for (Index b = 0; b < batch; ++b)
    for (Index j = 0; j < nk; ++j) identity.at(b, j, j) = 1.0f;
  const auto dropped = attn::scaled_dot_product_attention(in.q, in.k, identity, options, true);
  ref::Batch factors(batch, nq, nk);
  for (Index b = 0; b < batch; ++b)
    for (Index i = 0; i < nq; ++i)
      for (Index j = 0; j < nk; ++j) {
        const double p = dropped.weights.at(b, i, j);
        factors(b, i, j) = p == 0.0 ? 1.0 : dropped.output.at(b, i, j) / p;
      }
  return factors;
}

// sum(O * dO) of the double forward reference, with the dropout factors F (empty: none).
double reference_loss(const ref::Batch& q, const ref::Batch& k, const ref::Batch& v,
                      const ref::Batch& grad_output, const attn::Mask& mask, double scale,
                      const ref::Batch& factors) {
  ref::Batch p = ref::masked_softmax(ref::score_dot(q, k, scale), mask);
  for (size_t t = 0; t < factors.v.size(); ++t) p.v[t] *= factors.v[t];
  return ref::dot(ref::bmm(p, v), grad_output);
}

// The library's gradients against finite differences and against the analytic reference.
void check_against_differences(const Inputs& in, const AttentionOptions& options) {
  const auto got =
      attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.grad_output, options);
  const ref::Batch q = ref::to_double(in.q), k = ref::to_double(in.k), v = ref::to_double(in.v);
  const ref::Batch grad_output = ref::to_double(in.grad_output);
  const double scale = scale_of(options, in.q.cols);
  const ref::Batch factors = options.dropout > 0.0f ? dropout_factors(in, options) : ref::Batch{};
  const attn::Mask& mask = options.mask;
  auto loss = [&](const ref::Batch& q_, const ref::Batch& k_, const ref::Batch& v_) {
    return reference_loss(q_, k_, v_, grad_output, mask, scale, factors);
  };
  const auto dq =
      ref::numeric_gradient<ref::Batch>(q, [&](const ref::Batch& x) { return loss(x, k, v); });
  const auto dk =
      ref::numeric_gradient<ref::Batch>(k, [&](const ref::Batch& x) { return loss(q, x, v); });
  const auto dv =
      ref::numeric_gradient<ref::Batch>(v, [&](const ref::Batch& x) { return loss(q, k, x); });
  ref::check_gradient(got.dq, dq, "dq");
  ref::check_gradient(got.dk, dk, "dk");
  ref::check_gradient(got.dv, dv, "dv");
  // The analytic reference, which the larger cases rely on, agrees with the differences too.
  const auto analytic = ref::attention_backward(q, k, v, grad_output, mask, scale, factors);
  ref::check_gradient(to_float(analytic.dq), dq, "analytic dq");
  ref::check_gradient(to_float(analytic.dk), dk, "analytic dk");
  ref::check_gradient(to_float(analytic.dv), dv, "analytic dv");
}

// The library's gradients against the analytic reference (shapes too large to difference).
void check_against_analytic(const Inputs& in, const AttentionOptions& options) {
  const auto got =
      attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.grad_output, options);
  const auto expected = ref::attention_backward(
      ref::to_double(in.q), ref::to_double(in.k), ref::to_double(in.v),
      ref::to_double(in.grad_output), options.mask, scale_of(options, in.q.cols));
  ref::check_gradient(got.dq, expected.dq, "dq");
  ref::check_gradient(got.dk, expected.dk, "dk");
  ref::check_gradient(got.dv, expected.dv, "dv");
}

AttentionOptions with_valid_lens(std::vector<int32_t> lens) {
  AttentionOptions options;
  options.mask.valid_lens = std::move(lens);
  return options;
}

}  // namespace

TEST_CASE("SDPA backward matches finite differences without a mask", "[backward]") {
  check_against_differences(random_inputs(2, 5, 7, 6, 3, 10), {});
  check_against_differences(random_inputs(1, 1, 1, 1, 1, 20), {});
  check_against_differences(random_inputs(2, 3, 1, 4, 2, 30), {});  // nk = 1: weights are 1
}

TEST_CASE("SDPA backward honours valid lengths, empty and full, per row and per query",
          "[backward]") {
  // Length 0: d2l's fill makes the row uniform, so v still gets its gradient and q, k none.
  check_against_differences(random_inputs(3, 4, 6, 5, 3, 40), with_valid_lens({0, 6, 2}));
  check_against_differences(random_inputs(2, 3, 5, 4, 2, 50), with_valid_lens({1, 0, 5, 5, 2, 3}));
}

TEST_CASE("SDPA backward honours boolean, additive and key-padding masks", "[backward]") {
  const Inputs in = random_inputs(2, 4, 6, 5, 3, 60);
  const std::vector<uint8_t> bits = {0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1,
                                     0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0};
  AttentionOptions bool_mask;
  bool_mask.mask.bool_mask = bits.data();  // row 1 fully masked
  bool_mask.mask.bool_mask_batch = 1;
  check_against_differences(in, bool_mask);
  const std::vector<uint8_t> batched_bits(48, 0);
  bool_mask.mask.bool_mask = batched_bits.data();
  bool_mask.mask.bool_mask_batch = 2;
  check_against_differences(in, bool_mask);

  const Tensor3 additive = ref::random_tensor(1, 4, 6, 61, -2.0f, 2.0f);
  AttentionOptions added;
  added.mask.additive = additive.data.data();
  added.mask.additive_batch = 1;
  check_against_differences(in, added);

  const std::vector<uint8_t> padding = {0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0};
  AttentionOptions padded;
  padded.mask.key_padding = padding.data();
  check_against_differences(in, padded);
}

TEST_CASE("SDPA backward is causal with more or fewer queries than keys", "[backward]") {
  AttentionOptions causal;
  causal.mask.causal = true;
  check_against_differences(random_inputs(2, 6, 4, 3, 2, 70), causal);
  check_against_differences(random_inputs(2, 3, 7, 3, 2, 80), causal);
  causal.mask.valid_lens = {2, 7};
  check_against_differences(random_inputs(2, 5, 7, 3, 2, 90), causal);
}

TEST_CASE("SDPA backward takes a custom scale", "[backward]") {
  AttentionOptions options;
  options.scale = 0.3f;
  check_against_differences(random_inputs(1, 4, 5, 6, 2, 100), options);
}

TEST_CASE("SDPA backward regenerates the forward's dropout from the seed", "[backward]") {
  AttentionOptions options;
  options.dropout = 0.3f;
  options.seed = 7;
  options.mask.valid_lens = {5, 3};
  check_against_differences(random_inputs(2, 6, 5, 4, 3, 110), options);
  // A different seed drops different weights, so the gradients move.
  const Inputs in = random_inputs(2, 6, 5, 4, 3, 110);
  const auto a =
      attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.grad_output, options);
  options.seed = 8;
  const auto b =
      attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.grad_output, options);
  CHECK(a.dv.data != b.dv.data);
}

TEST_CASE("SDPA backward is exact for logits near +-1e4", "[backward]") {
  // Integer entries keep q.k exact in float (as the forward's test of large logits does), so
  // the logits 1e4 + j/2 and -1e4 - j/2 reach the softmax unrounded.
  Inputs in = random_inputs(1, 2, 5, 4, 3, 120);
  in.q.data = {100, 1, 0, 0, -100, 0, 1, 0};
  for (Index j = 0; j < 5; ++j) {
    in.k.at(0, j, 0) = 200.0f;
    in.k.at(0, j, 1) = static_cast<float>(j);
    in.k.at(0, j, 2) = -static_cast<float>(j);
    in.k.at(0, j, 3) = 0.0f;
  }
  const auto got = attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, in.grad_output);
  for (const Tensor3* t : {&got.dq, &got.dk, &got.dv})
    for (float x : t->data) CHECK(std::isfinite(x));
  check_against_differences(in, {});
}

TEST_CASE("SDPA backward matches the analytic reference across query and key tiles", "[backward]") {
  check_against_analytic(random_inputs(1, 70, 130, 20, 17, 130), {});
  check_against_analytic(random_inputs(2, 65, 129, 64, 64, 140), {});
  // Valid lengths ending inside a later key block; rows whose tiles past it are skipped.
  check_against_analytic(random_inputs(3, 9, 300, 16, 20, 150), with_valid_lens({200, 1, 129}));
  check_against_analytic(random_inputs(3, 9, 300, 16, 20, 160), with_valid_lens({0, 300, 128}));
  // A fully masked query beside queries that see 20 and 5 keys: the block's visible keys end
  // mid-panel, and the uniform row needs the hidden keys' weights as well.
  check_against_analytic(random_inputs(1, 3, 40, 8, 4, 165), with_valid_lens({0, 20, 5}));
  AttentionOptions causal;
  causal.mask.causal = true;
  check_against_analytic(random_inputs(2, 150, 150, 32, 24, 170), causal);
  check_against_analytic(random_inputs(1, 200, 70, 8, 5, 180), causal);  // nq > nk
}

TEST_CASE("SDPA backward of empty sequences", "[backward]") {
  // No keys: the output is the empty sum, so nothing depends on q; no queries: nothing at all.
  const Inputs no_keys = random_inputs(2, 3, 0, 4, 2, 190);
  const auto a = attn::scaled_dot_product_attention_backward(no_keys.q, no_keys.k, no_keys.v,
                                                             no_keys.grad_output);
  for (float x : a.dq.data) CHECK(x == 0.0f);
  CHECK(a.dk.data.empty());
  const Inputs no_queries = random_inputs(2, 0, 3, 4, 2, 200);
  const auto b = attn::scaled_dot_product_attention_backward(no_queries.q, no_queries.k,
                                                             no_queries.v, no_queries.grad_output);
  for (float x : b.dk.data) CHECK(x == 0.0f);
  for (float x : b.dv.data) CHECK(x == 0.0f);
}

TEST_CASE("SDPA backward rejects a grad_output shaped unlike the output", "[backward]") {
  const Inputs in = random_inputs(2, 3, 4, 5, 6, 210);
  const Tensor3 wrong(2, 3, 5);
  CHECK_THROWS_WITH(attn::scaled_dot_product_attention_backward(in.q, in.k, in.v, wrong),
                    "grad_output: expected shape [2, 3, 6], got [2, 3, 5]");
}

namespace {

struct AdditiveCase {
  Index batch, nq, nk, dq, dk, dv, hidden;
};

// additive_attention_backward against differences of the reference forward, for the inputs and
// the three parameters.
void check_additive(const AdditiveCase& c, const AttentionOptions& options, uint32_t seed) {
  CAPTURE(c.batch, c.nq, c.nk, c.dq, c.dk, c.dv, c.hidden);
  const Tensor3 q = ref::random_tensor(c.batch, c.nq, c.dq, seed);
  const Tensor3 k = ref::random_tensor(c.batch, c.nk, c.dk, seed + 1);
  const Tensor3 v = ref::random_tensor(c.batch, c.nk, c.dv, seed + 2);
  const Tensor3 grad_output = ref::random_tensor(c.batch, c.nq, c.dv, seed + 3);
  attn::ScoreParams params;
  params.Wq = ref::random_matrix(c.hidden, c.dq, seed + 4);
  params.Wk = ref::random_matrix(c.hidden, c.dk, seed + 5);
  params.wv = ref::random_vector(c.hidden, seed + 6);
  const auto got = attn::additive_attention_backward(q, k, v, params, grad_output, options);

  using ref::Batch;
  using ref::Mat;
  const Batch qd = ref::to_double(q), kd = ref::to_double(k), vd = ref::to_double(v);
  const Batch grad = ref::to_double(grad_output);
  const Mat wq = ref::to_double(params.Wq), wk = ref::to_double(params.Wk);
  const std::vector<double> wv = ref::to_double(params.wv);
  auto loss = [&](const Batch& q_, const Batch& k_, const Batch& v_, const Mat& wq_, const Mat& wk_,
                  const std::vector<double>& wv_) {
    return ref::dot(ref::additive_attention(q_, k_, v_, wq_, wk_, wv_, options.mask).output, grad);
  };
  ref::check_gradient(
      got.dq,
      ref::numeric_gradient<Batch>(qd, [&](const Batch& x) { return loss(x, kd, vd, wq, wk, wv); }),
      "dq");
  ref::check_gradient(
      got.dk,
      ref::numeric_gradient<Batch>(kd, [&](const Batch& x) { return loss(qd, x, vd, wq, wk, wv); }),
      "dk");
  ref::check_gradient(
      got.dv,
      ref::numeric_gradient<Batch>(vd, [&](const Batch& x) { return loss(qd, kd, x, wq, wk, wv); }),
      "dv");
  const auto dwq =
      ref::numeric_gradient<Mat>(wq, [&](const Mat& x) { return loss(qd, kd, vd, x, wk, wv); });
  const auto dwk =
      ref::numeric_gradient<Mat>(wk, [&](const Mat& x) { return loss(qd, kd, vd, wq, x, wv); });
  const auto dwv = ref::numeric_gradient(
      wv, [&](const std::vector<double>& x) { return loss(qd, kd, vd, wq, wk, x); });
  ref::check_gradient(got.dparams.Wq.data(), dwq.v, {c.hidden, c.dq}, "dWq");
  ref::check_gradient(got.dparams.Wk.data(), dwk.v, {c.hidden, c.dk}, "dWk");
  ref::check_gradient(got.dparams.wv.data(), dwv, {c.hidden}, "dwv");
}

}  // namespace

TEST_CASE("Additive attention backward matches finite differences", "[backward][additive]") {
  check_additive({2, 3, 5, 4, 6, 3, 7}, {}, 300);  // dq != dk
  check_additive({1, 2, 1, 3, 3, 2, 1}, {}, 310);  // nk = 1, h = 1
  check_additive({1, 17, 19, 5, 4, 18, 8}, {}, 320);
}

TEST_CASE("Additive attention backward honours valid lengths and dropout", "[backward][additive]") {
  check_additive({3, 2, 4, 3, 2, 2, 5}, with_valid_lens({0, 4, 2}), 330);
  check_additive({2, 3, 4, 3, 2, 2, 5}, with_valid_lens({1, 0, 4, 4, 2, 3}), 340);
}
