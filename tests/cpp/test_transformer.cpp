// The Transformer against d2l 11.7's PyTorch model: tests/fixtures/transformer/transformer.json,
// written by scripts/fixtures/transformer.py (float64 references from float32 weights; the
// fixtures' rule |got - want| <= 2e-4 * max|want| per tensor). Then the properties the fixtures
// cannot show: cached decoding equals the teacher-forced forward over the prefix, dropout's
// streams, and the errors.

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/transformer.hpp"
#include "encoder_decoder_fixtures.hpp"

using attn::Index;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using fixtures::json;

namespace {

attn::TransformerConfig config_of(const json& c) {
  attn::TransformerConfig config;
  config.src_vocab_size = c.at("srcVocabSize").get<Index>();
  config.tgt_vocab_size = c.at("tgtVocabSize").get<Index>();
  config.num_hiddens = c.at("numHiddens").get<Index>();
  config.ffn_num_hiddens = c.at("ffnNumHiddens").get<Index>();
  config.num_heads = c.at("numHeads").get<Index>();
  config.num_blks = c.at("numBlks").get<Index>();
  return config;
}

struct TransformerCase : fixtures::EncoderDecoderCase<attn::Transformer> {
  explicit TransformerCase(const fixtures::Case& c) : EncoderDecoderCase(c, config_of) {}
};

// Per-block maps [B * heads, Tq, Tk] against the fixture's [B, heads, Tq, Tk].
void check_maps(const std::vector<attn::Tensor3>& got, const json& want, Index heads,
                const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const attn::Tensor3& t = got[i];
    fixtures::check(t.data.data(), {t.batch / heads, heads, t.rows, t.cols}, want[i], want[i],
                    what + " block " + std::to_string(i));
  }
}

}  // namespace

TEST_CASE("transformer forward, attention maps, loss and gradients match d2l's PyTorch model",
          "[transformer][fixtures]") {
  for (const auto& c : fixtures::load("transformer/transformer.json")) {
    DYNAMIC_SECTION(c.name) {
      TransformerCase s(c);
      const Index heads = s.model.config().num_heads;
      const auto out = s.model.forward(s.src_batch(), s.lens, s.in_batch());
      fixtures::check(out.logits, c.expected.at("logits"), c.expected, "logits");
      const json& maps = c.expected.at("attention");
      check_maps(out.attention.encoder, maps.at("encoder"), heads, "encoder");
      check_maps(out.attention.decoder_self, maps.at("decoderSelf"), heads, "decoder self");
      check_maps(out.attention.decoder_cross, maps.at("decoderCross"), heads, "decoder cross");

      fixtures::check_loss_and_gradients(s, c);
    }
  }
}

TEST_CASE("two clipped transformer Adam steps match torch.optim.Adam after clip_grad_norm_",
          "[transformer][fixtures]") {
  for (const auto& c : fixtures::load("transformer/transformer.json")) {
    DYNAMIC_SECTION(c.name) {
      TransformerCase s(c);
      fixtures::check_two_clipped_adam_steps(s, c);
    }
  }
}

