// Multi-head attention against torch.nn.MultiheadAttention(batch_first=True) semantics.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/multi_head_attention.hpp"
#include "multi_head_support.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;
using attn::MultiHeadAttention;
using attn::MultiHeadConfig;
using attn::MultiHeadForwardOptions;
using attn::Tensor3;
using attn::Vector;
using mha_support::load;
using mha_support::make_config;
using mha_support::Params;
using mha_support::random_params;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Forward {
  Tensor3 output, weights;
};

Forward forward(const MultiHeadAttention& m, const Tensor3& query, const Tensor3& key,
                const Tensor3& value, const MultiHeadForwardOptions& options = {}) {
  const Index B = query.batch, L = query.rows, S = key.rows;
  const Index heads = m.config().num_heads;
  Forward f;
  f.output = Tensor3(B, L, m.config().embed_dim, -123.0f);
  f.weights = Tensor3(options.average_attn_weights ? B : B * heads, L, S, -123.0f);
  const attn::MutableBatch weights = f.weights.view();
  m.forward(query.view(), key.view(), value.view(), options, f.output.view(), &weights);
  return f;
}

ref::Attention reference(const Params& p, Index heads, const Tensor3& query, const Tensor3& key,
                         const Tensor3& value, const MultiHeadForwardOptions& options = {}) {
  return ref::multi_head_attention(ref::to_double(query), ref::to_double(key),
                                   ref::to_double(value), p.ref, heads, options.mask,
                                   options.average_attn_weights);
}

// The whole check: build, load random parameters, run, compare output and weights.
void check_against_reference(const MultiHeadConfig& config, const Tensor3& query,
                             const Tensor3& key, const Tensor3& value,
                             const MultiHeadForwardOptions& options = {}, uint32_t seed = 100) {
  MultiHeadAttention m(config);
  const Params p = random_params(config, seed);
  load(m, p);
  const Forward got = forward(m, query, key, value, options);
  const ref::Attention expected = reference(p, config.num_heads, query, key, value, options);
  ref::check_close(got.weights, expected.weights, ref::kSum, "weights");
  ref::check_close(got.output, expected.output, ref::kSum, "output");
}

bool has_parameter(const std::vector<attn::ParameterSpec>& specs, const std::string& name,
                   const std::vector<Index>& shape) {
  return std::any_of(specs.begin(), specs.end(), [&](const attn::ParameterSpec& s) {
    return s.name == name && s.shape == shape;
  });
}

}  // namespace

TEST_CASE("parameters() lists PyTorch's packed state dict when kdim == vdim == embed_dim",
          "[mha]") {
  const MultiHeadAttention m(make_config(8, 2));
  CHECK(m.packed());
  CHECK(m.head_dim() == 4);
  const auto specs = m.parameters();
  CHECK(specs.size() == 4);
  CHECK(has_parameter(specs, "in_proj_weight", {24, 8}));
  CHECK(has_parameter(specs, "in_proj_bias", {24}));
  CHECK(has_parameter(specs, "out_proj.weight", {8, 8}));
  CHECK(has_parameter(specs, "out_proj.bias", {8}));
  // Giving kdim = vdim = embed_dim explicitly is the same configuration.
  CHECK(MultiHeadAttention(make_config(8, 2, 8, 8)).packed());
}

TEST_CASE("parameters() lists separate projections when kdim or vdim differ from embed_dim",
          "[mha]") {
  const MultiHeadAttention m(make_config(6, 3, 4, 5));
  CHECK_FALSE(m.packed());
  const auto specs = m.parameters();
  CHECK(specs.size() == 6);
  CHECK(has_parameter(specs, "q_proj_weight", {6, 6}));
  CHECK(has_parameter(specs, "k_proj_weight", {6, 4}));
  CHECK(has_parameter(specs, "v_proj_weight", {6, 5}));
  CHECK(has_parameter(specs, "in_proj_bias", {18}));
  CHECK(has_parameter(specs, "out_proj.weight", {6, 6}));
  CHECK(has_parameter(specs, "out_proj.bias", {6}));
  CHECK_FALSE(MultiHeadAttention(make_config(6, 3, 6, 5)).packed());
}

