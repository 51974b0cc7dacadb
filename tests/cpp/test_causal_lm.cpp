// CausalLM against GPT-2 and Llama written out in PyTorch as Hugging Face's modelling code
// defines them: tests/fixtures/causal_lm/causal_lm.json, written by scripts/fixtures/causal_lm.py
// (float64 references from float32 weights in Hugging Face's state-dict names and layouts; the
// fixtures' rule |got - want| <= 2e-4 * max|want| per tensor). Then what the fixtures cannot
// show: the same bits on every thread count, and the errors.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <numeric>
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
      LMCase s(c);
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

// A head's output enters the residual stream only through its rows (Conv1D, [in, out]) or
// columns (nn.Linear, [out, in]) of the output projection, so masking the head by m is the same
// model as those weights times m: an independent statement of what head_mask does.
TEST_CASE("CausalLM head_mask scales a head's weights, as scaling its output projection does",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      const attn::CausalLMConfig& config = s.model.config();
      const Index layers = config.num_layers, heads = config.num_heads;
      const Index head_dim = config.hidden_size / heads;
      const std::vector<int32_t> inputs = s.inputs();
      const attn::TokenBatch batch{inputs.data(), s.shape[0], s.shape[1] - 1};
      const auto plain = s.model.forward(batch);
      const auto ones = s.model.forward(batch, false, std::vector<float>(layers * heads, 1.0f));
      CHECK(ones.logits.data == plain.logits.data);

      // Layer 0's last head halved, layer layers - 1's first head ablated.
      std::vector<float> mask(layers * heads, 1.0f);
      mask[heads - 1] = 0.5f;
      mask[(layers - 1) * heads] = 0.0f;
      const auto masked = s.model.forward(batch, true, mask);

      std::vector<attn::NamedTensor> scaled = s.model.state_dict();
      const bool gpt2 = config.format == attn::CheckpointFormat::Gpt2;
      for (Index l = 0; l < layers; ++l) {
        const std::string name =
            gpt2 ? "transformer.h." + std::to_string(l) + ".attn.c_proj.weight"
                 : "model.layers." + std::to_string(l) + ".self_attn.o_proj.weight";
        auto entry = std::find_if(scaled.begin(), scaled.end(),
                                  [&](const attn::NamedTensor& t) { return t.name == name; });
        REQUIRE(entry != scaled.end());
        const Index width = entry->shape[1];
        for (Index h = 0; h < heads; ++h) {
          for (Index i = h * head_dim; i < (h + 1) * head_dim; ++i) {
            for (Index o = 0; o < config.hidden_size; ++o) {
              entry->data[static_cast<size_t>(gpt2 ? i * width + o : o * width + i)] *=
                  mask[static_cast<size_t>(l * heads + h)];
            }
          }
        }
      }
      attn::CausalLM reference(config);
      reference.load_state_dict(scaled);
      const auto want = reference.forward(batch, true);
      REQUIRE(masked.logits.data.size() == want.logits.data.size());
      for (size_t i = 0; i < want.logits.data.size(); ++i) {
        CHECK(masked.logits.data[i] == Approx(want.logits.data[i]).margin(1e-5));
      }
      // The maps: the scaled model's, each head's times its factor.
      for (Index l = 0; l < layers; ++l) {
        const attn::Tensor3& got = masked.attention[static_cast<size_t>(l)];
        const attn::Tensor3& unmasked = want.attention[static_cast<size_t>(l)];
        const Index map = got.rows * got.cols;
        for (size_t i = 0; i < got.data.size(); ++i) {
          const Index head = (static_cast<Index>(i) / map) % heads;
          CHECK(
              got.data[i] ==
              Approx(unmasked.data[i] * mask[static_cast<size_t>(l * heads + head)]).margin(1e-6));
        }
      }
    }
  }
}

