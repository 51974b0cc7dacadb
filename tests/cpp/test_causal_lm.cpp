// CausalLM against GPT-2 and Llama written out in PyTorch as Hugging Face's modelling code
// defines them: tests/fixtures/causal_lm/causal_lm.json, written by scripts/fixtures/causal_lm.py
// (float64 references from float32 weights in Hugging Face's state-dict names and layouts; the
// fixtures' rule |got - want| <= 2e-4 * max|want| per tensor). Then what the fixtures cannot
// show: the same bits on every thread count, and the errors.

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "attn/causal_lm.hpp"
#include "attn/threads.hpp"
#include "fixtures.hpp"

using attn::Index;
using Catch::Matchers::Contains;
using fixtures::json;

namespace {

attn::CausalLMConfig config_of(const json& c) {
  attn::CausalLMConfig config =
      c.at("format") == "llama" ? attn::CausalLMConfig::llama() : attn::CausalLMConfig::gpt2();
  config.vocab_size = c.at("vocab_size").get<Index>();
  config.hidden_size = c.at("hidden_size").get<Index>();
  config.num_layers = c.at("num_layers").get<Index>();
  config.num_heads = c.at("num_heads").get<Index>();
  config.num_kv_heads = c.at("num_kv_heads").get<Index>();
  config.intermediate_size = c.at("intermediate_size").get<Index>();
  config.max_positions = c.at("max_positions").get<Index>();
  const std::string positions = c.at("positions");
  config.positions = positions == "learned"  ? attn::PositionKind::Learned
                     : positions == "rotary" ? attn::PositionKind::Rotary
                                             : attn::PositionKind::None;
  if (!c.at("rotary_base").is_null()) config.rotary_base = c.at("rotary_base").get<float>();
  config.norm = c.at("norm") == "rms" ? attn::NormKind::Rms : attn::NormKind::Layer;
  config.norm_eps = c.at("norm_eps").get<float>();
  if (c.at("mlp") == "swiglu") config.mlp = attn::MlpKind::SwiGlu;
  if (c.at("mlp") == "gelu") config.mlp = attn::MlpKind::Gelu;
  config.bias = c.at("bias").get<bool>();
  config.tie_embeddings = c.at("tie_embeddings").get<bool>();
  return config;
}

std::vector<attn::NamedTensor> entries_of(const json& state_dict) {
  std::vector<attn::NamedTensor> entries;
  for (const auto& [name, t] : state_dict.items()) {
    entries.push_back({name, fixtures::shape_of(t), fixtures::data_of<float>(t)});
  }
  return entries;
}

// A fixture case's model with the fixture's weights, and its tokens.
struct LMCase {
  explicit LMCase(const fixtures::Case& c)
      : model(config_of(c.inputs.at("config"))),
        tokens(fixtures::data_of<int32_t>(c.inputs.at("tokens"))),
        shape(fixtures::shape_of(c.inputs.at("tokens"))),
        pad(c.inputs.at("config").at("pad").is_null()
                ? -1
                : c.inputs.at("config").at("pad").get<int>()) {
    model.load_state_dict(entries_of(c.inputs.at("state_dict")));
  }
  attn::TokenBatch all() const { return {tokens.data(), shape[0], shape[1]}; }
  // tokens[:, :T], the forward's inputs.
  std::vector<int32_t> inputs() const {
    std::vector<int32_t> out;
    for (Index b = 0; b < shape[0]; ++b) {
      out.insert(out.end(), tokens.begin() + b * shape[1], tokens.begin() + (b + 1) * shape[1] - 1);
    }
    return out;
  }

  attn::CausalLM model;
  std::vector<int32_t> tokens;
  std::vector<Index> shape;
  int32_t pad;
};

void check_named(const std::vector<attn::NamedTensor>& got, const json& want,
                 const json& case_expected, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (const attn::NamedTensor& t : got) {
    fixtures::check(t.data.data(), t.shape, want.at(t.name), case_expected, what + " " + t.name);
  }
}

}  // namespace

