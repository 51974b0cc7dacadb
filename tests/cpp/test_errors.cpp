// Argument validation: every bad argument throws std::invalid_argument whose message names it.
// The checks stop at the argument's name (and, for shapes, the numbers involved): the wording
// around it is free.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attn.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;
using attn::Tensor3;
using Catch::Matchers::Contains;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Matches an exception whose what() satisfies a string matcher.
template <typename StringMatcher>
class WhatMatcher : public Catch::MatcherBase<std::invalid_argument> {
 public:
  explicit WhatMatcher(StringMatcher matcher) : matcher_(std::move(matcher)) {}
  bool match(const std::invalid_argument& e) const override {
    return matcher_.match(std::string(e.what()));
  }
  std::string describe() const override { return "has a message that " + matcher_.describe(); }

 private:
  StringMatcher matcher_;
};

template <typename StringMatcher>
WhatMatcher<StringMatcher> what(StringMatcher matcher) {
  return WhatMatcher<StringMatcher>(std::move(matcher));
}

// The message mentions `name` as a word of its own (so "k" is not found inside "kernel").
Catch::Matchers::StdString::RegexMatcher names(const std::string& name) {
  return Catch::Matchers::Matches(".*\\b" + name + "\\b.*");
}

}  // namespace

// Throws std::invalid_argument whose message satisfies `matcher`.
#define REQUIRE_INVALID(expr, matcher) \
  REQUIRE_THROWS_MATCHES(expr, std::invalid_argument, what(matcher))

// ---------------------------------------------------------------------------------------------
// Kernels and kernel regression

TEST_CASE("An unknown kernel name is rejected naming kernel and the accepted names", "[errors]") {
  REQUIRE_INVALID(attn::parse_similarity("gauss"), names("kernel") && Contains("gaussian"));
  REQUIRE_INVALID(attn::parse_similarity(""), names("kernel"));
  REQUIRE_INVALID(attn::parse_similarity("Gaussian"), names("kernel"));
}

TEST_CASE("similarity_value rejects a bandwidth that is not finite and positive", "[errors]") {
  for (float sigma : {0.0f, -1.0f, kNaN, kInf}) {
    CAPTURE(sigma);
    REQUIRE_INVALID(attn::similarity_value(attn::Similarity::Gaussian, 1.0f, sigma),
                    names("bandwidth"));
  }
}

TEST_CASE("kernel_regression rejects mismatched shapes and bad bandwidths", "[errors]") {
  const Matrix keys = ref::random_matrix(5, 2, 1);
  const Matrix values = ref::random_matrix(5, 1, 2);
  const Matrix queries = ref::random_matrix(3, 2, 3);
  const Matrix short_values = ref::random_matrix(4, 1, 4);
  const Matrix wide_queries = ref::random_matrix(3, 3, 5);
  const auto gaussian = attn::Similarity::Gaussian;
  REQUIRE_INVALID(attn::kernel_regression(keys, short_values, queries, gaussian, 1.0f),
                  names("values"));
  REQUIRE_INVALID(attn::kernel_regression(keys, values, wide_queries, gaussian, 1.0f),
                  names("queries"));
  for (float sigma : {0.0f, -0.5f, kNaN, kInf}) {
    CAPTURE(sigma);
    REQUIRE_INVALID(attn::kernel_regression(keys, values, queries, gaussian, sigma),
                    names("bandwidth"));
  }
}

TEST_CASE("leave_one_out rejects mismatched shapes and bad bandwidth lists", "[errors]") {
  const Matrix keys = ref::random_matrix(5, 1, 6);
  const Matrix values = ref::random_matrix(5, 1, 7);
  const Matrix short_values = ref::random_matrix(3, 1, 8);
  const auto gaussian = attn::Similarity::Gaussian;
  REQUIRE_INVALID(attn::leave_one_out(keys, short_values, gaussian, std::vector<float>{1.0f}),
                  names("values"));
  REQUIRE_INVALID(attn::leave_one_out(keys, values, gaussian, std::vector<float>{}),
                  Contains("bandwidth"));
  REQUIRE_INVALID(attn::leave_one_out(keys, values, gaussian, std::vector<float>{1.0f, 0.0f}),
                  Contains("bandwidth"));
  REQUIRE_INVALID(attn::leave_one_out(keys, values, gaussian, std::vector<float>{-2.0f}),
                  Contains("bandwidth"));
  REQUIRE_INVALID(attn::leave_one_out(keys, values, gaussian, std::vector<float>{kNaN}),
                  Contains("bandwidth"));
}

