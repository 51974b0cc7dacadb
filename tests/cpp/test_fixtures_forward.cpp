// The forward outputs of the PyTorch gradient fixtures (tests/fixtures/gradients, written by
// scripts/fixtures/gradients.py) against the forward API: it checks that the fixtures describe
// what our functions compute (options, masks, state-dict names) before any backward reads them.

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/multi_head_attention.hpp"
#include "fixtures.hpp"

TEST_CASE("scaled dot-product attention matches the PyTorch fixtures' outputs", "[fixtures]") {
  for (const auto& c : fixtures::load("gradients/sdpa.json")) {
    DYNAMIC_SECTION(c.name) {
      const fixtures::AttentionCase a(c);
      const auto result = attn::scaled_dot_product_attention(a.q, a.k, a.v, a.options);
      fixtures::check(result.output, c.expected["output"], c.expected, "output");
    }
  }
}

TEST_CASE("additive attention matches the PyTorch fixtures' outputs", "[fixtures]") {
  for (const auto& c : fixtures::load("gradients/additive.json")) {
    DYNAMIC_SECTION(c.name) {
      const fixtures::AttentionCase a(c);
      const auto result = attn::additive_attention(a.q, a.k, a.v, a.params, a.options);
      fixtures::check(result.output, c.expected["output"], c.expected, "output");
    }
  }
}

TEST_CASE("multi-head attention matches the PyTorch fixtures' outputs", "[fixtures]") {
  for (const auto& c : fixtures::load("gradients/mha.json")) {
    DYNAMIC_SECTION(c.name) {
      const fixtures::MultiHeadCase m(c);
      // The fixture holds exactly the parameters this configuration has, under the same names.
      std::vector<std::string> names, fixture_names;
      for (const auto& spec : m.mha.parameters()) names.push_back(spec.name);
      for (const auto& item : c.inputs["stateDict"].items()) fixture_names.push_back(item.key());
      std::sort(names.begin(), names.end());
      std::sort(fixture_names.begin(), fixture_names.end());
      CHECK(fixture_names == names);

      attn::Tensor3 output(m.query.batch, m.query.rows, m.mha.config().embed_dim);
      m.mha.forward(m.query.view(), m.key.view(), m.value.view(), m.options, output.view());
      fixtures::check(output, c.expected["output"], c.expected, "output");
    }
  }
}
