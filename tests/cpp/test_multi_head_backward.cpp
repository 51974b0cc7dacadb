// MultiHeadAttention::backward against central differences of the double-precision reference
// of torch.nn.MultiheadAttention: input gradients and every parameter's, under its state-dict
// name, with packed and separate projections, bias on and off, key padding and attn_mask.

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "attn/multi_head_attention.hpp"
#include "gradient_reference.hpp"
#include "multi_head_support.hpp"

using attn::Index;
using attn::MultiHeadAttention;
using attn::MultiHeadConfig;
using attn::MultiHeadForwardOptions;
using attn::Tensor3;
using mha_support::make_config;

namespace {

std::vector<double> concat(std::initializer_list<const std::vector<double>*> parts) {
  std::vector<double> out;
  for (const auto* part : parts) out.insert(out.end(), part->begin(), part->end());
  return out;
}

// Expected d_parameters by state-dict name, each by differencing the reference's loss.
std::map<std::string, std::vector<double>> parameter_gradients(
    const MultiHeadConfig& config, const ref::MultiHeadParams& params,
    const std::function<double(const ref::MultiHeadParams&)>& loss) {
  auto of_mat = [&](ref::Mat ref::MultiHeadParams::*member) {
    return ref::numeric_gradient<ref::Mat>(params.*member,
                                           [&](const ref::Mat& m) {
                                             ref::MultiHeadParams changed = params;
                                             changed.*member = m;
                                             return loss(changed);
                                           })
        .v;
  };
  auto of_bias = [&](std::vector<double> ref::MultiHeadParams::*member) {
    return ref::numeric_gradient(params.*member, [&](const std::vector<double>& b) {
      ref::MultiHeadParams changed = params;
      changed.*member = b;
      return loss(changed);
    });
  };
  using P = ref::MultiHeadParams;
  const auto w_q = of_mat(&P::w_q), w_k = of_mat(&P::w_k), w_v = of_mat(&P::w_v);
  std::map<std::string, std::vector<double>> expected;
  const bool packed = config.kdim == 0 && config.vdim == 0;
  if (packed) {
    expected["in_proj_weight"] = concat({&w_q, &w_k, &w_v});
  } else {
    expected["q_proj_weight"] = w_q;
    expected["k_proj_weight"] = w_k;
    expected["v_proj_weight"] = w_v;
  }
  expected["out_proj.weight"] = of_mat(&P::w_out);
  if (config.bias) {
    const auto b_q = of_bias(&P::b_q), b_k = of_bias(&P::b_k), b_v = of_bias(&P::b_v);
    expected["in_proj_bias"] = concat({&b_q, &b_k, &b_v});
    expected["out_proj.bias"] = of_bias(&P::b_out);
  }
  return expected;
}

void check_backward(const MultiHeadConfig& config, Index batch, Index nq, Index nk,
                    const MultiHeadForwardOptions& options, uint32_t seed) {
  const Index e = config.embed_dim;
  const Index kdim = config.kdim ? config.kdim : e, vdim = config.vdim ? config.vdim : e;
  const mha_support::Params params = mha_support::random_params(config, seed);
  MultiHeadAttention module(config);
  mha_support::load(module, params);
  const Tensor3 query = ref::random_tensor(batch, nq, e, seed + 10);
  const Tensor3 key = ref::random_tensor(batch, nk, kdim, seed + 11);
  const Tensor3 value = ref::random_tensor(batch, nk, vdim, seed + 12);
  const Tensor3 grad_output = ref::random_tensor(batch, nq, e, seed + 13);
  const auto got = module.backward(query, key, value, grad_output, options);

  const ref::Batch q = ref::to_double(query), k = ref::to_double(key), v = ref::to_double(value);
  const ref::Batch grad = ref::to_double(grad_output);
  const Index heads = config.num_heads;
  auto loss = [&](const ref::Batch& q_, const ref::Batch& k_, const ref::Batch& v_,
                  const ref::MultiHeadParams& p) {
    return ref::dot(ref::multi_head_attention(q_, k_, v_, p, heads, options.mask).output, grad);
  };
  using ref::Batch;
  ref::check_gradient(
      got.d_query,
      ref::numeric_gradient<Batch>(q, [&](const Batch& x) { return loss(x, k, v, params.ref); }),
      "d_query");
  ref::check_gradient(
      got.d_key,
      ref::numeric_gradient<Batch>(k, [&](const Batch& x) { return loss(q, x, v, params.ref); }),
      "d_key");
  ref::check_gradient(
      got.d_value,
      ref::numeric_gradient<Batch>(v, [&](const Batch& x) { return loss(q, k, x, params.ref); }),
      "d_value");

  const auto expected = parameter_gradients(
      config, params.ref, [&](const ref::MultiHeadParams& p) { return loss(q, k, v, p); });
  REQUIRE(got.d_parameters.size() == expected.size());
  for (const auto& [name, shape, data] : got.d_parameters) {
    CAPTURE(name);
    REQUIRE(expected.count(name) == 1);
    REQUIRE(data.size() == expected.at(name).size());
    ref::check_gradient(data.data(), expected.at(name), shape, name);
  }
}

}  // namespace