TEST_CASE("cached greedy translation matches the fixture's decoding up to eos",
          "[transformer][fixtures]") {
  for (const auto& c : fixtures::load("transformer/transformer.json")) {
    DYNAMIC_SECTION(c.name) {
      const TransformerCase s(c);
      const Index heads = s.model.config().num_heads;
      const int32_t eos = c.options.at("eos").get<int32_t>();
      const Index max_len = c.options.at("maxLen").get<Index>();
      const auto got = s.model.translate(s.src_batch(), s.lens,
                                         {c.options.at("bos").get<int32_t>(), eos, max_len});
      const auto tokens = fixtures::data_of<int32_t>(c.expected.at("translationTokens"));
      const json& cross = c.expected.at("translationAttention").at("decoderCross");
      REQUIRE(got.cross_attention.size() == cross.size());
      for (Index b = 0; b < s.batch; ++b) {
        bool done = false;
        for (Index t = 0; t < max_len; ++t) {
          const size_t i = static_cast<size_t>(b * max_len + t);
          INFO("row " << b << ", step " << t);
          CHECK(got.tokens[i] == (done ? eos : tokens[i]));
          for (size_t block = 0; block < cross.size(); ++block) {
            const auto want = fixtures::data_of<double>(cross[block]);
            const double peak = fixtures::peak(cross[block]);
            for (Index h = 0; h < heads; ++h) {
              for (Index j = 0; j < s.src_steps; ++j) {
                const size_t w =
                    static_cast<size_t>(((b * heads + h) * max_len + t) * s.src_steps + j);
                CHECK_THAT(got.cross_attention[block].at(b * heads + h, t, j),
                           WithinAbs(done ? 0.0 : want[w], 2e-4 * peak));
              }
            }
          }
          if (!done && tokens[i] == eos) {
            done = true;
            CHECK(got.lengths[static_cast<size_t>(b)] == t + 1);
          }
        }
        if (!done) CHECK(got.lengths[static_cast<size_t>(b)] == max_len);
      }
    }
  }
}

namespace {

attn::Transformer random_model(uint64_t seed, float dropout = 0.0f) {
  attn::TransformerConfig config;
  config.src_vocab_size = 11;
  config.tgt_vocab_size = 13;
  config.num_hiddens = 16;
  config.ffn_num_hiddens = 24;
  config.num_heads = 4;
  config.num_blks = 2;
  config.dropout = dropout;
  config.seed = seed;
  return attn::Transformer(config);
}

}  // namespace

TEST_CASE("cached decoding gives the tokens and cross-attention of re-running the whole prefix",
          "[transformer]") {
  const attn::Transformer model = random_model(3);
  const std::vector<int32_t> src{3, 4, 5, 6, 7, 1, 9, 2, 8, 10, 4, 3, 2, 1, 1};
  const std::vector<int32_t> lens{5, 3, 0};
  const Index batch = 3, src_steps = 5, max_len = 12, heads = 4;
  const attn::TokenBatch source{src.data(), batch, src_steps};
  // eos outside what the untrained model emits first: every row runs all steps.
  const auto cached = model.translate(source, lens, {0, 12, max_len});
  std::vector<int32_t> prefix(static_cast<size_t>(batch), 0);  // bos
  for (Index t = 0; t < max_len; ++t) {
    const Index steps = t + 1;
    const auto full = model.forward(source, lens, {prefix.data(), batch, steps});
    for (Index b = 0; b < batch; ++b) {
      if (cached.lengths[static_cast<size_t>(b)] <= t) continue;  // finished: eos from here
      Index token = 0;
      float best = -INFINITY;
      for (Index v = 0; v < full.logits.cols; ++v) {
        if (full.logits.at(b, t, v) > best) best = full.logits.at(b, t, v), token = v;
      }
      INFO("row " << b << ", step " << t);
      REQUIRE(cached.tokens[static_cast<size_t>(b * max_len + t)] == token);
      for (size_t block = 0; block < cached.cross_attention.size(); ++block) {
        for (Index h = 0; h < heads; ++h) {
          for (Index j = 0; j < src_steps; ++j) {
            CHECK_THAT(
                cached.cross_attention[block].at(b * heads + h, t, j),
                WithinAbs(full.attention.decoder_cross[block].at(b * heads + h, t, j), 1e-5));
          }
        }
      }
    }
    // The next prefix: the rows so far, then each row's token at step t.
    std::vector<int32_t> longer;
    for (Index b = 0; b < batch; ++b) {
      longer.insert(longer.end(), prefix.begin() + b * steps, prefix.begin() + (b + 1) * steps);
      longer.push_back(cached.tokens[static_cast<size_t>(b * max_len + t)]);
    }
    prefix = std::move(longer);
  }
}