// ---------------------------------------------------------------------------------------------
// Masks

TEST_CASE("Valid lengths of the wrong count are rejected naming valid_lens", "[errors]") {
  const Tensor3 scores = ref::random_tensor(2, 2, 4, 9);
  attn::Mask mask;
  mask.valid_lens = {1, 2, 3};  // neither [B] = 2 nor [B, nq] = 4
  REQUIRE_INVALID(attn::masked_softmax(scores, mask), names("valid_lens"));
  mask.valid_lens = {1};
  REQUIRE_INVALID(attn::masked_softmax(scores, mask), names("valid_lens"));
}

TEST_CASE("Negative or too long valid lengths are rejected naming valid_lens", "[errors]") {
  const Tensor3 scores = ref::random_tensor(2, 2, 4, 10);
  attn::Mask mask;
  mask.valid_lens = {-1, 2};
  REQUIRE_INVALID(attn::masked_softmax(scores, mask), names("valid_lens"));
  mask.valid_lens = {2, 5};  // nk = 4
  REQUIRE_INVALID(attn::masked_softmax(scores, mask), names("valid_lens"));
  mask.valid_lens = {1, 2, 3, 5};
  REQUIRE_INVALID(attn::masked_softmax(scores, mask), names("valid_lens"));
  // The edges 0 and nk are valid.
  mask.valid_lens = {0, 4};
  REQUIRE_NOTHROW(attn::masked_softmax(scores, mask));
}

TEST_CASE("Boolean and additive masks of the wrong batch are rejected naming the mask",
          "[errors]") {
  const Tensor3 scores = ref::random_tensor(2, 2, 3, 11);
  const std::vector<uint8_t> hidden(3 * 2 * 3, 0);
  const std::vector<float> bias(3 * 2 * 3, 0.0f);
  attn::Mask bool_mask;
  bool_mask.bool_mask = hidden.data();
  bool_mask.bool_mask_batch = 3;  // B = 2
  REQUIRE_INVALID(attn::masked_softmax(scores, bool_mask), names("bool_mask"));
  attn::Mask additive;
  additive.additive = bias.data();
  additive.additive_batch = 3;
  REQUIRE_INVALID(attn::masked_softmax(scores, additive), names("additive"));
}

// ---------------------------------------------------------------------------------------------
// bmm and scores

TEST_CASE("bmm rejects operands whose shapes do not chain", "[errors]") {
  const Tensor3 a = ref::random_tensor(2, 3, 4, 12);
  REQUIRE_INVALID(attn::bmm(a, ref::random_tensor(2, 5, 2, 13)), names("b"));
  REQUIRE_INVALID(attn::bmm(a, ref::random_tensor(3, 4, 2, 14)), names("b"));
  const Tensor3 b = ref::random_tensor(2, 4, 2, 15);
  Tensor3 out(2, 3, 3);
  REQUIRE_INVALID(attn::bmm(a.view(), b.view(), out.view()), names("out"));
}

TEST_CASE("An unknown score function name is rejected", "[errors]") {
  // The header does not name the argument; the message must at least quote the bad name.
  REQUIRE_INVALID(attn::parse_score_function("cosine"), Contains("cosine"));
  REQUIRE_INVALID(attn::parse_score_function("Dot"), Contains("Dot"));
}