TEST_CASE("MultiHeadAttention backward: packed projections, self- and cross-attention",
          "[mha][backward]") {
  check_backward(make_config(8, 2), 2, 5, 5, {}, 10);
  check_backward(make_config(6, 3), 2, 4, 7, {}, 20);
  check_backward(make_config(4, 1), 1, 1, 1, {}, 30);
}

TEST_CASE("MultiHeadAttention backward: separate projections and no bias", "[mha][backward]") {
  check_backward(make_config(6, 2, 5, 3), 2, 3, 4, {}, 40);
  check_backward(make_config(8, 4, 0, 0, false), 1, 5, 6, {}, 50);
  check_backward(make_config(6, 3, 4, 7, false), 2, 3, 2, {}, 60);
}

TEST_CASE("MultiHeadAttention backward honours key padding and attn_mask", "[mha][backward]") {
  MultiHeadForwardOptions padded;
  const std::vector<uint8_t> padding = {0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1};  // no row all padded
  padded.mask.key_padding = padding.data();
  check_backward(make_config(8, 2), 2, 4, 6, padded, 70);

  MultiHeadForwardOptions masked;
  const std::vector<uint8_t> bits = {0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0};  // [3, 4]
  masked.mask.bool_mask = bits.data();
  masked.mask.bool_mask_batch = 1;
  check_backward(make_config(6, 2), 2, 3, 4, masked, 80);

  MultiHeadForwardOptions causal;
  causal.mask.causal = true;
  check_backward(make_config(6, 3), 2, 5, 5, causal, 90);
}

TEST_CASE("MultiHeadAttention state_dict returns what was loaded, by name", "[mha]") {
  const MultiHeadConfig config = make_config(6, 2, 4, 5);
  const mha_support::Params params = mha_support::random_params(config, 100);
  MultiHeadAttention module(config);
  mha_support::load(module, params);
  const auto state = module.state_dict();
  const auto specs = module.parameters();
  REQUIRE(state.size() == specs.size());
  for (size_t i = 0; i < state.size(); ++i) {
    CHECK(state[i].name == specs[i].name);
    CHECK(state[i].shape == specs[i].shape);
    CHECK(state[i].data == mha_support::state_entry(params, state[i].name));
  }
}

TEST_CASE("MultiHeadAttention backward rejects a grad_output of the wrong shape", "[mha]") {
  const MultiHeadAttention module(make_config(4, 2));
  const Tensor3 x = ref::random_tensor(2, 3, 4, 110);
  CHECK_THROWS_WITH(module.backward(x, x, x, Tensor3(2, 3, 5)),
                    "grad_output: expected shape [2, 3, 4], got [2, 3, 5]");
}