TEST_CASE("parameters() has no biases when bias is false", "[mha]") {
  const auto specs = MultiHeadAttention(make_config(8, 4, 0, 0, false)).parameters();
  CHECK(specs.size() == 2);
  CHECK(has_parameter(specs, "in_proj_weight", {24, 8}));
  CHECK(has_parameter(specs, "out_proj.weight", {8, 8}));
}

TEST_CASE("Packed multi-head attention matches torch's computation", "[mha]") {
  const Tensor3 query = ref::random_tensor(2, 3, 8, 1);
  const Tensor3 key = ref::random_tensor(2, 5, 8, 2);
  const Tensor3 value = ref::random_tensor(2, 5, 8, 3);
  check_against_reference(make_config(8, 2), query, key, value);
}

TEST_CASE("Separate projections (kdim, vdim != embed_dim) match torch's computation", "[mha]") {
  const Tensor3 query = ref::random_tensor(2, 4, 12, 4);
  const Tensor3 key = ref::random_tensor(2, 6, 5, 5);
  const Tensor3 value = ref::random_tensor(2, 6, 7, 6);
  check_against_reference(make_config(12, 3, 5, 7), query, key, value);
}

TEST_CASE("Multi-head attention without bias matches torch's computation", "[mha]") {
  const Tensor3 query = ref::random_tensor(3, 2, 8, 7);
  const Tensor3 key = ref::random_tensor(3, 4, 8, 8);
  check_against_reference(make_config(8, 4, 0, 0, false), query, key, key);
  const Tensor3 k5 = ref::random_tensor(3, 4, 5, 9);
  const Tensor3 v3 = ref::random_tensor(3, 4, 3, 10);
  check_against_reference(make_config(8, 2, 5, 3, false), query, k5, v3);
}

TEST_CASE("key_padding_mask hides keys per batch row in every head", "[mha]") {
  const Tensor3 query = ref::random_tensor(2, 3, 8, 11);
  const Tensor3 key = ref::random_tensor(2, 5, 8, 12);
  const std::vector<uint8_t> padding = {0, 0, 0, 1, 1,  //
                                        0, 1, 0, 0, 0};
  MultiHeadForwardOptions options;
  options.mask.key_padding = padding.data();
  check_against_reference(make_config(8, 2), query, key, key, options);
  options.average_attn_weights = false;
  check_against_reference(make_config(8, 2), query, key, key, options);
}

TEST_CASE("A boolean attn_mask [L, S] applies to every batch row and head", "[mha]") {
  const Tensor3 query = ref::random_tensor(2, 3, 8, 13);
  const Tensor3 key = ref::random_tensor(2, 4, 8, 14);
  const std::vector<uint8_t> hidden = {0, 1, 1, 0,  //
                                       0, 0, 0, 1,  //
                                       1, 0, 1, 0};
  MultiHeadForwardOptions options;
  options.mask.bool_mask = hidden.data();
  options.mask.bool_mask_batch = 1;
  check_against_reference(make_config(8, 2), query, key, key, options);
}

TEST_CASE("A boolean attn_mask [B * heads, L, S] applies per batch row and head", "[mha]") {
  const Index B = 2, heads = 2, L = 3, S = 4;
  const Tensor3 query = ref::random_tensor(B, L, 8, 15);
  const Tensor3 key = ref::random_tensor(B, S, 8, 16);
  std::vector<uint8_t> hidden(static_cast<size_t>(B * heads * L * S));
  const auto u = ref::uniform(hidden.size(), 17, 0.0f, 1.0f);
  for (size_t i = 0; i < hidden.size(); ++i) hidden[i] = u[i] < 0.5f;
  for (Index r = 0; r < B * heads * L; ++r) hidden[static_cast<size_t>(r * S + r % S)] = 0;
  MultiHeadForwardOptions options;
  options.mask.bool_mask = hidden.data();
  options.mask.bool_mask_batch = B * heads;
  options.average_attn_weights = false;
  check_against_reference(make_config(8, heads), query, key, key, options);
}

TEST_CASE("An additive float attn_mask [L, S] is added to every head's scores", "[mha]") {
  const Tensor3 query = ref::random_tensor(2, 3, 8, 18);
  const Tensor3 key = ref::random_tensor(2, 4, 8, 19);
  std::vector<float> bias = ref::uniform(3 * 4, 20, -2.0f, 2.0f);
  bias[1] = -kInf;
  MultiHeadForwardOptions options;
  options.mask.additive = bias.data();
  options.mask.additive_batch = 1;
  check_against_reference(make_config(8, 4), query, key, key, options);
}

