// Scaled dot-product attention and additive (Bahdanau) attention.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/attention.hpp"
#include "reference.hpp"

using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Index;
using attn::Tensor3;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Inputs {
  Tensor3 q, k, v;
  ref::Batch qd, kd, vd;
};

// q [B, nq, d], k [B, nk, d], v [B, nk, dv] with distinct seeds.
Inputs make_inputs(Index B, Index nq, Index nk, Index d, Index dv, uint32_t seed) {
  Inputs in;
  in.q = ref::random_tensor(B, nq, d, seed);
  in.k = ref::random_tensor(B, nk, d, seed + 1);
  in.v = ref::random_tensor(B, nk, dv, seed + 2);
  in.qd = ref::to_double(in.q);
  in.kd = ref::to_double(in.k);
  in.vd = ref::to_double(in.v);
  return in;
}

// Runs SDPA with weights and compares output and weights with the reference.
void check_sdpa(const Inputs& in, const AttentionOptions& options) {
  const AttentionResult got = attn::scaled_dot_product_attention(in.q, in.k, in.v, options, true);
  std::optional<double> scale;
  if (options.scale) scale = *options.scale;
  const ref::Attention expected =
      ref::scaled_dot_product_attention(in.qd, in.kd, in.vd, options.mask, scale);
  ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
  ref::check_close(got.output, expected.output, ref::kSum, "output");
}

}  // namespace

TEST_CASE("Scaled dot-product attention matches the reference without a mask", "[sdpa]") {
  // nq != nk and d != dv, none of them a multiple of 4.
  check_sdpa(make_inputs(2, 3, 5, 7, 6, 1), {});
}

TEST_CASE("Scaled dot-product attention matches the reference on a larger case", "[sdpa]") {
  check_sdpa(make_inputs(3, 17, 33, 64, 19, 4), {});
}

TEST_CASE("Scaled dot-product attention honours valid lengths per batch row and per query",
          "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 5, 4, 3, 7);
  AttentionOptions per_row;
  per_row.mask.valid_lens = {2, 4};
  check_sdpa(in, per_row);
  AttentionOptions per_query;
  per_query.mask.valid_lens = {1, 5, 3, 2, 2, 4};
  check_sdpa(in, per_query);

  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, per_row, true);
  for (Index i = 0; i < 3; ++i) {
    for (Index j = 2; j < 5; ++j) CHECK(got.weights.at(0, i, j) == 0.0f);
    CHECK(got.weights.at(1, i, 4) == 0.0f);
  }
}

TEST_CASE("Scaled dot-product attention honours a boolean mask broadcast over the batch",
          "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 5, 2, 10);
  const std::vector<uint8_t> hidden = {1, 0, 0, 1,  //
                                       0, 1, 1, 0,  //
                                       0, 0, 0, 1};
  AttentionOptions options;
  options.mask.bool_mask = hidden.data();
  options.mask.bool_mask_batch = 1;
  check_sdpa(in, options);
}

TEST_CASE("Scaled dot-product attention honours a boolean mask per batch row", "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 5, 2, 13);
  const std::vector<uint8_t> hidden = {1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1,  //
                                       0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1};
  AttentionOptions options;
  options.mask.bool_mask = hidden.data();
  options.mask.bool_mask_batch = 2;
  check_sdpa(in, options);
}

TEST_CASE("Scaled dot-product attention adds an additive mask to the scores", "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 5, 2, 16);
  std::vector<float> bias = ref::uniform(3 * 4, 17, -2.0f, 2.0f);
  bias[2] = -kInf;
  AttentionOptions options;
  options.mask.additive = bias.data();
  options.mask.additive_batch = 1;
  check_sdpa(in, options);

  const std::vector<float> batched = ref::uniform(2 * 3 * 4, 18, -2.0f, 2.0f);
  options.mask.additive = batched.data();
  options.mask.additive_batch = 2;
  check_sdpa(in, options);
}

TEST_CASE("Causal scaled dot-product attention lets query i see keys j <= i", "[sdpa]") {
  const Inputs in = make_inputs(2, 5, 5, 4, 3, 19);
  AttentionOptions options;
  options.mask.causal = true;
  check_sdpa(in, options);
  // The first query sees only the first key: its output is that key's value.
  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, options);
  for (Index b = 0; b < 2; ++b)
    for (Index c = 0; c < 3; ++c) CHECK(got.output.at(b, 0, c) == in.v.at(b, 0, c));
}