// Dropout's mask depends on the call's stream only, never on the parameters' values: a fresh
// model with perturbed weights, on its first call, drops what the first call of the unperturbed
// one dropped, so central differences of that loss check the gradients with dropout.
TEST_CASE("CausalLM dropout: training calls drop reproducibly, forward never, gradients exact",
          "[causal_lm]") {
  for (const bool llama : {false, true}) {
    DYNAMIC_SECTION((llama ? "llama" : "gpt2")) {
      attn::CausalLMConfig config =
          llama ? attn::CausalLMConfig::llama() : attn::CausalLMConfig::gpt2();
      config.vocab_size = 12;
      config.hidden_size = 16;
      config.num_layers = 2;
      config.num_heads = 2;
      config.intermediate_size = 24;
      config.max_positions = llama ? 0 : 8;
      config.seed = 5;
      attn::CausalLMConfig plain_config = config;
      config.dropout = 0.3f;
      const std::vector<int32_t> tokens{1, 4, 7, 2, 9, 11, 3, 0, 5, 5, 8, 2, 6, 10};
      const attn::TokenBatch batch{tokens.data(), 2, 7}, inputs{tokens.data(), 1, 6};

      attn::CausalLM model(config), twin(config), plain(plain_config);
      CHECK(model.forward(inputs).logits.data == plain.forward(inputs).logits.data);
      const attn::CausalLMLoss first = model.loss_and_gradients(batch);
      const attn::CausalLMLoss again = twin.loss_and_gradients(batch);
      CHECK(first.loss == again.loss);
      CHECK(first.gradients[2].data == again.gradients[2].data);
      CHECK(first.loss != plain.loss_and_gradients(batch).loss);
      CHECK(model.loss_and_gradients(batch).loss != first.loss);  // a fresh stream

      // In gradients' order: a tied model's lm_head.weight (listed last) left out.
      std::vector<attn::NamedTensor> state = twin.state_dict();
      state.resize(first.gradients.size());
      const auto loss_with = [&](size_t tensor, size_t entry, float delta) {
        std::vector<attn::NamedTensor> moved = state;
        moved[tensor].data[entry] += delta;
        attn::CausalLM fresh(config);
        fresh.load_state_dict(moved);
        return static_cast<double>(fresh.loss_and_gradients(batch).loss);
      };
      const float eps = 1e-2f;
      for (size_t tensor = 0; tensor < first.gradients.size(); tensor += 3) {
        const std::vector<float>& g = first.gradients[tensor].data;
        const size_t entry = g.size() / 2;
        CAPTURE(first.gradients[tensor].name);
        const double numeric = (loss_with(tensor, entry, eps) - loss_with(tensor, entry, -eps)) /
                               (2.0 * static_cast<double>(eps));
        CHECK(g[entry] == Approx(numeric).margin(2e-3).epsilon(0.03));
      }
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

namespace {

// Greedy continuation by re-running the whole prefix through forward() at every step.
std::vector<int32_t> rerun_greedy(const attn::CausalLM& model, std::vector<int32_t> tokens,
                                  Index batch, Index steps, Index new_tokens,
                                  const std::vector<float>& head_mask = {}) {
  const Index vocab = model.config().vocab_size;
  for (Index n = 0; n < new_tokens; ++n) {
    const auto out = model.forward({tokens.data(), batch, steps}, false, head_mask);
    std::vector<int32_t> next;
    for (Index b = 0; b < batch; ++b) {
      next.insert(next.end(), tokens.begin() + b * steps, tokens.begin() + (b + 1) * steps);
      const float* row = out.logits.data.data() + ((b + 1) * steps - 1) * vocab;
      next.push_back(static_cast<int32_t>(std::max_element(row, row + vocab) - row));
    }
    tokens = std::move(next);
    ++steps;
  }
  return tokens;
}

attn::GenerateOptions greedy(Index new_tokens) {
  attn::GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.temperature = 0.0f;
  return options;
}

}  // namespace

TEST_CASE("CausalLM's greedy generation through its KV caches continues the fixture's prompts",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      const json& g = c.options.at("generate");
      const std::vector<int32_t> prompt = fixtures::data_of<int32_t>(g.at("prompt"));
      const Index batch = fixtures::shape_of(g.at("prompt"))[0];
      const Index steps = fixtures::shape_of(g.at("prompt"))[1];
      const Index new_tokens = g.at("max_new_tokens").get<Index>();
      const auto want = fixtures::data_of<int32_t>(c.expected.at("generate").at("tokens"));
      const attn::Generation got =
          s.model.generate({prompt.data(), batch, steps}, greedy(new_tokens));
      CHECK(got.steps == steps + new_tokens);
      CHECK(got.tokens == want);
      CHECK(got.lengths == std::vector<int32_t>(static_cast<size_t>(batch),
                                                static_cast<int32_t>(steps + new_tokens)));
      CHECK(rerun_greedy(s.model, prompt, batch, steps, new_tokens) == want);
    }
  }
}

TEST_CASE("generation with a head mask equals re-running forward with that mask",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      const LMCase s(c);
      const attn::CausalLMConfig& config = s.model.config();
      const std::vector<int32_t> prompt = fixtures::data_of<int32_t>(c.inputs.at("tokens"));
      const Index batch = 2, steps = 7, new_tokens = 5;
      // The first head ablated, the last halved (one head: halved only).
      std::vector<float> mask(static_cast<size_t>(config.num_layers * config.num_heads), 1.0f);
      mask.front() = mask.size() > 1 ? 0.0f : 0.5f;
      mask.back() = 0.5f;
      attn::GenerateOptions options = greedy(new_tokens);
      options.head_mask = mask;
      const attn::Generation got = s.model.generate({prompt.data(), batch, steps}, options);
      const std::vector<int32_t> masked =
          rerun_greedy(s.model, prompt, batch, steps, new_tokens, mask);
      CHECK(got.tokens == masked);
      // The mask reaches the logits the choices are made from.
      const attn::TokenBatch tokens{got.tokens.data(), batch, steps + new_tokens};
      CHECK(s.model.forward(tokens, false, mask).logits.data !=
            s.model.forward(tokens).logits.data);
    }
  }
}