TEST_CASE("Score functions reject mismatched q, k and parameter shapes", "[errors]") {
  using attn::ScoreFunction;
  const Tensor3 q = ref::random_tensor(2, 3, 4, 16);
  const Tensor3 k5 = ref::random_tensor(2, 6, 5, 17);
  const Tensor3 k_batch = ref::random_tensor(1, 6, 4, 18);
  for (ScoreFunction fn :
       {ScoreFunction::Dot, ScoreFunction::ScaledDot, ScoreFunction::NegSquaredDistance}) {
    REQUIRE_INVALID(attn::score(fn, q, k5), names("k"));
    REQUIRE_INVALID(attn::score(fn, q, k_batch), names("k"));
  }

  attn::ScoreParams additive;
  additive.Wq = ref::random_matrix(8, 4, 19);
  additive.Wk = ref::random_matrix(8, 5, 20);
  additive.wv = ref::random_vector(8, 21);
  REQUIRE_NOTHROW(attn::score(ScoreFunction::Additive, q, k5, additive));
  attn::ScoreParams bad = additive;
  bad.Wq = ref::random_matrix(8, 3, 22);
  REQUIRE_INVALID(attn::score(ScoreFunction::Additive, q, k5, bad), names("Wq"));
  bad = additive;
  bad.Wk = ref::random_matrix(8, 4, 23);
  REQUIRE_INVALID(attn::score(ScoreFunction::Additive, q, k5, bad), names("Wk"));
  bad = additive;
  bad.wv = ref::random_vector(7, 24);
  // wv disagrees with the hidden size of Wq and Wk: naming either side is fair.
  REQUIRE_INVALID(attn::score(ScoreFunction::Additive, q, k5, bad),
                  names("wv") || names("Wq") || names("Wk"));
  REQUIRE_INVALID(attn::score(ScoreFunction::Additive, q, k5, attn::ScoreParams{}),
                  names("wv") || names("Wq") || names("Wk"));

  attn::ScoreParams general;
  general.W = ref::random_matrix(4, 4, 25);
  REQUIRE_INVALID(attn::score(ScoreFunction::General, q, k5, general), names("W"));
  REQUIRE_INVALID(attn::score(ScoreFunction::General, q, k5, attn::ScoreParams{}), names("W"));

  const Tensor3 k6 = ref::random_tensor(2, 6, 4, 26);
  Tensor3 scores(2, 3, 5);  // should be [2, 3, 6]
  REQUIRE_INVALID(attn::score(ScoreFunction::Dot, q.view(), k6.view(), {}, scores.view()),
                  names("scores"));
}

// ---------------------------------------------------------------------------------------------
// Attention

TEST_CASE("Scaled dot-product attention rejects mismatched q, k, v", "[errors]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 27);
  const Tensor3 k = ref::random_tensor(2, 5, 4, 28);
  const Tensor3 v = ref::random_tensor(2, 5, 6, 29);
  REQUIRE_NOTHROW(attn::scaled_dot_product_attention(q, k, v));
  REQUIRE_INVALID(attn::scaled_dot_product_attention(q, ref::random_tensor(2, 5, 3, 30), v),
                  names("k"));
  REQUIRE_INVALID(attn::scaled_dot_product_attention(q, ref::random_tensor(1, 5, 4, 31), v),
                  names("k"));
  REQUIRE_INVALID(attn::scaled_dot_product_attention(q, k, ref::random_tensor(2, 4, 6, 32)),
                  names("v"));
  REQUIRE_INVALID(attn::scaled_dot_product_attention(q, k, ref::random_tensor(3, 5, 6, 33)),
                  names("v"));
}

TEST_CASE("Scaled dot-product attention rejects output and weights buffers of the wrong shape",
          "[errors]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 34);
  const Tensor3 k = ref::random_tensor(2, 5, 4, 35);
  const Tensor3 v = ref::random_tensor(2, 5, 6, 36);
  Tensor3 out(2, 3, 6), bad_out(2, 3, 5), bad_weights(2, 3, 4);
  REQUIRE_INVALID(
      attn::scaled_dot_product_attention(q.view(), k.view(), v.view(), {}, bad_out.view()),
      names("output"));
  const attn::MutableBatch weights = bad_weights.view();
  REQUIRE_INVALID(
      attn::scaled_dot_product_attention(q.view(), k.view(), v.view(), {}, out.view(), &weights),
      names("weights"));
}

TEST_CASE("Dropout outside 0 <= p < 1 is rejected naming dropout", "[errors]") {
  const Tensor3 q = ref::random_tensor(1, 2, 3, 37);
  for (float p : {-0.1f, 1.0f, 1.5f, kNaN}) {
    CAPTURE(p);
    attn::AttentionOptions options;
    options.dropout = p;
    REQUIRE_INVALID(attn::scaled_dot_product_attention(q, q, q, options), names("dropout"));
  }
}

TEST_CASE("Attention rejects bad valid lengths naming valid_lens", "[errors]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 38);
  const Tensor3 k = ref::random_tensor(2, 5, 4, 39);
  attn::AttentionOptions options;
  for (auto lens :
       {std::vector<int32_t>{6, 1}, std::vector<int32_t>{-1, 1}, std::vector<int32_t>{1, 2, 3}}) {
    options.mask.valid_lens = lens;
    REQUIRE_INVALID(attn::scaled_dot_product_attention(q, k, k, options), names("valid_lens"));
  }
}