TEST_CASE("An additive float attn_mask [B * heads, L, S] is added per batch row and head",
          "[mha]") {
  const Index B = 2, heads = 4, L = 3, S = 5;
  const Tensor3 query = ref::random_tensor(B, L, 8, 21);
  const Tensor3 key = ref::random_tensor(B, S, 8, 22);
  const std::vector<float> bias =
      ref::uniform(static_cast<size_t>(B * heads * L * S), 23, -3.0f, 3.0f);
  const std::vector<uint8_t> padding = {0, 0, 0, 0, 1,  //
                                        1, 0, 0, 0, 0};
  MultiHeadForwardOptions options;
  options.mask.additive = bias.data();
  options.mask.additive_batch = B * heads;
  options.mask.key_padding = padding.data();  // combined as torch does: -inf where padded
  check_against_reference(make_config(8, heads), query, key, key, options);
  options.average_attn_weights = false;
  check_against_reference(make_config(8, heads), query, key, key, options);
}

TEST_CASE("average_attn_weights = false returns one weight matrix per head", "[mha]") {
  const MultiHeadConfig config = make_config(12, 3);
  const Tensor3 query = ref::random_tensor(2, 4, 12, 24);
  const Tensor3 key = ref::random_tensor(2, 6, 12, 25);
  MultiHeadAttention m(config);
  load(m, random_params(config, 26));
  MultiHeadForwardOptions per_head;
  per_head.average_attn_weights = false;
  const Forward heads = forward(m, query, key, key, per_head);
  const Forward averaged = forward(m, query, key, key);
  REQUIRE(heads.weights.batch == 6);
  // Same output either way, and the average of the heads' weights is the averaged weights.
  CHECK(heads.output.data == averaged.output.data);
  ref::Batch mean(2, 4, 6);
  for (Index b = 0; b < 2; ++b)
    for (Index h = 0; h < 3; ++h)
      for (Index i = 0; i < 4; ++i)
        for (Index j = 0; j < 6; ++j) mean(b, i, j) += heads.weights.at(b * 3 + h, i, j) / 3.0;
  ref::check_close(averaged.weights, mean, ref::kTight, "averaged weights");
  check_against_reference(config, query, key, key, per_head, 26);
}

TEST_CASE("One head is scaled dot-product attention between the projections", "[mha]") {
  const Index B = 2, L = 3, S = 5, E = 6;
  const MultiHeadConfig config = make_config(E, 1);
  const Params p = random_params(config, 27);
  MultiHeadAttention m(config);
  load(m, p);
  const Tensor3 query = ref::random_tensor(B, L, E, 28);
  const Tensor3 key = ref::random_tensor(B, S, E, 29);
  const Tensor3 value = ref::random_tensor(B, S, E, 30);

  // Project in float, attend with the library's SDPA (default scale 1/sqrt(E) = 1/sqrt(head_dim)),
  // then the output projection.
  auto project = [&](const Tensor3& x, const Matrix& w, const Vector& b) {
    Tensor3 out(x.batch, x.rows, w.rows());
    for (Index s = 0; s < x.batch; ++s) {
      attn::MatrixMap(out.data.data() + s * x.rows * w.rows(), x.rows, w.rows()) =
          (x.view()[s] * w.transpose()).rowwise() + b.transpose();
    }
    return out;
  };
  const auto sdpa =
      attn::scaled_dot_product_attention(project(query, p.w_q, p.b_q), project(key, p.w_k, p.b_k),
                                         project(value, p.w_v, p.b_v), {}, true);
  const Tensor3 expected_output = project(sdpa.output, p.w_out, p.b_out);

  const Forward got = forward(m, query, key, value);
  ref::check_close(got.weights, ref::to_double(sdpa.weights), ref::kSum, "weights");
  ref::check_close(got.output, ref::to_double(expected_output), ref::kSum, "output");
}