TEST_CASE("Scaled dot-product attention honours key padding", "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 5, 2, 22);
  const std::vector<uint8_t> padding = {0, 0, 1, 1, 1, 0, 0, 0};
  AttentionOptions options;
  options.mask.key_padding = padding.data();
  check_sdpa(in, options);
}

TEST_CASE("A custom scale replaces 1/sqrt(d)", "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 8, 3, 25);
  AttentionOptions options;
  options.scale = 0.1f;
  check_sdpa(in, options);
  options.scale = 3.0f;
  check_sdpa(in, options);
  // Scale 0 ignores the keys: every weight is 1/nk.
  options.scale = 0.0f;
  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, options, true);
  for (float w : got.weights.data) CHECK(w == 0.25f);
}

TEST_CASE("Attention with a single query matches the reference", "[sdpa]") {
  check_sdpa(make_inputs(3, 1, 6, 4, 5, 28), {});
}

TEST_CASE("Attention over a single key returns that key's value", "[sdpa]") {
  const Inputs in = make_inputs(2, 4, 1, 3, 5, 31);
  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, {}, true);
  for (float w : got.weights.data) CHECK(w == 1.0f);
  for (Index b = 0; b < 2; ++b)
    for (Index i = 0; i < 4; ++i)
      for (Index c = 0; c < 5; ++c) CHECK(got.output.at(b, i, c) == in.v.at(b, 0, c));
}

TEST_CASE("Attention over no keys (nk = 0) pools nothing and gives zeros", "[sdpa]") {
  // The header's formula softmax(q k^T) v with nk = 0 is an empty softmax row times an empty v:
  // an empty sum, 0 (what PyTorch's math path gives too). It must not throw or read memory.
  const Tensor3 q = ref::random_tensor(2, 3, 4, 34);
  const Tensor3 k(2, 0, 4);
  const Tensor3 v(2, 0, 5);
  AttentionResult got;
  REQUIRE_NOTHROW(got = attn::scaled_dot_product_attention(q, k, v, {}, true));
  REQUIRE(got.output.batch == 2);
  REQUIRE(got.output.rows == 3);
  REQUIRE(got.output.cols == 5);
  for (float x : got.output.data) CHECK(x == 0.0f);
  CHECK(got.weights.data.empty());

  // The view overload overwrites the caller's buffer.
  Tensor3 out(2, 3, 5, 42.0f);
  attn::scaled_dot_product_attention(q.view(), k.view(), v.view(), {}, out.view());
  for (float x : out.data) CHECK(x == 0.0f);
}

TEST_CASE("Logits around 1e4 give finite, correct attention", "[sdpa]") {
  // Integer entries make q.k exact in float and the default scale 1/sqrt(4) = 1/2 is exact, so
  // the logits 10000 + j/2 and -10000 - j/2 reach the softmax unrounded.
  Tensor3 q(1, 2, 4), k(1, 5, 4);
  q.data = {100, 1, 0, 0, -100, 0, 1, 0};
  for (Index j = 0; j < 5; ++j) {
    k.at(0, j, 0) = 200.0f;
    k.at(0, j, 1) = static_cast<float>(j);
    k.at(0, j, 2) = -static_cast<float>(j);
  }
  const Tensor3 v = ref::random_tensor(1, 5, 3, 37);
  const auto got = attn::scaled_dot_product_attention(q, k, v, {}, true);
  for (float x : got.output.data) CHECK(std::isfinite(x));
  for (float x : got.weights.data) CHECK(std::isfinite(x));
  const auto expected =
      ref::scaled_dot_product_attention(ref::to_double(q), ref::to_double(k), ref::to_double(v));
  ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
  ref::check_close(got.output, expected.output, ref::kSum, "output");
}