TEST_CASE("Additive attention rejects bad parameters and values", "[errors]") {
  const Tensor3 q = ref::random_tensor(2, 1, 20, 40);
  const Tensor3 k = ref::random_tensor(2, 10, 2, 41);
  const Tensor3 v = ref::random_tensor(2, 10, 4, 42);
  attn::ScoreParams params;
  params.Wq = ref::random_matrix(8, 20, 43);
  params.Wk = ref::random_matrix(8, 2, 44);
  params.wv = ref::random_vector(8, 45);
  REQUIRE_NOTHROW(attn::additive_attention(q, k, v, params));
  REQUIRE_INVALID(attn::additive_attention(q, k, ref::random_tensor(2, 9, 4, 46), params),
                  names("v"));
  attn::ScoreParams bad = params;
  bad.Wq = ref::random_matrix(8, 19, 47);
  REQUIRE_INVALID(attn::additive_attention(q, k, v, bad), names("Wq"));
  attn::AttentionOptions options;
  options.mask.valid_lens = {2, 11};
  REQUIRE_INVALID(attn::additive_attention(q, k, v, params, options), names("valid_lens"));
}

// ---------------------------------------------------------------------------------------------
// Multi-head attention

namespace {
attn::MultiHeadConfig config(Index embed_dim, Index num_heads, Index kdim = 0, Index vdim = 0) {
  attn::MultiHeadConfig c;
  c.embed_dim = embed_dim;
  c.num_heads = num_heads;
  c.kdim = kdim;
  c.vdim = vdim;
  return c;
}
}  // namespace

TEST_CASE("A multi-head configuration with bad sizes is rejected naming the field", "[errors]") {
  REQUIRE_INVALID(attn::MultiHeadAttention(config(0, 1)), names("embed_dim"));
  REQUIRE_INVALID(attn::MultiHeadAttention(config(-4, 1)), names("embed_dim"));
  REQUIRE_INVALID(attn::MultiHeadAttention(config(8, 0)), names("num_heads"));
  REQUIRE_INVALID(attn::MultiHeadAttention(config(8, 3)), names("num_heads"));
  REQUIRE_INVALID(attn::MultiHeadAttention(config(100, 3)), names("num_heads"));
  REQUIRE_INVALID(attn::MultiHeadAttention(config(8, 2, -1)), names("kdim"));
  REQUIRE_INVALID(attn::MultiHeadAttention(config(8, 2, 0, -1)), names("vdim"));
  REQUIRE_NOTHROW(attn::MultiHeadAttention(config(100, 5)));
}

TEST_CASE("set_parameter rejects an unknown name", "[errors]") {
  attn::MultiHeadAttention packed(config(8, 2));
  const std::vector<float> data(24 * 8, 0.0f);
  REQUIRE_INVALID(packed.set_parameter("in_proj_wieght", data.data(), {24, 8}),
                  Contains("in_proj_wieght"));
  // Names of the other layout are unknown to this one.
  REQUIRE_INVALID(packed.set_parameter("q_proj_weight", data.data(), {8, 8}),
                  Contains("q_proj_weight"));
  attn::MultiHeadAttention separate(config(8, 2, 3, 5));
  REQUIRE_INVALID(separate.set_parameter("in_proj_weight", data.data(), {24, 8}),
                  Contains("in_proj_weight"));
  attn::MultiHeadConfig no_bias = config(8, 2);
  no_bias.bias = false;
  attn::MultiHeadAttention unbiased(no_bias);
  REQUIRE_INVALID(unbiased.set_parameter("out_proj.bias", data.data(), {8}),
                  Contains("out_proj.bias"));
}

TEST_CASE("set_parameter rejects a shape other than the listed one", "[errors]") {
  attn::MultiHeadAttention packed(config(8, 2));
  const std::vector<float> data(24 * 8, 0.0f);
  // The message names the parameter and shows the expected and the given sizes.
  REQUIRE_INVALID(packed.set_parameter("in_proj_weight", data.data(), {23, 8}),
                  Contains("in_proj_weight") && Contains("24") && Contains("23"));
  REQUIRE_INVALID(packed.set_parameter("in_proj_weight", data.data(), {24}),
                  Contains("in_proj_weight"));
  REQUIRE_INVALID(packed.set_parameter("out_proj.bias", data.data(), {7}),
                  Contains("out_proj.bias"));
  attn::MultiHeadAttention separate(config(8, 2, 3, 5));
  REQUIRE_INVALID(separate.set_parameter("k_proj_weight", data.data(), {8, 8}),
                  Contains("k_proj_weight"));
}