TEST_CASE("transformer dropout draws from the call's seed and only in training", "[transformer]") {
  attn::Transformer model = random_model(5, 0.3f);
  const std::vector<int32_t> src{1, 2, 3, 4, 5, 6}, tgt_in{0, 7, 8, 0, 9, 10},
      tgt_out{7, 8, 1, 9, 10, 1}, lens{3, 2};
  const attn::TokenBatch s{src.data(), 2, 3}, in{tgt_in.data(), 2, 3}, out{tgt_out.data(), 2, 3};
  const auto loss = [&](bool training, uint64_t seed) {
    return model.loss_and_gradients(s, lens, in, out, {1, training, seed}).loss;
  };
  REQUIRE(loss(true, 1) == loss(true, 1));
  REQUIRE(loss(true, 1) != loss(true, 2));
  REQUIRE(loss(false, 1) == loss(false, 2));
  const auto eval = model.forward(s, lens, in);
  REQUIRE(eval.logits.data != model.forward(s, lens, in, {true, 0}).logits.data);
}

TEST_CASE("transformer arguments are checked and named", "[transformer][errors]") {
  attn::TransformerConfig config;
  config.src_vocab_size = 5;
  config.tgt_vocab_size = 5;
  config.num_hiddens = 6;
  config.ffn_num_hiddens = 4;
  config.num_heads = 4;
  REQUIRE_THROWS_WITH(attn::Transformer(config), Contains("num_heads") && Contains("6"));
  config.num_heads = 2;
  config.ffn_num_hiddens = 0;
  REQUIRE_THROWS_WITH(attn::Transformer(config), Contains("ffn_num_hiddens"));
  config.ffn_num_hiddens = 4;
  config.dropout = 1.0f;
  REQUIRE_THROWS_WITH(attn::Transformer(config), Contains("dropout"));
  config.dropout = 0.0f;
  attn::Transformer model(config);

  const std::vector<int32_t> src{1, 2, 3, 4}, bad{1, 2, 7, 4}, lens{2, 2}, long_lens{2, 3};
  const attn::TokenBatch s{src.data(), 2, 2};
  REQUIRE_THROWS_WITH(model.forward({bad.data(), 2, 2}, lens, s),
                      Contains("src") && Contains("[0, 5)") && Contains("7"));
  REQUIRE_THROWS_WITH(model.forward(s, long_lens, s), Contains("src_valid_lens"));
  REQUIRE_THROWS_WITH(model.forward(s, lens, {src.data(), 1, 4}), Contains("tgt_input"));
  REQUIRE_THROWS_WITH(model.translate(s, lens, {0, 9, 3}), Contains("eos"));
  REQUIRE_THROWS_WITH(model.translate(s, lens, {0, 1, 0}), Contains("max_len"));
  REQUIRE_THROWS_WITH(model.train_step(s, lens, s, s, {0, -1.0f, 0.0f, {}}), Contains("lr"));
  auto state = model.state_dict();
  state.back().shape = {7};
  REQUIRE_THROWS_WITH(model.load_state_dict(state), Contains("decoder.dense.bias"));
  state.pop_back();
  REQUIRE_THROWS_WITH(model.load_state_dict(state), Contains("decoder.dense.bias"));
}

TEST_CASE("transformer state dict lists d2l's names in d2l's order", "[transformer]") {
  const attn::Transformer model = random_model(0);
  const auto& specs = model.parameters();
  REQUIRE(specs.front().name == "encoder.embedding.weight");
  REQUIRE(specs[1].name == "encoder.blks.block0.attention.W_q.weight");
  REQUIRE(specs.back().name == "decoder.dense.bias");
  // 2 blocks: encoder 1 + 2 * 12, decoder 1 + 2 * 18, dense 2.
  REQUIRE(specs.size() == 1 + 2 * 12 + 1 + 2 * 18 + 2);
  for (const attn::NamedTensor& t : model.state_dict()) {  // PyTorch's LayerNorm init
    if (t.name.find("ln.weight") != std::string::npos) {
      for (float w : t.data) REQUIRE(w == 1.0f);
    }
    if (t.name.find("ln.bias") != std::string::npos) {
      for (float w : t.data) REQUIRE(w == 0.0f);
    }
  }
}