TEST_CASE("with a window, cached generation equals re-running the windowed forward",
          "[causal_lm][fixtures]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    if (c.inputs.at("config").at("positions") == "learned") continue;  // 12 positions only
    DYNAMIC_SECTION(c.name) {
      attn::CausalLMConfig config = config_of(c.inputs.at("config"));
      config.window = 3;
      attn::CausalLM model(config);
      model.load_state_dict(entries_of(c.inputs.at("state_dict")));
      const std::vector<int32_t> prompt = fixtures::data_of<int32_t>(c.inputs.at("tokens"));
      const Index batch = 2, steps = 7, new_tokens = 9;
      const attn::Generation got =
          model.generate({prompt.data(), batch, steps}, greedy(new_tokens));
      CHECK(got.tokens == rerun_greedy(model, prompt, batch, steps, new_tokens));
    }
  }
}

TEST_CASE("sampled tokens follow the tempered softmax within top-k and top-p, and the seed",
          "[causal_lm][sampling]") {
  const auto cases = fixtures::load("causal_lm/causal_lm.json");
  const LMCase s(cases[1]);  // llama: 13 tokens
  const Index vocab = s.model.config().vocab_size, rows = 4000;
  const std::vector<int32_t> one{8, 4, 8};
  std::vector<int32_t> prompt;
  for (Index b = 0; b < rows; ++b) prompt.insert(prompt.end(), one.begin(), one.end());
  const auto out = s.model.forward({one.data(), 1, 3});
  const float* logits = out.logits.data.data() + 2 * vocab;
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });

  struct Setting {
    float temperature;
    Index top_k;
    float top_p;
  };
  for (const Setting& setting : {Setting{1.0f, 0, 1.0f}, Setting{0.7f, 4, 1.0f},
                                 Setting{1.5f, 0, 0.6f}, Setting{2.0f, 6, 0.8f}}) {
    // The reference distribution in double: tempered softmax over the top-k, then the nucleus.
    std::vector<double> p(static_cast<size_t>(vocab), 0.0);
    const size_t k = setting.top_k ? static_cast<size_t>(setting.top_k) : order.size();
    double total = 0.0;
    for (size_t i = 0; i < k; ++i) {
      p[static_cast<size_t>(order[i])] =
          std::exp((double{logits[order[i]]} - logits[order[0]]) / setting.temperature);
      total += p[static_cast<size_t>(order[i])];
    }
    double before = 0.0, kept = 0.0;
    for (size_t i = 0; i < k; ++i) {
      double& q = p[static_cast<size_t>(order[i])];
      if (before >= setting.top_p * total) q = 0.0;
      before += q > 0.0 ? q : 0.0;
      kept += q;
    }
    attn::GenerateOptions options;
    options.temperature = setting.temperature;
    options.top_k = setting.top_k;
    options.top_p = setting.top_p;
    options.seed = 42;
    const attn::Generation got = s.model.generate({prompt.data(), rows, 3}, options);
    std::vector<double> counts(static_cast<size_t>(vocab), 0.0);
    for (Index b = 0; b < rows; ++b) counts[static_cast<size_t>(got.tokens[b * 4 + 3])] += 1.0;
    for (Index t = 0; t < vocab; ++t) {
      const double want = p[static_cast<size_t>(t)] / kept;
      const double sigma = std::sqrt(want * (1.0 - want) / static_cast<double>(rows));
      INFO("temperature " << setting.temperature << " top_k " << setting.top_k << " top_p "
                          << setting.top_p << " token " << t);
      if (want == 0.0) {
        CHECK(counts[static_cast<size_t>(t)] == 0.0);  // outside top-k or top-p: never
      } else {
        CHECK(std::abs(counts[static_cast<size_t>(t)] / rows - want) <= 4.5 * sigma + 1e-9);
      }
    }
    CHECK(s.model.generate({prompt.data(), rows, 3}, options).tokens == got.tokens);
  }

  attn::GenerateOptions options;
  options.max_new_tokens = 5;
  options.seed = 1;
  const attn::Generation first = s.model.generate({one.data(), 1, 3}, options);
  options.seed = 2;
  std::vector<std::vector<int32_t>> others;
  for (uint64_t seed = 2; seed < 6; ++seed) {
    options.seed = seed;
    others.push_back(s.model.generate({one.data(), 1, 3}, options).tokens);
  }
  CHECK(
      std::any_of(others.begin(), others.end(), [&](const auto& t) { return t != first.tokens; }));
  options.top_k = 1;  // one token left: greedy
  CHECK(s.model.generate({one.data(), 1, 3}, options).tokens ==
        s.model.generate({one.data(), 1, 3}, greedy(5)).tokens);
}

