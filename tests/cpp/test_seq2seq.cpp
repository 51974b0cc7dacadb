// The Bahdanau encoder-decoder (attn/seq2seq.hpp) against a double-precision transcription of
// d2l's model (seq2seq_reference.hpp): forward logits and attention, every gradient against
// central differences of the reference loss (1 and 2 layers, with and without attention, with
// dropout's documented masks), the training step, greedy translation, and the state dict.

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/seq2seq.hpp"
#include "gradient_reference.hpp"
#include "seq2seq_reference.hpp"

using attn::Index;

namespace {

struct Tiny {
  attn::Seq2SeqConfig config;
  Index B = 3, Ts = 5, Tt = 4;
  // Padded like d2l's batches: the source's pad id 1 past each valid length.
  std::vector<int32_t> src{3, 4, 2, 1, 1, 0, 4, 4, 3, 2, 2, 1, 1, 1, 1};
  std::vector<int32_t> lens{3, 5, 1};
  std::vector<int32_t> tgt_in{2, 5, 3, 0, 2, 1, 1, 4, 2, 3, 0, 0};
  std::vector<int32_t> tgt_out{5, 3, 0, 0, 1, 1, 4, 0, 3, 0, 0, 0};  // pad 0 at the ends

  attn::TokenBatch src_batch() const { return {src.data(), B, Ts}; }
  attn::TokenBatch in_batch() const { return {tgt_in.data(), B, Tt}; }
  attn::TokenBatch out_batch() const { return {tgt_out.data(), B, Tt}; }
  ref::Seq2SeqShape shape() const {
    return {config.src_vocab_size, config.tgt_vocab_size, config.embed_size,
            config.num_hiddens,    config.num_layers,     config.attention};
  }
};

Tiny tiny(Index layers, bool attention, float dropout = 0.0f) {
  Tiny t;
  t.config = {5, 6, 3, 4, layers, dropout, 42, attention};
  return t;
}

std::string label(const attn::Seq2SeqConfig& c) {
  return std::to_string(c.num_layers) + " layer(s), attention " + (c.attention ? "on" : "off") +
         ", dropout " + std::to_string(c.dropout);
}

void check_forward(const Tiny& t, bool training) {
  INFO(label(t.config) << (training ? ", training" : ""));
  const attn::Seq2Seq model(t.config);
  const uint64_t seed = 9;
  const auto got = model.forward(t.src_batch(), t.lens, t.in_batch(), {training, seed});
  const ref::Seq2SeqResult want =
      ref::seq2seq(ref::to_double(model.state_dict()), t.shape(), t.src, t.lens, t.tgt_in, t.B,
                   {training ? t.config.dropout : 0.0, seed});
  ref::check_close(got.logits, want.logits, {1e-4, 1e-5}, "logits");
  if (t.config.attention) {
    ref::check_close(got.attention, want.attention, {1e-4, 1e-6}, "attention");
  } else {
    CHECK(got.attention.data.empty());
  }
}

void check_gradients(const Tiny& t) {
  INFO(label(t.config));
  attn::Seq2Seq model(t.config);
  const uint64_t seed = 5;
  const int32_t pad = 0;
  const auto got = model.loss_and_gradients(t.src_batch(), t.lens, t.in_batch(), t.out_batch(),
                                            {pad, true, seed});
  ref::StateDict sd = ref::to_double(model.state_dict());
  const ref::DropoutSpec drop{t.config.dropout, seed};
  const auto loss = [&](const ref::StateDict& weights) {
    const auto r = ref::seq2seq(weights, t.shape(), t.src, t.lens, t.tgt_in, t.B, drop);
    return ref::seq2seq_loss(r.logits, t.tgt_out, pad);
  };
  CHECK_THAT(got.loss, Catch::Matchers::WithinRel(loss(sd), 1e-5));
  REQUIRE(got.gradients.size() == model.parameters().size());
  for (const auto& g : got.gradients) {
    std::vector<double>& values = sd.at(g.name);
    const auto numeric = ref::numeric_gradient(values, [&](const std::vector<double>& v) {
      const std::vector<double> saved = values;
      values = v;
      const double out = loss(sd);
      values = saved;
      return out;
    });
    ref::check_gradient(g.data.data(), numeric, g.shape, g.name);
  }
}

}  // namespace

TEST_CASE("seq2seq forward matches d2l's equations (1 and 2 layers, with and without attention)",
          "[seq2seq]") {
  for (Index layers : {1, 2}) {
    for (bool attention : {true, false}) check_forward(tiny(layers, attention), false);
  }
}