TEST_CASE("Equal keys give uniform weights and average the values", "[sdpa]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 40);
  Tensor3 k(2, 6, 4);
  const auto key = ref::uniform(4, 41);
  for (Index b = 0; b < 2; ++b)
    for (Index j = 0; j < 6; ++j)
      for (Index c = 0; c < 4; ++c) k.at(b, j, c) = key[static_cast<size_t>(c)];
  const Tensor3 v = ref::random_tensor(2, 6, 3, 42);
  const auto got = attn::scaled_dot_product_attention(q, k, v, {}, true);
  ref::check_close(got.weights, ref::Batch(2, 3, 6, 1.0 / 6.0), ref::kTight, "weights");
  ref::Batch mean(2, 3, 3);
  for (Index b = 0; b < 2; ++b)
    for (Index c = 0; c < 3; ++c) {
      double sum = 0.0;
      for (Index j = 0; j < 6; ++j) sum += v.at(b, j, c);
      for (Index i = 0; i < 3; ++i) mean(b, i, c) = sum / 6.0;
    }
  ref::check_close(got.output, mean, ref::kSum, "output");
}

TEST_CASE("Weights are returned only when requested", "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 5, 2, 43);
  const auto without = attn::scaled_dot_product_attention(in.q, in.k, in.v);
  CHECK(without.weights.data.empty());
  const auto with = attn::scaled_dot_product_attention(in.q, in.k, in.v, {}, true);
  CHECK(with.weights.batch == 2);
  CHECK(with.weights.rows == 3);
  CHECK(with.weights.cols == 4);
  CHECK(with.output.data == without.output.data);
}

TEST_CASE("The view overload writes output and weights into the caller's buffers", "[sdpa]") {
  const Inputs in = make_inputs(2, 3, 4, 5, 6, 46);
  AttentionOptions options;
  options.mask.valid_lens = {3, 2};
  Tensor3 out(2, 3, 6, -7.0f), weights(2, 3, 4, -7.0f);
  const attn::MutableBatch weights_view = weights.view();
  attn::scaled_dot_product_attention(in.q.view(), in.k.view(), in.v.view(), options, out.view(),
                                     &weights_view);
  const auto expected =
      ref::scaled_dot_product_attention(in.qd, in.kd, in.vd, options.mask, std::nullopt);
  ref::check_close(weights, expected.weights, ref::kTight, "weights");
  ref::check_close(out, expected.output, ref::kSum, "output");
}

// ---------------------------------------------------------------------------------------------
// Dropout

TEST_CASE("Dropout 0 is the same as no dropout", "[sdpa][dropout]") {
  const Inputs in = make_inputs(2, 4, 5, 3, 3, 49);
  AttentionOptions options;
  options.dropout = 0.0f;
  options.seed = 1234;
  const auto with = attn::scaled_dot_product_attention(in.q, in.k, in.v, options, true);
  const auto without = attn::scaled_dot_product_attention(in.q, in.k, in.v, {}, true);
  CHECK(with.output.data == without.output.data);
  CHECK(with.weights.data == without.weights.data);
}

TEST_CASE("The same dropout seed gives identical outputs", "[sdpa][dropout]") {
  const Inputs in = make_inputs(2, 8, 9, 4, 5, 52);
  AttentionOptions options;
  options.dropout = 0.4f;
  options.seed = 99;
  const auto first = attn::scaled_dot_product_attention(in.q, in.k, in.v, options);
  const auto second = attn::scaled_dot_product_attention(in.q, in.k, in.v, options);
  CHECK(first.output.data == second.output.data);
}

TEST_CASE("Different dropout seeds give different outputs", "[sdpa][dropout]") {
  const Inputs in = make_inputs(2, 8, 9, 4, 5, 55);
  AttentionOptions a, b;
  a.dropout = b.dropout = 0.4f;
  a.seed = 1;
  b.seed = 2;
  const auto first = attn::scaled_dot_product_attention(in.q, in.k, in.v, a);
  const auto second = attn::scaled_dot_product_attention(in.q, in.k, in.v, b);
  CHECK(first.output.data != second.output.data);
  // And dropout does change the output.
  const auto plain = attn::scaled_dot_product_attention(in.q, in.k, in.v);
  CHECK(first.output.data != plain.output.data);
}