TEST_CASE("CausalLM logits, attention maps, loss and gradients match GPT-2 and Llama in PyTorch",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      const std::vector<int32_t> inputs = s.inputs();
      const auto out = s.model.forward({inputs.data(), s.shape[0], s.shape[1] - 1}, true);
      fixtures::check(out.logits, c.expected.at("logits"), c.expected, "logits");
      const json& maps = c.expected.at("attentions");
      REQUIRE(out.attention.size() == maps.size());
      const Index heads = s.model.config().num_heads;
      for (size_t l = 0; l < maps.size(); ++l) {
        const attn::Tensor3& t = out.attention[l];
        fixtures::check(t.data.data(), {t.batch / heads, heads, t.rows, t.cols}, maps[l], maps[l],
                        "attention of layer " + std::to_string(l));
      }

      const attn::CausalLMLoss loss = s.model.loss_and_gradients(s.all(), s.pad);
      const double want = c.expected.at("loss").get<double>();
      CHECK(std::abs(loss.loss - want) <= 2e-4 * std::abs(want));
      check_named(loss.gradients, c.expected.at("gradients"), c.expected, "gradient of");
    }
  }
}

TEST_CASE("CausalLM lists Hugging Face's names in its order, a tied model's lm_head too",
          "[causal_lm][fixtures]") {
  // fixtures::json sorts an object's keys: the file again, in its own order.
  std::ifstream file(std::string(ATTN_FIXTURE_DIR) + "/causal_lm/causal_lm.json");
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(file);
  size_t index = 0;
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    const auto& state_dict = ordered.at("cases").at(index++).at("inputs").at("state_dict");
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      std::vector<std::string> want, got;
      for (const auto& [name, t] : state_dict.items()) want.push_back(name);
      for (const attn::NamedTensor& t : s.model.state_dict()) got.push_back(t.name);
      CHECK(got == want);
      check_named(s.model.state_dict(), c.inputs.at("state_dict"), c.inputs, "state dict");
    }
  }
}

TEST_CASE("two clipped CausalLM AdamW steps match torch.optim.AdamW after clip_grad_norm_",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      LMCase s(c);
      const json& o = c.options.at("adamw");
      attn::AdamWOptions options;
      options.lr = o.at("lr").get<float>();
      options.beta1 = o.at("betas")[0].get<float>();
      options.beta2 = o.at("betas")[1].get<float>();
      options.eps = o.at("eps").get<float>();
      options.weight_decay = o.at("weight_decay").get<float>();
      options.clip = o.at("clip").get<float>();
      const json& want = c.expected.at("adamw");
      for (int step = 0; step < 2; ++step) {
        const float loss = s.model.train_step(s.all(), options, s.pad);
        const double expected = want.at("losses")[static_cast<size_t>(step)].get<double>();
        CHECK(std::abs(loss - expected) <= 2e-4 * std::abs(expected));
      }
      CHECK(s.model.optimizer_steps() == 2);
      // Entries whose exact gradient is 0 (the key bias of GPT-2's c_attn shifts a whole score
      // row, which the softmax ignores) take Adam steps of up to lr on float rounding: within
      // 3 lr of the reference, the fixture's bound for them.
      const json& zero = c.expected.at("zero_gradient_entries");
      for (const attn::NamedTensor& t : s.model.state_dict()) {
        const json& w = want.at("state_dict").at(t.name);
        if (!zero.contains(t.name)) {
          fixtures::check(t.data.data(), t.shape, w, want, "after two steps: " + t.name);
          continue;
        }
        const auto expected = fixtures::data_of<double>(w);
        const Index first = zero.at(t.name)[0], last = zero.at(t.name)[1];
        for (Index i = 0; i < static_cast<Index>(expected.size()); ++i) {
          const bool free = i >= first && i < last;
          const double bound = free ? 3.0 * options.lr : 2e-4 * fixtures::peak(w);
          INFO(t.name << "[" << i << "]");
          CHECK(std::abs(t.data[static_cast<size_t>(i)] - expected[static_cast<size_t>(i)]) <=
                bound);
        }
      }
    }
  }
}

TEST_CASE("CausalLM's greedy continuation of the fixture's prompts, re-running the prefix",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      const json& g = c.options.at("generate");
      std::vector<int32_t> tokens = fixtures::data_of<int32_t>(g.at("prompt"));
      const Index batch = fixtures::shape_of(g.at("prompt"))[0];
      Index steps = fixtures::shape_of(g.at("prompt"))[1];
      const Index vocab = s.model.config().vocab_size;
      for (int n = 0; n < g.at("max_new_tokens").get<int>(); ++n) {
        const auto out = s.model.forward({tokens.data(), batch, steps});
        std::vector<int32_t> next;
        for (Index b = 0; b < batch; ++b) {
          next.insert(next.end(), tokens.begin() + b * steps, tokens.begin() + (b + 1) * steps);
          const float* row = out.logits.data.data() + ((b + 1) * steps - 1) * vocab;
          next.push_back(static_cast<int32_t>(std::max_element(row, row + vocab) - row));
        }
        tokens = std::move(next);
        ++steps;
      }
      CHECK(tokens == fixtures::data_of<int32_t>(c.expected.at("generate").at("tokens")));
    }
  }
}