TEST_CASE("d2l's example: 100 features, 5 heads, 4 queries, 6 pairs, valid lengths [3, 2]",
          "[mha]") {
  // d2l's MultiHeadAttention(num_hiddens=100, num_heads=5) has bias-free projections and
  // masks with -1e6; batch 2, X [2, 4, 100], Y [2, 6, 100], valid_lens [3, 2] -> [2, 4, 100].
  const MultiHeadConfig config = make_config(100, 5, 0, 0, false);
  const Tensor3 x = ref::random_tensor(2, 4, 100, 31);
  const Tensor3 y = ref::random_tensor(2, 6, 100, 32);
  MultiHeadForwardOptions options;
  options.mask.fill = -1e6f;
  options.mask.valid_lens = {3, 2};

  MultiHeadAttention m(config);
  const Params p = random_params(config, 33);
  load(m, p);
  const Forward got = forward(m, x, y, y, options);
  REQUIRE(got.output.batch == 2);
  REQUIRE(got.output.rows == 4);
  REQUIRE(got.output.cols == 100);
  const ref::Attention expected = reference(p, 5, x, y, y, options);
  ref::check_close(got.output, expected.output, ref::kSum, "output");
  ref::check_close(got.weights, expected.weights, ref::kSum, "weights");
  for (Index i = 0; i < 4; ++i) {
    for (Index j = 3; j < 6; ++j) CHECK(got.weights.at(0, i, j) == 0.0f);
    for (Index j = 2; j < 6; ++j) CHECK(got.weights.at(1, i, j) == 0.0f);
  }

  // d2l's own inputs: all ones. Every key is equal, so the output does not depend on the mask.
  const Forward ones = forward(m, Tensor3(2, 4, 100, 1.0f), Tensor3(2, 6, 100, 1.0f),
                               Tensor3(2, 6, 100, 1.0f), options);
  const ref::Attention expected_ones = reference(
      p, 5, Tensor3(2, 4, 100, 1.0f), Tensor3(2, 6, 100, 1.0f), Tensor3(2, 6, 100, 1.0f), options);
  ref::check_close(ones.output, expected_ones.output, ref::kSum, "output (ones)");
}

TEST_CASE("Valid lengths per query and a causal mask work across heads", "[mha]") {
  const Tensor3 x = ref::random_tensor(2, 4, 8, 34);
  MultiHeadForwardOptions per_query;
  per_query.mask.valid_lens = {1, 2, 4, 3, 4, 4, 1, 2};
  check_against_reference(make_config(8, 2), x, x, x, per_query);
  MultiHeadForwardOptions causal;
  causal.mask.causal = true;
  causal.average_attn_weights = false;
  check_against_reference(make_config(8, 2), x, x, x, causal);
}

TEST_CASE("Self-attention and cross-attention go through the same call", "[mha]") {
  const MultiHeadConfig config = make_config(8, 2);
  MultiHeadAttention m(config);
  const Params p = random_params(config, 35);
  load(m, p);

  // Self-attention: the same tensor (the same memory) as query, key and value.
  const Tensor3 x = ref::random_tensor(2, 5, 8, 36);
  const Forward self = forward(m, x, x, x);
  const ref::Attention expected_self = reference(p, 2, x, x, x);
  ref::check_close(self.output, expected_self.output, ref::kSum, "self-attention output");
  REQUIRE(self.weights.rows == 5);
  REQUIRE(self.weights.cols == 5);

  // Cross-attention: key = value from another sequence, of a different length.
  const Tensor3 memory = ref::random_tensor(2, 7, 8, 37);
  const Forward cross = forward(m, x, memory, memory);
  const ref::Attention expected_cross = reference(p, 2, x, memory, memory);
  ref::check_close(cross.output, expected_cross.output, ref::kSum, "cross-attention output");
  REQUIRE(cross.weights.rows == 5);
  REQUIRE(cross.weights.cols == 7);
  ref::check_close(cross.weights, expected_cross.weights, ref::kSum, "cross-attention weights");
}