TEST_CASE("seq2seq forward in training follows the documented dropout masks", "[seq2seq]") {
  check_forward(tiny(2, true, 0.25f), true);
  check_forward(tiny(2, false, 0.25f), true);
  // Not training: no dropout at all.
  check_forward(tiny(2, true, 0.25f), false);
}

TEST_CASE(
    "seq2seq gradients match finite differences of d2l's loss (1 and 2 layers, with and "
    "without attention)",
    "[seq2seq]") {
  for (Index layers : {1, 2}) {
    for (bool attention : {true, false}) check_gradients(tiny(layers, attention));
  }
}

TEST_CASE("seq2seq gradients with dropout match finite differences under the same masks",
          "[seq2seq]") {
  check_gradients(tiny(2, true, 0.25f));
  check_gradients(tiny(2, false, 0.25f));
}

TEST_CASE("attention weights are distributions over the valid source positions", "[seq2seq]") {
  const Tiny t = tiny(1, true);
  const attn::Seq2Seq model(t.config);
  const auto out = model.forward(t.src_batch(), t.lens, t.in_batch());
  REQUIRE(out.attention.batch == t.B);
  REQUIRE(out.attention.rows == t.Tt);
  REQUIRE(out.attention.cols == t.Ts);
  for (Index b = 0; b < t.B; ++b) {
    for (Index i = 0; i < t.Tt; ++i) {
      double sum = 0.0;
      for (Index j = 0; j < t.Ts; ++j) {
        sum += out.attention.at(b, i, j);
        if (j >= t.lens[static_cast<size_t>(b)]) CHECK(out.attention.at(b, i, j) == 0.0f);
      }
      CHECK_THAT(sum, Catch::Matchers::WithinAbs(1.0, 1e-6));
    }
  }
}

TEST_CASE("a training step clips the gradients, takes one Adam step, and returns the loss before",
          "[seq2seq]") {
  const Tiny t = tiny(2, true);
  attn::Seq2Seq model(t.config);
  const auto before = model.state_dict();
  const auto grads =
      model.loss_and_gradients(t.src_batch(), t.lens, t.in_batch(), t.out_batch(), {0, true, 1});
  double norm2 = 0.0;
  for (const auto& g : grads.gradients) {
    for (float x : g.data) norm2 += double{x} * x;
  }
  const double norm = std::sqrt(norm2), clip = 0.5 * norm;  // clipping active
  const float lr = 0.01f;
  const float loss = model.train_step(t.src_batch(), t.lens, t.in_batch(), t.out_batch(),
                                      {0, lr, static_cast<float>(clip), 1});
  CHECK(loss == grads.loss);
  CHECK(model.optimizer_steps() == 1);
  // Adam's first step is lr * g / (|g| + eps) for the clipped gradient g.
  const double scale = clip / (norm + 1e-6);
  const auto after = model.state_dict();
  for (size_t p = 0; p < after.size(); ++p) {
    for (size_t i = 0; i < after[p].data.size(); ++i) {
      const double g = grads.gradients[p].data[i] * scale;
      const double want = before[p].data[i] - lr * g / (std::abs(g) + 1e-8);
      INFO(after[p].name << "[" << i << "]");
      CHECK_THAT(after[p].data[i], Catch::Matchers::WithinAbs(want, 1e-6));
    }
  }
}

TEST_CASE("greedy translation feeds back the argmax token, then repeats eos", "[seq2seq]") {
  for (bool attention : {true, false}) {
    const Tiny t = tiny(2, attention);
    const attn::Seq2Seq model(t.config);
    const ref::StateDict sd = ref::to_double(model.state_dict());
    const int32_t bos = 2;
    const Index max_len = 5;
    // The reference greedy run, without stopping: teacher-forced on its own prefix.
    std::vector<std::vector<int32_t>> prefix(static_cast<size_t>(t.B), {bos});
    ref::Batch attention_ref(t.B, max_len, t.Ts);
    std::vector<int32_t> tokens(static_cast<size_t>(t.B * max_len));
    for (Index step = 0; step < max_len; ++step) {
      std::vector<int32_t> tgt;
      for (const auto& p : prefix) tgt.insert(tgt.end(), p.begin(), p.end());
      const auto r = ref::seq2seq(sd, t.shape(), t.src, t.lens, tgt, t.B);
      for (Index b = 0; b < t.B; ++b) {
        Index best = 0;
        for (Index v = 1; v < t.config.tgt_vocab_size; ++v) {
          if (r.logits(b, step, v) > r.logits(b, step, best)) best = v;
        }
        tokens[static_cast<size_t>(b * max_len + step)] = static_cast<int32_t>(best);
        prefix[static_cast<size_t>(b)].push_back(static_cast<int32_t>(best));
        for (Index j = 0; attention && j < t.Ts; ++j) {
          attention_ref(b, step, j) = r.attention(b, step, j);
        }
      }
    }
    // eos: row 0's second token, so that at least one row stops early.
    const int32_t eos = tokens[1];
    const auto got = model.translate(t.src_batch(), t.lens, {bos, eos, max_len});
    REQUIRE(got.tokens.size() == tokens.size());
    for (Index b = 0; b < t.B; ++b) {
      bool done = false;
      Index length = max_len;
      for (Index step = 0; step < max_len; ++step) {
        const size_t i = static_cast<size_t>(b * max_len + step);
        INFO("attention " << attention << ", row " << b << ", step " << step);
        CHECK(got.tokens[i] == (done ? eos : tokens[i]));
        for (Index j = 0; attention && j < t.Ts; ++j) {
          const double want = done ? 0.0 : attention_ref(b, step, j);
          CHECK_THAT(got.attention.at(b, step, j), Catch::Matchers::WithinAbs(want, 1e-5));
        }
        if (!done && tokens[i] == eos) {
          done = true;
          length = step + 1;
        }
      }
      CHECK(got.lengths[static_cast<size_t>(b)] == length);
    }
    CHECK(got.lengths[0] <= 2);
  }
}