TEST_CASE("CausalLM's loss and gradients are the same bits on 1, 2 and 3 threads",
          "[causal_lm][threads]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      attn::set_threads(1);
      const attn::CausalLMLoss one = s.model.loss_and_gradients(s.all(), s.pad);
      for (int threads : {2, 3}) {
        attn::set_threads(threads);
        const attn::CausalLMLoss many = s.model.loss_and_gradients(s.all(), s.pad);
        CHECK(many.loss == one.loss);
        for (size_t i = 0; i < one.gradients.size(); ++i) {
          CHECK(many.gradients[i].data == one.gradients[i].data);
        }
      }
      attn::set_threads(1);
    }
  }
}

TEST_CASE("CausalLM names the config field, token or state-dict entry that does not fit",
          "[causal_lm][errors]") {
  attn::CausalLMConfig config = attn::CausalLMConfig::llama();
  config.vocab_size = 10;
  config.hidden_size = 8;
  config.num_heads = 4;
  config.intermediate_size = 12;

  auto with = [&](auto change) {
    attn::CausalLMConfig c = config;
    change(c);
    return c;
  };
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) { c.num_kv_heads = 3; })),
                      Contains("num_kv_heads") && Contains("got 3"));
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) { c.num_heads = 3; })),
                      Contains("num_heads"));
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) { c.vocab_size = 0; })),
                      Contains("vocab_size"));
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) { c.num_heads = 8; })),  // head_dim 1
                      Contains("even head_dim"));
  REQUIRE_THROWS_WITH(
      attn::CausalLM(with([](auto& c) { c.positions = attn::PositionKind::Learned; })),
      Contains("positions"));
  REQUIRE_THROWS_WITH(
      attn::CausalLM(with([](auto& c) { c.format = attn::CheckpointFormat::Gpt2; })),
      Contains("mlp") && Contains("swiglu"));
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) { c.norm_eps = 0.0f; })),
                      Contains("norm_eps"));
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) {
                        c.format = attn::CheckpointFormat::Gpt2;
                        c.mlp = attn::MlpKind::Gelu;
                        c.positions = attn::PositionKind::Learned;
                        c.max_positions = 0;
                      })),
                      Contains("max_positions"));

  attn::CausalLM model(config);
  const std::vector<int32_t> bad{1, 2, 10};
  REQUIRE_THROWS_WITH(model.forward({bad.data(), 1, 3}), Contains("tokens") && Contains("10"));
  REQUIRE_THROWS_WITH(model.loss_and_gradients({bad.data(), 3, 1}), Contains("T + 1"));
  const std::vector<int32_t> good{1, 2, 3};
  attn::AdamWOptions options;
  options.beta2 = 1.0f;
  REQUIRE_THROWS_WITH(model.train_step({good.data(), 1, 3}, options), Contains("beta2"));
  CHECK(model.optimizer_steps() == 0);

  std::vector<attn::NamedTensor> state = model.state_dict();
  const attn::NamedTensor last = state.back();
  state.pop_back();
  REQUIRE_THROWS_WITH(model.load_state_dict(state), Contains(last.name));
  state.push_back(last);
  state.back().shape = {last.shape[1], last.shape[0]};
  REQUIRE_THROWS_WITH(model.load_state_dict(state), Contains(last.name));
  state.back() = last;
  state.push_back({"model.extra.weight", {1}, {0.0f}});
  REQUIRE_THROWS_WITH(model.load_state_dict(state), Contains("model.extra.weight"));

  attn::CausalLMConfig tied = config;
  tied.tie_embeddings = true;
  attn::CausalLM tied_model(tied);
  std::vector<attn::NamedTensor> tied_state = tied_model.state_dict();
  REQUIRE(tied_state.back().name == "lm_head.weight");
  tied_model.load_state_dict(tied_state);  // the embedding's own values: accepted
  tied_state.back().data[0] += 1.0f;
  REQUIRE_THROWS_WITH(tied_model.load_state_dict(tied_state),
                      Contains("lm_head.weight") && Contains("tied"));
  tied_state.pop_back();
  tied_model.load_state_dict(tied_state);  // a safetensors file leaves it out
}