TEST_CASE("A query that sees no key is NaN by default and uniform with fill -1e6", "[mha]") {
  const MultiHeadConfig config = make_config(8, 2);
  MultiHeadAttention m(config);
  const Params p = random_params(config, 38);
  load(m, p);
  const Tensor3 x = ref::random_tensor(2, 3, 8, 39);
  const std::vector<uint8_t> padding = {1, 1, 1,  //
                                        0, 1, 0};
  MultiHeadForwardOptions options;
  options.mask.key_padding = padding.data();
  REQUIRE(std::isinf(options.mask.fill));
  const Forward got = forward(m, x, x, x, options);
  for (Index i = 0; i < 3; ++i)
    for (Index c = 0; c < 8; ++c) CHECK(std::isnan(got.output.at(0, i, c)));
  for (Index i = 0; i < 3; ++i)
    for (Index c = 0; c < 8; ++c) CHECK(std::isfinite(got.output.at(1, i, c)));

  options.mask.fill = -1e6f;
  const Forward d2l = forward(m, x, x, x, options);
  ref::check_close(d2l.output, reference(p, 2, x, x, x, options).output, ref::kSum, "output");
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 3; ++j)
      CHECK_THAT(d2l.weights.at(0, i, j), Catch::Matchers::WithinAbs(1.0 / 3.0, 1e-6));
}

TEST_CASE("set_parameter replaces one parameter by its PyTorch name", "[mha]") {
  const MultiHeadConfig config = make_config(8, 2);
  MultiHeadAttention m(config);
  const Params p = random_params(config, 40);
  load(m, p);
  const Tensor3 x = ref::random_tensor(2, 3, 8, 41);
  const Forward before = forward(m, x, x, x);

  // out_proj.bias enters the output additively: changing it shifts every row by the change.
  const Vector delta = ref::random_vector(8, 42);
  const Vector new_bias = p.b_out + delta;
  m.set_parameter("out_proj.bias", new_bias.data(), {8});
  const Forward after = forward(m, x, x, x);
  ref::Batch expected = ref::to_double(before.output);
  for (Index b = 0; b < 2; ++b)
    for (Index i = 0; i < 3; ++i)
      for (Index c = 0; c < 8; ++c) expected(b, i, c) += delta(c);
  ref::check_close(after.output, expected, ref::kSum, "output");
  CHECK(after.weights.data == before.weights.data);
}

TEST_CASE("load_state_dict loads every entry at once or, on any error, none", "[mha]") {
  const MultiHeadConfig config = make_config(8, 2);
  MultiHeadAttention model(config), source(config);
  source.reset_parameters(9);
  const Tensor3 x = ref::random_tensor(2, 3, 8, 46);
  const auto original = model.state_dict();
  const auto replacement = source.state_dict();

  auto wrong_shape = replacement;
  wrong_shape.back().shape = {5};
  wrong_shape.back().data.resize(5);
  CHECK_THROWS_WITH(model.load_state_dict(wrong_shape),
                    "state_dict['out_proj.bias']: expected shape [8], got [5]");
  auto missing = replacement;
  missing.pop_back();
  CHECK_THROWS_WITH(model.load_state_dict(missing),
                    "state_dict: expected an entry 'out_proj.bias', got none");
  // The other errors are Seq2Seq's too (one match_state_dict): test_seq2seq.cpp checks them.
  const auto after_errors = model.state_dict();
  for (size_t i = 0; i < original.size(); ++i) CHECK(after_errors[i].data == original[i].data);

  // Entries in any order: the loaded model computes what the source does.
  auto reversed = replacement;
  std::reverse(reversed.begin(), reversed.end());
  model.load_state_dict(reversed);
  CHECK(forward(model, x, x, x).output.data == forward(source, x, x, x).output.data);
}

TEST_CASE("A fresh module is initialised reproducibly", "[mha]") {
  const MultiHeadConfig config = make_config(8, 2);
  const Tensor3 x = ref::random_tensor(1, 3, 8, 43);
  const Forward a = forward(MultiHeadAttention(config), x, x, x);
  const Forward b = forward(MultiHeadAttention(config), x, x, x);
  CHECK(a.output.data == b.output.data);
  for (float v : a.output.data) CHECK(std::isfinite(v));
}

TEST_CASE("reset_parameters(seed) is deterministic and depends on the seed", "[mha]") {
  const MultiHeadConfig config = make_config(8, 2);
  const Tensor3 x = ref::random_tensor(2, 3, 8, 44);
  MultiHeadAttention a(config), b(config), c(config);
  load(a, random_params(config, 45));  // state before the reset must not matter
  a.reset_parameters(7);
  b.reset_parameters(7);
  c.reset_parameters(8);
  const Forward fa = forward(a, x, x, x), fb = forward(b, x, x, x), fc = forward(c, x, x, x);
  CHECK(fa.output.data == fb.output.data);
  CHECK(fa.weights.data == fb.weights.data);
  CHECK(fa.output.data != fc.output.data);
}