TEST_CASE("the state dict has d2l's names and shapes and round-trips", "[seq2seq]") {
  const Tiny t = tiny(2, true);
  attn::Seq2Seq model(t.config);
  const std::vector<std::pair<std::string, std::vector<Index>>> expected{
      {"encoder.embedding.weight", {5, 3}},
      {"encoder.rnn.weight_ih_l0", {12, 3}},
      {"encoder.rnn.weight_hh_l0", {12, 4}},
      {"encoder.rnn.bias_ih_l0", {12}},
      {"encoder.rnn.bias_hh_l0", {12}},
      {"encoder.rnn.weight_ih_l1", {12, 4}},
      {"encoder.rnn.weight_hh_l1", {12, 4}},
      {"encoder.rnn.bias_ih_l1", {12}},
      {"encoder.rnn.bias_hh_l1", {12}},
      {"decoder.attention.W_k.weight", {4, 4}},
      {"decoder.attention.W_q.weight", {4, 4}},
      {"decoder.attention.w_v.weight", {1, 4}},
      {"decoder.embedding.weight", {6, 3}},
      {"decoder.rnn.weight_ih_l0", {12, 7}},
      {"decoder.rnn.weight_hh_l0", {12, 4}},
      {"decoder.rnn.bias_ih_l0", {12}},
      {"decoder.rnn.bias_hh_l0", {12}},
      {"decoder.rnn.weight_ih_l1", {12, 4}},
      {"decoder.rnn.weight_hh_l1", {12, 4}},
      {"decoder.rnn.bias_ih_l1", {12}},
      {"decoder.rnn.bias_hh_l1", {12}},
      {"decoder.dense.weight", {6, 4}},
      {"decoder.dense.bias", {6}}};
  const auto sd = model.state_dict();
  REQUIRE(sd.size() == expected.size());
  for (size_t i = 0; i < sd.size(); ++i) {
    CHECK(sd[i].name == expected[i].first);
    CHECK(sd[i].shape == expected[i].second);
  }

  // Another seed, another model; loading makes it compute the same thing.
  attn::Seq2SeqConfig other_config = t.config;
  other_config.seed = 7;
  attn::Seq2Seq other(other_config);
  CHECK(other.state_dict()[0].data != sd[0].data);
  other.load_state_dict(sd);
  const auto a = model.forward(t.src_batch(), t.lens, t.in_batch());
  const auto b = other.forward(t.src_batch(), t.lens, t.in_batch());
  CHECK(a.logits.data == b.logits.data);

  // d2l's current encoder spells its GRU "encoder.rnn.rnn.*" (the d2l.GRU wrapper).
  auto aliased = sd;
  for (auto& e : aliased) {
    if (e.name.rfind("encoder.rnn.", 0) == 0) e.name.insert(12, "rnn.");
  }
  CHECK(aliased[1].name == "encoder.rnn.rnn.weight_ih_l0");
  attn::Seq2Seq third(other_config);
  third.load_state_dict(aliased);
  CHECK(third.state_dict()[1].data == sd[1].data);
}