TEST_CASE("With dropout the returned weights are the pre-dropout distribution", "[sdpa][dropout]") {
  const Inputs in = make_inputs(2, 6, 7, 4, 3, 58);
  AttentionOptions options;
  options.dropout = 0.5f;
  options.seed = 7;
  options.mask.valid_lens = {5, 7};
  const auto got = attn::scaled_dot_product_attention(in.q, in.k, in.v, options, true);
  const auto expected =
      ref::scaled_dot_product_attention(in.qd, in.kd, in.vd, options.mask, std::nullopt);
  ref::check_close(got.weights, expected.weights, ref::kTight, "weights");
  ref::check_rows_sum_to_one(got.weights);
}

TEST_CASE("Dropout zeroes about a fraction p of the weights and scales the rest by 1/(1-p)",
          "[sdpa][dropout]") {
  // With v = I the output is the dropped-out weight matrix itself: each entry is 0 (dropped) or
  // w / (1 - p) (kept). 4 * 64 * 64 = 16384 draws: the dropped fraction's standard deviation is
  // sqrt(p (1 - p) / 16384) ~ 0.0036, so +-0.02 is more than 5 sigma.
  const Index B = 4, n = 64;
  const float p = 0.3f;
  const Tensor3 q = ref::random_tensor(B, n, 8, 61);
  const Tensor3 k = ref::random_tensor(B, n, 8, 62);
  Tensor3 eye(B, n, n);
  for (Index b = 0; b < B; ++b)
    for (Index i = 0; i < n; ++i) eye.at(b, i, i) = 1.0f;
  AttentionOptions options;
  options.dropout = p;
  options.seed = 2024;
  const auto got = attn::scaled_dot_product_attention(q, k, eye, options, true);
  size_t dropped = 0, wrong = 0;
  for (size_t i = 0; i < got.output.data.size(); ++i) {
    const float x = got.output.data[i];
    if (x == 0.0f) {
      ++dropped;
    } else if (!ref::close(x, got.weights.data[i] / (1.0 - p), ref::kTight)) {
      if (++wrong <= 5)
        FAIL_CHECK("kept entry " << i << ": " << x << " vs weight " << got.weights.data[i]);
    }
  }
  const double fraction = static_cast<double>(dropped) / got.output.data.size();
  CAPTURE(fraction);
  CHECK(wrong == 0);
  CHECK_THAT(fraction, Catch::Matchers::WithinAbs(p, 0.02));
}

// ---------------------------------------------------------------------------------------------
// Additive attention

namespace {

attn::ScoreParams additive_params(Index h, Index dq, Index dk, uint32_t seed) {
  attn::ScoreParams params;
  params.Wq = ref::random_matrix(h, dq, seed);
  params.Wk = ref::random_matrix(h, dk, seed + 1);
  params.wv = ref::random_vector(h, seed + 2);
  return params;
}

ref::Attention additive_reference(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const attn::ScoreParams& params, const attn::Mask& mask) {
  return ref::additive_attention(ref::to_double(q), ref::to_double(k), ref::to_double(v),
                                 ref::to_double(params.Wq), ref::to_double(params.Wk),
                                 ref::to_double(params.wv), mask);
}

// Compares additive attention's weights and output with the double-precision reference.
void check_additive(const Tensor3& weights, const Tensor3& output, const Tensor3& q,
                    const Tensor3& k, const Tensor3& v, const attn::ScoreParams& params,
                    const attn::Mask& mask) {
  const auto expected = additive_reference(q, k, v, params, mask);
  ref::check_close(weights, expected.weights, ref::kSum, "weights");
  ref::check_close(output, expected.output, ref::kSum, "output");
}

}  // namespace