namespace {

// Reads the columns of the linear map value -> output when every key is the same single one
// (weights are 1): with B = dim batch rows, value[b] = e_b, output[b] = M e_b + bias terms.
// Row dim of the result is a zero value, which gives the bias terms alone.
Matrix probe_value_path(const MultiHeadAttention& m, Index value_dim) {
  const Index E = m.config().embed_dim;
  const Index kdim = m.config().kdim ? m.config().kdim : E;
  const Index B = value_dim + 1;
  const Tensor3 query = ref::random_tensor(B, 1, E, 46);
  const Tensor3 key = ref::random_tensor(B, 1, kdim, 47);
  Tensor3 value(B, 1, value_dim);
  for (Index b = 0; b < value_dim; ++b) value.at(b, 0, b) = 1.0f;
  const Forward f = forward(m, query, key, value);
  Matrix columns(B, E);  // row b = M e_b (+ biases); row value_dim = biases
  for (Index b = 0; b < B; ++b)
    for (Index c = 0; c < E; ++c) columns(b, c) = f.output.at(b, 0, c);
  return columns;
}

void check_uniform_draw(const Matrix& w, double bound) {
  CAPTURE(bound, w.minCoeff(), w.maxCoeff());
  CHECK(w.cwiseAbs().maxCoeff() <= bound * (1 + 1e-6));
  // A U(-bound, bound) sample of >= 64 values reaches past 0.8 bound with probability
  // 1 - 0.8^64 > 0.999999: a smaller bound (or all zeros) would fail here.
  CHECK(w.cwiseAbs().maxCoeff() > 0.8 * bound);
  CHECK(w.minCoeff() < 0.0f);
  CHECK(w.maxCoeff() > 0.0f);
}

}  // namespace

TEST_CASE("reset_parameters draws PyTorch's Xavier-uniform packed in_proj and zero biases",
          "[mha]") {
  // Packed in_proj_weight [3E, E]: xavier_uniform_ bound sqrt(6 / (E + 3E)). With out_proj set
  // to the identity, the value path reads out W_v (rows 2E..3E of in_proj_weight).
  const Index E = 8;
  MultiHeadAttention m(make_config(E, 2));
  m.reset_parameters(11);
  const Matrix eye = Matrix::Identity(E, E);
  m.set_parameter("out_proj.weight", eye.data(), {E, E});
  const Matrix probe = probe_value_path(m, E);
  check_uniform_draw(probe.topRows(E), std::sqrt(6.0 / (4.0 * E)));
  for (Index c = 0; c < E; ++c) CHECK(probe(E, c) == 0.0f);  // b_v + b_out = 0
}

TEST_CASE("reset_parameters draws separate projections and out_proj in their bounds", "[mha]") {
  // kdim != E makes the projections separate: v_proj_weight [E, vdim] has Xavier bound
  // sqrt(6 / (E + vdim)); out_proj.weight is U(-1/sqrt(E), 1/sqrt(E)).
  const Index E = 8, kdim = 3, vdim = 8;
  MultiHeadAttention m(make_config(E, 2, kdim, vdim));
  m.reset_parameters(12);
  const Matrix eye = Matrix::Identity(E, E);
  MultiHeadAttention v_probe = m;
  v_probe.set_parameter("out_proj.weight", eye.data(), {E, E});
  const Matrix w_v = probe_value_path(v_probe, vdim);
  check_uniform_draw(w_v.topRows(vdim), std::sqrt(6.0 / (E + vdim)));

  MultiHeadAttention out_probe = m;
  out_probe.set_parameter("v_proj_weight", eye.data(), {E, vdim});
  const Matrix w_out = probe_value_path(out_probe, vdim);
  check_uniform_draw(w_out.topRows(vdim), 1.0 / std::sqrt(static_cast<double>(E)));
  for (Index c = 0; c < E; ++c) CHECK(w_out(vdim, c) == 0.0f);
}