TEST_CASE("a failed load_state_dict names the entry and leaves the model unchanged", "[seq2seq]") {
  const Tiny t = tiny(1, true);
  attn::Seq2Seq model(t.config);
  const auto original = model.state_dict();
  attn::Seq2SeqConfig other_config = t.config;
  other_config.seed = 3;
  const auto replacement = attn::Seq2Seq(other_config).state_dict();

  auto wrong_shape = replacement;
  wrong_shape.back().shape = {5};
  wrong_shape.back().data.resize(5);
  CHECK_THROWS_WITH(model.load_state_dict(wrong_shape),
                    "state_dict['decoder.dense.bias']: expected shape [6], got [5]");
  auto missing = replacement;
  missing.erase(missing.begin() + 2);
  CHECK_THROWS_WITH(model.load_state_dict(missing),
                    "state_dict: expected an entry 'encoder.rnn.weight_hh_l0', got none");
  auto unknown = replacement;
  unknown.push_back({"decoder.extra", {1}, {0.0f}});
  CHECK_THROWS_WITH(model.load_state_dict(unknown),
                    "state_dict['decoder.extra']: expected a parameter of this model (see "
                    "parameters()), got an unknown name");
  auto twice = replacement;
  twice.push_back(replacement[0]);
  CHECK_THROWS_WITH(model.load_state_dict(twice),
                    "state_dict['encoder.embedding.weight']: expected one entry for "
                    "'encoder.embedding.weight', got a second one");
  auto short_data = replacement;
  short_data[0].data.pop_back();
  CHECK_THROWS_WITH(model.load_state_dict(short_data),
                    "state_dict['encoder.embedding.weight']: expected 15 values for shape [5, 3], "
                    "got 14");
  const auto after = model.state_dict();
  for (size_t i = 0; i < after.size(); ++i) CHECK(after[i].data == original[i].data);
}

TEST_CASE("seq2seq rejects bad tokens, lengths, shapes and options, naming the argument",
          "[seq2seq]") {
  const Tiny t = tiny(1, true);
  attn::Seq2Seq model(t.config);
  auto bad_src = t.src;
  bad_src[7] = 5;
  CHECK_THROWS_WITH(model.forward({bad_src.data(), t.B, t.Ts}, t.lens, t.in_batch()),
                    "src: expected token ids in [0, 5), got 5 at index 7");
  auto bad_tgt = t.tgt_in;
  bad_tgt[0] = -1;
  CHECK_THROWS_WITH(model.forward(t.src_batch(), t.lens, {bad_tgt.data(), t.B, t.Tt}),
                    "tgt_input: expected token ids in [0, 6), got -1 at index 0");
  CHECK_THROWS_WITH(model.forward(t.src_batch(), {3, 6, 1}, t.in_batch()),
                    "src_valid_lens: expected lengths in [0, 5], got 6 at index 1");
  CHECK_THROWS_WITH(model.forward(t.src_batch(), {3, 5}, t.in_batch()),
                    "src_valid_lens: expected shape [3], got [2]");
  CHECK_THROWS_WITH(model.forward(t.src_batch(), t.lens, {t.tgt_in.data(), 2, 4}),
                    "tgt_input: expected shape [3, T >= 1], got [2, 4]");
  auto bad_out = t.tgt_out;
  bad_out[11] = 6;
  CHECK_THROWS_WITH(model.loss_and_gradients(t.src_batch(), t.lens, t.in_batch(),
                                             {bad_out.data(), t.B, t.Tt}, {}),
                    "tgt_output: expected token ids in [0, 6), got 6 at index 11");
  CHECK_THROWS_WITH(
      model.loss_and_gradients(t.src_batch(), t.lens, t.in_batch(), {t.tgt_out.data(), t.B, 3}, {}),
      "tgt_output: expected shape [3, 4], got [3, 3]");
  CHECK_THROWS_WITH(model.translate(t.src_batch(), t.lens, {6, 0, 3}),
                    "bos: expected a token id in [0, 6), got 6");
  CHECK_THROWS_WITH(model.translate(t.src_batch(), t.lens, {1, 0, 0}),
                    "max_len: expected a length >= 1, got 0");
  CHECK_THROWS_WITH(
      model.train_step(t.src_batch(), t.lens, t.in_batch(), t.out_batch(), {0, 0.1f, -1.0f, {}}),
      "clip: expected a finite number >= 0 (0: no clipping), got -1");
  CHECK_THROWS_WITH(attn::Seq2Seq({5, 6, 3, 0, 1, 0.0f, 0, true}),
                    "num_hiddens: expected a size > 0, got 0");
  CHECK_THROWS_WITH(attn::Seq2Seq({5, 6, 3, 4, 1, 1.0f, 0, true}),
                    "dropout: expected a probability in [0, 1), got 1");
  CHECK(model.optimizer_steps() == 0);  // nothing above took a step
}
