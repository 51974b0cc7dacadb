// The Bahdanau encoder-decoder against d2l's PyTorch model: tests/fixtures/seq2seq/seq2seq.json,
// written by scripts/fixtures/seq2seq.py (float64 references from float32 weights). Tolerance,
// the fixtures' rule: |got - want| <= 2e-4 * max|want| per tensor.

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attn/seq2seq.hpp"
#include "encoder_decoder_fixtures.hpp"

using attn::Index;
using Catch::Matchers::WithinAbs;
using fixtures::json;

namespace {

attn::Seq2SeqConfig config_of(const json& c) {
  attn::Seq2SeqConfig config;
  config.src_vocab_size = c.at("srcVocabSize").get<Index>();
  config.tgt_vocab_size = c.at("tgtVocabSize").get<Index>();
  config.embed_size = c.at("embedSize").get<Index>();
  config.num_hiddens = c.at("numHiddens").get<Index>();
  config.num_layers = c.at("numLayers").get<Index>();
  config.attention = c.at("attention").get<bool>();
  return config;
}

struct Seq2SeqCase : fixtures::EncoderDecoderCase<attn::Seq2Seq> {
  explicit Seq2SeqCase(const fixtures::Case& c) : EncoderDecoderCase(c, config_of) {}
};

}  // namespace

TEST_CASE("seq2seq forward, loss and gradients match d2l's PyTorch model", "[seq2seq][fixtures]") {
  for (const auto& c : fixtures::load("seq2seq/seq2seq.json")) {
    DYNAMIC_SECTION(c.name) {
      Seq2SeqCase s(c);
      const auto out = s.model.forward(s.src_batch(), s.lens, s.in_batch());
      fixtures::check(out.logits, c.expected.at("logits"), c.expected, "logits");
      if (c.expected.contains("attention")) {
        fixtures::check(out.attention, c.expected.at("attention"), c.expected, "attention");
      }
      fixtures::check_loss_and_gradients(s, c);
    }
  }
}

TEST_CASE("two clipped Adam steps match torch.optim.Adam after clip_grad_norm_",
          "[seq2seq][fixtures]") {
  for (const auto& c : fixtures::load("seq2seq/seq2seq.json")) {
    DYNAMIC_SECTION(c.name) {
      Seq2SeqCase s(c);
      fixtures::check_two_clipped_adam_steps(s, c);
    }
  }
}

TEST_CASE("greedy translation matches d2l's predict_step up to eos", "[seq2seq][fixtures]") {
  for (const auto& c : fixtures::load("seq2seq/seq2seq.json")) {
    DYNAMIC_SECTION(c.name) {
      const Seq2SeqCase s(c);
      const int32_t bos = c.options.at("bos").get<int32_t>();
      const int32_t eos = c.options.at("eos").get<int32_t>();
      const Index max_len = c.options.at("maxLen").get<Index>();
      const auto got = s.model.translate(s.src_batch(), s.lens, {bos, eos, max_len});
      // d2l keeps predicting after eos; the library repeats eos there and zeroes the attention.
      const auto tokens = fixtures::data_of<int32_t>(c.expected.at("translationTokens"));
      const bool attention = c.expected.contains("translationAttention");
      const auto weights = attention
                               ? fixtures::data_of<double>(c.expected.at("translationAttention"))
                               : std::vector<double>{};
      double peak = 0.0;
      for (double w : weights) peak = std::max(peak, std::abs(w));
      for (Index b = 0; b < s.batch; ++b) {
        bool done = false;
        for (Index t = 0; t < max_len; ++t) {
          const size_t i = static_cast<size_t>(b * max_len + t);
          INFO("row " << b << ", step " << t);
          CHECK(got.tokens[i] == (done ? eos : tokens[i]));
          for (Index j = 0; attention && j < s.src_steps; ++j) {
            const double want = done ? 0.0 : weights[i * static_cast<size_t>(s.src_steps) + j];
            CHECK_THAT(got.attention.at(b, t, j), WithinAbs(want, 2e-4 * peak));
          }
          if (!done && tokens[i] == eos) {
            done = true;
            CHECK(got.lengths[static_cast<size_t>(b)] == t + 1);
          }
        }
        if (!done) CHECK(got.lengths[static_cast<size_t>(b)] == max_len);
      }
      CHECK(got.lengths[0] <= 2);  // the fixture's eos is row 0's second token
    }
  }
}