TEST_CASE("Additive attention reproduces d2l's example", "[additive]") {
  // queries normal [2, 1, 20], keys ones [2, 10, 2], values arange(40).reshape(1, 10, 4)
  // repeated twice, valid lens [2, 6], 8 hidden units -> output [2, 1, 4]. Equal keys make the
  // visible weights uniform, so the output is the mean of the first 2 (resp. 6) value rows:
  // [2, 3, 4, 5] and [10, 11, 12, 13], whatever the parameters.
  Tensor3 q(2, 1, 20);
  q.data = ref::normal(q.data.size(), 64);
  const Tensor3 k(2, 10, 2, 1.0f);
  Tensor3 v(2, 10, 4);
  for (Index b = 0; b < 2; ++b)
    for (Index i = 0; i < 40; ++i) v.data[static_cast<size_t>(b * 40 + i)] = static_cast<float>(i);
  const attn::ScoreParams params = additive_params(8, 20, 2, 65);
  AttentionOptions options;
  options.mask.valid_lens = {2, 6};

  const auto got = attn::additive_attention(q, k, v, params, options, true);
  REQUIRE(got.output.batch == 2);
  REQUIRE(got.output.rows == 1);
  REQUIRE(got.output.cols == 4);
  ref::Batch expected(2, 1, 4);
  expected.v = {2, 3, 4, 5, 10, 11, 12, 13};
  ref::check_close(got.output, expected, ref::kTight, "output");
  for (Index j = 0; j < 10; ++j) {
    CAPTURE(j);
    CHECK_THAT(got.weights.at(0, 0, j), Catch::Matchers::WithinAbs(j < 2 ? 0.5 : 0.0, 1e-7));
    CHECK_THAT(got.weights.at(1, 0, j), Catch::Matchers::WithinAbs(j < 6 ? 1.0 / 6 : 0.0, 1e-7));
  }
}

TEST_CASE("Additive attention matches the reference with valid lengths", "[additive]") {
  const Tensor3 q = ref::random_tensor(2, 1, 20, 68);
  const Tensor3 k = ref::random_tensor(2, 10, 2, 69);
  const Tensor3 v = ref::random_tensor(2, 10, 4, 70);
  const attn::ScoreParams params = additive_params(8, 20, 2, 71);
  AttentionOptions options;
  options.mask.valid_lens = {2, 6};
  const auto got = attn::additive_attention(q, k, v, params, options, true);
  check_additive(got.weights, got.output, q, k, v, params, options.mask);
}

TEST_CASE("Additive attention matches the reference with several queries and no mask",
          "[additive]") {
  const Tensor3 q = ref::random_tensor(3, 4, 5, 74);
  const Tensor3 k = ref::random_tensor(3, 7, 3, 75);
  const Tensor3 v = ref::random_tensor(3, 7, 2, 76);
  const attn::ScoreParams params = additive_params(6, 5, 3, 77);
  const auto got = attn::additive_attention(q, k, v, params, {}, true);
  check_additive(got.weights, got.output, q, k, v, params, {});
}

TEST_CASE("Additive attention honours per-query valid lengths and the view overload",
          "[additive]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 80);
  const Tensor3 k = ref::random_tensor(2, 5, 6, 81);
  const Tensor3 v = ref::random_tensor(2, 5, 3, 82);
  const attn::ScoreParams params = additive_params(7, 4, 6, 83);
  AttentionOptions options;
  options.mask.valid_lens = {1, 5, 3, 2, 4, 5};
  Tensor3 out(2, 3, 3, 9.0f), weights(2, 3, 5, 9.0f);
  const attn::MutableBatch weights_view = weights.view();
  attn::additive_attention(q.view(), k.view(), v.view(), params, options, out.view(),
                           &weights_view);
  check_additive(weights, out, q, k, v, params, options.mask);
}

TEST_CASE("A batch of 0 with a huge nq x nk computes nothing and allocates no score scratch",
          "[sdpa]") {
  // 2^20 x 2^20 float scores would be 4 TiB: asking for them throws std::bad_alloc.
  const Index n = Index{1} << 20;
  const attn::ConstBatch q{nullptr, 0, n, 8}, k{nullptr, 0, n, 8}, v{nullptr, 0, n, 8};
  const attn::MutableBatch output{nullptr, 0, n, 8}, weights{nullptr, 0, n, n};
  AttentionOptions options;
  options.dropout = 0.5f;  // the unfused path, which keeps an [nq, nk] scratch per call
  REQUIRE_NOTHROW(attn::scaled_dot_product_attention(q, k, v, options, output, &weights));
  const attn::ScoreParams params{attn::Matrix(2, 8), attn::Matrix(2, 8), attn::Vector(2), {}};
  REQUIRE_NOTHROW(attn::additive_attention(q, k, v, params, options, output, nullptr));
}