TEST_CASE("a row ends at its first eos and the rest of it is eos", "[causal_lm][sampling]") {
  const auto cases = fixtures::load("causal_lm/causal_lm.json");
  const LMCase s(cases[1]);
  const std::vector<int32_t> prompt{8, 4, 8, 2, 10, 3};
  const attn::Generation plain = s.model.generate({prompt.data(), 2, 3}, greedy(4));
  attn::GenerateOptions options = greedy(4);
  options.eos = plain.tokens[4];  // row 0's second new token
  const attn::Generation ended = s.model.generate({prompt.data(), 2, 3}, options);
  CHECK(ended.lengths[0] == 5);
  const std::vector<int32_t> row0(ended.tokens.begin(), ended.tokens.begin() + 7);
  CHECK(row0 ==
        std::vector<int32_t>{8, 4, 8, plain.tokens[3], plain.tokens[4], options.eos, options.eos});
}

TEST_CASE("CausalLM's loss and gradients are the same bits on 1, 2, 3 and 4 threads",
          "[causal_lm][threads]") {
  for (const auto& c : fixtures::load("causal_lm/causal_lm.json")) {
    DYNAMIC_SECTION(c.name) {
      LMCase s(c);
      attn::set_threads(1);
      const attn::CausalLMLoss one = s.model.loss_and_gradients(s.all(), s.pad);
      for (int threads : {2, 3, 4}) {
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
  REQUIRE_THROWS_WITH(attn::CausalLM(with([](auto& c) { c.dropout = 1.0f; })), Contains("dropout"));
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
  const std::vector<int32_t> good{1, 2, 3};
  REQUIRE_THROWS_WITH(model.forward({good.data(), 1, 3}, false, {1.0f}), Contains("head_mask"));
  std::vector<float> infinite(config.num_layers * config.num_heads, 1.0f);
  infinite.back() = INFINITY;
  REQUIRE_THROWS_WITH(model.forward({good.data(), 1, 3}, false, infinite),
                      Contains("head_mask") && Contains("non-finite"));
  attn::GenerateOptions masked = greedy(1);
  masked.head_mask = {1.0f};
  REQUIRE_THROWS_WITH(model.generate({good.data(), 1, 3}, masked), Contains("head_mask"));
  REQUIRE_THROWS_WITH(model.loss_and_gradients({bad.data(), 3, 1}), Contains("T + 1"));
  attn::AdamWOptions options;
  options.beta2 = 1.0f;
  REQUIRE_THROWS_WITH(model.train_step({good.data(), 1, 3}, options), Contains("beta2"));
  CHECK(model.optimizer_steps() == 0);

  auto generate_with = [&](auto change) {
    attn::GenerateOptions o;
    change(o);
    return model.generate({good.data(), 1, 3}, o);
  };
  REQUIRE_THROWS_WITH(generate_with([](auto& o) { o.temperature = -1.0f; }),
                      Contains("temperature"));
  REQUIRE_THROWS_WITH(generate_with([](auto& o) { o.top_p = 0.0f; }), Contains("top_p"));
  REQUIRE_THROWS_WITH(generate_with([](auto& o) { o.top_k = -1; }), Contains("top_k"));
  REQUIRE_THROWS_WITH(generate_with([](auto& o) { o.eos = 10; }), Contains("eos"));
  REQUIRE_THROWS_WITH(generate_with([](auto& o) { o.max_new_tokens = -1; }),
                      Contains("max_new_tokens"));
  REQUIRE_THROWS_WITH(model.generate({bad.data(), 1, 3}, {}), Contains("prompt"));
  attn::CausalLMConfig learned = attn::CausalLMConfig::gpt2();
  learned.vocab_size = 10;
  learned.hidden_size = 8;
  learned.max_positions = 6;
  const attn::CausalLM short_model(learned);
  attn::GenerateOptions too_long;
  too_long.max_new_tokens = 4;
  REQUIRE_THROWS_WITH(short_model.generate({good.data(), 1, 3}, too_long),
                      Contains("max_new_tokens") && Contains("max_positions 6"));

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