TEST_CASE("Multi-head forward rejects inputs and buffers of the wrong shape", "[errors]") {
  attn::MultiHeadAttention m(config(8, 2, 3, 5));
  const Tensor3 query = ref::random_tensor(2, 4, 8, 48);
  const Tensor3 key = ref::random_tensor(2, 6, 3, 49);
  const Tensor3 value = ref::random_tensor(2, 6, 5, 50);
  const attn::MultiHeadForwardOptions options;
  Tensor3 out(2, 4, 8);
  REQUIRE_NOTHROW(m.forward(query.view(), key.view(), value.view(), options, out.view()));

  const Tensor3 bad_query = ref::random_tensor(2, 4, 7, 51);
  REQUIRE_INVALID(m.forward(bad_query.view(), key.view(), value.view(), options, out.view()),
                  names("query"));
  const Tensor3 bad_key = ref::random_tensor(2, 6, 8, 52);
  REQUIRE_INVALID(m.forward(query.view(), bad_key.view(), value.view(), options, out.view()),
                  names("key"));
  const Tensor3 short_value = ref::random_tensor(2, 5, 5, 53);
  REQUIRE_INVALID(m.forward(query.view(), key.view(), short_value.view(), options, out.view()),
                  names("value"));
  const Tensor3 wide_value = ref::random_tensor(2, 6, 8, 54);
  REQUIRE_INVALID(m.forward(query.view(), key.view(), wide_value.view(), options, out.view()),
                  names("value"));
  Tensor3 bad_out(2, 4, 5);
  REQUIRE_INVALID(m.forward(query.view(), key.view(), value.view(), options, bad_out.view()),
                  names("output"));

  // average_attn_weights = false needs [B * heads, L, S], not [B, L, S].
  attn::MultiHeadForwardOptions per_head;
  per_head.average_attn_weights = false;
  Tensor3 weights(2, 4, 6);
  const attn::MutableBatch weights_view = weights.view();
  REQUIRE_INVALID(
      m.forward(query.view(), key.view(), value.view(), per_head, out.view(), &weights_view),
      names("weights"));
}

TEST_CASE("Multi-head forward rejects masks that do not fit", "[errors]") {
  attn::MultiHeadAttention m(config(8, 2));
  const Tensor3 x = ref::random_tensor(2, 4, 8, 55);
  Tensor3 out(2, 4, 8);
  attn::MultiHeadForwardOptions options;
  options.mask.valid_lens = {5, 1};  // S = 4
  REQUIRE_INVALID(m.forward(x.view(), x.view(), x.view(), options, out.view()),
                  names("valid_lens"));

  // attn_mask must be 1 block [L, S] or B * heads = 4 blocks; B = 2 (one per batch row, a
  // likely mistake) and 3 are neither.
  const std::vector<uint8_t> hidden(2 * 4 * 4, 0);
  attn::MultiHeadForwardOptions bool_options;
  bool_options.mask.bool_mask = hidden.data();
  bool_options.mask.bool_mask_batch = 2;
  REQUIRE_INVALID(m.forward(x.view(), x.view(), x.view(), bool_options, out.view()),
                  Contains("mask"));
  const std::vector<float> bias(3 * 4 * 4, 0.0f);
  attn::MultiHeadForwardOptions additive_options;
  additive_options.mask.additive = bias.data();
  additive_options.mask.additive_batch = 3;
  REQUIRE_INVALID(m.forward(x.view(), x.view(), x.view(), additive_options, out.view()),
                  Contains("additive") || Contains("mask"));
}

// ---------------------------------------------------------------------------------------------
// Positional encoding

TEST_CASE("Positional encoding rejects negative sizes naming n or d", "[errors]") {
  REQUIRE_INVALID(attn::positional_encoding(-1, 4), names("n"));
  REQUIRE_INVALID(attn::positional_encoding(4, -2), names("d"));
}

TEST_CASE("A failed call leaves the library usable", "[errors]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 56);
  attn::AttentionOptions bad;
  bad.dropout = 2.0f;
  REQUIRE_THROWS_AS(attn::scaled_dot_product_attention(q, q, q, bad), std::invalid_argument);
  const auto got = attn::scaled_dot_product_attention(q, q, q, {}, true);
  const auto expected =
      ref::scaled_dot_product_attention(ref::to_double(q), ref::to_double(q), ref::to_double(q));
  ref::check_close(got.output, expected.output, ref::kSum, "output");
}
