// The Transformer's encoder and decoder blocks against finite differences in double, as
// test_transformer_layers.cpp checks the layers inside them: attn::Transformer against a
// double-precision transcription of d2l 11.7 written here in plain loops (with reference.hpp's
// linear maps and multi-head attention, and seq2seq_reference.hpp's state dict and d2l's
// Seq2Seq.loss), which calls nothing in the library. Its logits, attention maps and loss must match
// the model's forward, and its loss's central differences every gradient loss_and_gradients
// returns.
//
// test_transformer.cpp meets PyTorch's autograd at PyTorch's initialisation, where every
// LayerNorm is weight 1 and bias 0: a block that reads another LayerNorm's weight or bias, or
// leaves one out, computes the same numbers there. Here every parameter is drawn afresh
// (draw_state_dict), and the reference is differenced rather than differentiated, so it shares
// no backward formula with the library either.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/transformer.hpp"
#include "gradient_reference.hpp"
#include "seq2seq_reference.hpp"

using attn::Index;
using ref::Batch;
using ref::Mat;
using ref::StateDict;

namespace {

// d2l's vocabularies reserve <pad> 1, <bos> 2, <eos> 3 (after <unk> 0). A pad that is not the
// options' default 0 shows that the loss reads the option.
constexpr int32_t kPad = 1;

// Two sequences: the second source is 2 valid tokens then pad, so its pad positions must get no
// weight in any attention over the source; the second target's last two labels are pad and must
// be left out of the mean.
struct Inputs {
  Index batch = 2, src_steps = 5, tgt_steps = 4;
  std::vector<int32_t> src{4, 5, 6, 0, 3, 5, 3, 1, 1, 1};
  std::vector<int32_t> lens{5, 2};
  std::vector<int32_t> tgt_in{2, 4, 7, 5, 2, 6, 3, 1};
  std::vector<int32_t> tgt_out{4, 7, 5, 3, 6, 3, 1, 1};

  attn::TokenBatch src_batch() const { return {src.data(), batch, src_steps}; }
  attn::TokenBatch in_batch() const { return {tgt_in.data(), batch, tgt_steps}; }
  attn::TokenBatch out_batch() const { return {tgt_out.data(), batch, tgt_steps}; }
};

attn::TransformerConfig small_config() {
  attn::TransformerConfig config;
  config.src_vocab_size = 7;
  config.tgt_vocab_size = 8;
  config.num_hiddens = 8;
  config.ffn_num_hiddens = 12;
  config.num_heads = 2;
  config.num_blks = 2;
  return config;
}

// Every entry the model lists, drawn so that no parameter sits where a mistake would not show:
// LayerNorm weights in [0.5, 1.5] and biases (LayerNorm's included) in [-0.5, 0.5], not PyTorch's
// 1 and 0; embeddings N(0, 1) as nn.Embedding's; weights U(+-1/sqrt(in)) as nn.Linear's, but
// twice that for the attention projections, so that most attention rows peak well above uniform
// (up to 1) and the gradients through the softmax are not small.
std::vector<attn::NamedTensor> draw_state_dict(const std::vector<attn::ParameterSpec>& specs) {
  std::vector<attn::NamedTensor> entries;
  uint32_t seed = 100;
  for (const attn::ParameterSpec& spec : specs) {
    size_t n = 1;
    for (Index d : spec.shape) n *= static_cast<size_t>(d);
    const auto has = [&](const char* part) { return spec.name.find(part) != std::string::npos; };
    std::vector<float> data;
    if (has("embedding.")) {
      data = ref::normal(n, seed);
    } else if (has("ln.weight")) {
      data = ref::uniform(n, seed, 0.5f, 1.5f);
    } else if (spec.shape.size() == 1) {
      data = ref::uniform(n, seed, -0.5f, 0.5f);
    } else {
      const float bound = (has(".W_") ? 2.0f : 1.0f) / std::sqrt(static_cast<float>(spec.shape[1]));
      data = ref::uniform(n, seed, -bound, bound);
    }
    entries.push_back({spec.name, spec.shape, std::move(data)});
    ++seed;
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// d2l 11.7 in double, dropout 0

// A weight [*, cols] by its state-dict name; the name, not the model's layout, says which.
Mat weight(const StateDict& sd, const std::string& name, Index cols) {
  const std::vector<double>& v = sd.at(name);
  Mat m(static_cast<Index>(v.size()) / cols, cols);
  m.v = v;
  return m;
}

// TransformerEncoder/Decoder's input: embedding(X) * sqrt(num_hiddens) + P[t].
Batch embed(const std::vector<double>& table, const std::vector<int32_t>& tokens, Index batch,
            Index steps, Index hiddens) {
  const Mat p = ref::positional_encoding(steps, hiddens);
  const double scale = std::sqrt(static_cast<double>(hiddens));
  Batch x(batch, steps, hiddens);
  for (Index b = 0; b < batch; ++b)
    for (Index t = 0; t < steps; ++t) {
      const auto id = static_cast<size_t>(tokens[static_cast<size_t>(b * steps + t)]);
      for (Index c = 0; c < hiddens; ++c)
        x(b, t, c) =
            table[id * static_cast<size_t>(hiddens) + static_cast<size_t>(c)] * scale + p(t, c);
    }
  return x;
}

// AddNorm: nn.LayerNorm(Y + X) over the features (biased variance, eps 1e-5).
Batch add_norm(const StateDict& sd, const std::string& prefix, const Batch& x, const Batch& y) {
  const std::vector<double>& gamma = sd.at(prefix + "ln.weight");
  const std::vector<double>& beta = sd.at(prefix + "ln.bias");
  const Index H = x.cols;
  Batch out(x.batch, x.rows, H);
  for (Index b = 0; b < x.batch; ++b)
    for (Index t = 0; t < x.rows; ++t) {
      double mean = 0.0, var = 0.0;
      for (Index c = 0; c < H; ++c) mean += (x(b, t, c) + y(b, t, c)) / static_cast<double>(H);
      for (Index c = 0; c < H; ++c) {
        const double centred = x(b, t, c) + y(b, t, c) - mean;
        var += centred * centred / static_cast<double>(H);
      }
      for (Index c = 0; c < H; ++c) {
        out(b, t, c) = (x(b, t, c) + y(b, t, c) - mean) / std::sqrt(var + 1e-5) *
                           gamma[static_cast<size_t>(c)] +
                       beta[static_cast<size_t>(c)];
      }
    }
  return out;
}

// PositionWiseFFN: dense2(relu(dense1(X))).
Batch ffn(const StateDict& sd, const std::string& prefix, const Batch& x) {
  Batch h =
      ref::linear(x, weight(sd, prefix + "dense1.weight", x.cols), sd.at(prefix + "dense1.bias"));
  for (double& v : h.v) v = std::max(v, 0.0);
  return ref::linear(h, weight(sd, prefix + "dense2.weight", h.cols),
                     sd.at(prefix + "dense2.bias"));
}

// MultiHeadAttention: W_q, W_k, W_v, W_o without bias; transpose_qkv gives head h the features
// [h * H / heads, (h + 1) * H / heads), which reference.hpp's torch-style attention also does;
// DotProductAttention scales by sqrt(H / heads) and masked_softmax fills keys past the valid
// length ([B], or [B * Tq] per query as d2l's training-mode dec_valid_lens) with -1e6.
ref::Attention attention(const StateDict& sd, const std::string& prefix, const Batch& queries,
                         const Batch& keys_values, const std::vector<int32_t>& valid_lens,
                         Index heads) {
  const Index H = queries.cols;
  const ref::MultiHeadParams p{weight(sd, prefix + "W_q.weight", H),
                               weight(sd, prefix + "W_k.weight", H),
                               weight(sd, prefix + "W_v.weight", H),
                               weight(sd, prefix + "W_o.weight", H),
                               {},
                               {},
                               {},
                               {}};
  attn::Mask mask;
  mask.valid_lens = valid_lens;
  mask.fill = -1e6f;
  return ref::multi_head_attention(queries, keys_values, keys_values, p, heads, mask,
                                   /*average_weights=*/false);
}

struct Forward {
  Batch logits;  // [B, Tt, tgt_vocab]
  // Per block, [B * heads, Tq, Tk] as the model reports them.
  std::vector<Batch> encoder, decoder_self, decoder_cross;
};

// TransformerEncoder: per block Y = AddNorm1(X, MHA(X, X, X)), X' = AddNorm2(Y, FFN(Y)).
Batch encode(const StateDict& sd, const attn::TransformerConfig& c, const Inputs& in,
             std::vector<Batch>* maps = nullptr) {
  Batch x = embed(sd.at("encoder.embedding.weight"), in.src, in.batch, in.src_steps, c.num_hiddens);
  for (Index i = 0; i < c.num_blks; ++i) {
    const std::string block = "encoder.blks.block" + std::to_string(i) + ".";
    ref::Attention a = attention(sd, block + "attention.", x, x, in.lens, c.num_heads);
    const Batch y = add_norm(sd, block + "addnorm1.", x, a.output);
    x = add_norm(sd, block + "addnorm2.", y, ffn(sd, block + "ffn.", y));
    if (maps) maps->push_back(std::move(a.weights));
  }
  return x;
}

// TransformerDecoder in d2l's training mode, whose dec_valid_lens 1..Tt make the self-attention
// causal (the library's in every mode): per block Y = AddNorm1(X, MHA(X, X, X)),
// Z = AddNorm2(Y, MHA(Y, enc, enc, src valid lengths)), X' = AddNorm3(Z, FFN(Z)); then dense.
Forward decode(const StateDict& sd, const attn::TransformerConfig& c, const Inputs& in,
               const Batch& memory) {
  std::vector<int32_t> causal;
  for (Index b = 0; b < in.batch; ++b)
    for (Index t = 0; t < in.tgt_steps; ++t) causal.push_back(static_cast<int32_t>(t + 1));
  Forward out;
  Batch x =
      embed(sd.at("decoder.embedding.weight"), in.tgt_in, in.batch, in.tgt_steps, c.num_hiddens);
  for (Index i = 0; i < c.num_blks; ++i) {
    const std::string block = "decoder.blks.block" + std::to_string(i) + ".";
    ref::Attention self = attention(sd, block + "attention1.", x, x, causal, c.num_heads);
    const Batch y = add_norm(sd, block + "addnorm1.", x, self.output);
    ref::Attention cross = attention(sd, block + "attention2.", y, memory, in.lens, c.num_heads);
    const Batch z = add_norm(sd, block + "addnorm2.", y, cross.output);
    x = add_norm(sd, block + "addnorm3.", z, ffn(sd, block + "ffn.", z));
    out.decoder_self.push_back(std::move(self.weights));
    out.decoder_cross.push_back(std::move(cross.weights));
  }
  out.logits = ref::linear(x, weight(sd, "decoder.dense.weight", c.num_hiddens),
                           sd.at("decoder.dense.bias"));
  return out;
}

Forward forward(const StateDict& sd, const attn::TransformerConfig& c, const Inputs& in) {
  std::vector<Batch> encoder_maps;
  const Batch memory = encode(sd, c, in, &encoder_maps);
  Forward out = decode(sd, c, in, memory);
  out.encoder = std::move(encoder_maps);
  return out;
}

// d2l's Seq2Seq.loss: the mean cross-entropy over the batch's non-pad labels.
double loss_of(const Forward& f, const Inputs& in) {
  return ref::seq2seq_loss(f.logits, in.tgt_out, kPad);
}

void check_maps(const std::vector<attn::Tensor3>& got, const std::vector<Batch>& want,
                const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ref::check_close(got[i], want[i], {1e-4, 1e-6}, what + " block " + std::to_string(i));
  }
}

struct Setup {
  attn::TransformerConfig config = small_config();
  attn::Transformer model{config};
  StateDict sd;

  Setup() {
    const std::vector<attn::NamedTensor> entries = draw_state_dict(model.parameters());
    model.load_state_dict(entries);
    sd = ref::to_double(entries);
  }
};

}  // namespace

TEST_CASE("transformer logits, attention maps and loss match d2l's blocks computed in double",
          "[transformer][blocks]") {
  Setup s;
  // {0, 4}: a source with no valid position, which d2l's -1e6 fill attends uniformly, pad and all.
  for (const std::vector<int32_t>& lens :
       {std::vector<int32_t>{5, 2}, std::vector<int32_t>{0, 4}}) {
    Inputs in;
    in.lens = lens;
    CAPTURE(lens);
    const Forward want = forward(s.sd, s.config, in);
    const attn::TransformerOutput got = s.model.forward(in.src_batch(), in.lens, in.in_batch());
    ref::check_close(got.logits, want.logits, ref::kSum, "logits");
    check_maps(got.attention.encoder, want.encoder, "encoder");
    check_maps(got.attention.decoder_self, want.decoder_self, "decoder self");
    check_maps(got.attention.decoder_cross, want.decoder_cross, "decoder cross");
    const float loss = s.model
                           .loss_and_gradients(in.src_batch(), in.lens, in.in_batch(),
                                               in.out_batch(), {kPad, true, 0})
                           .loss;
    CHECK_THAT(loss, Catch::Matchers::WithinRel(loss_of(want, in), 1e-5));
  }
}

// Every entry of every tensor, not a sample: 2,736 parameters at two reference passes each take
// 0.4 s in Release. The gradients met the rule with 50x to spare when this was written.
TEST_CASE("transformer gradients match central differences of d2l's loss in double",
          "[transformer][blocks]") {
  Setup s;
  const Inputs in;
  const attn::EncoderDecoderLoss got = s.model.loss_and_gradients(
      in.src_batch(), in.lens, in.in_batch(), in.out_batch(), {kPad, true, 0});
  CHECK_THAT(got.loss, Catch::Matchers::WithinRel(loss_of(forward(s.sd, s.config, in), in), 1e-5));
  REQUIRE(got.gradients.size() == s.model.parameters().size());
  for (const attn::NamedTensor& g : got.gradients) {
    std::vector<double>& values = s.sd.at(g.name);
    const std::vector<double> original = values;
    // A decoder parameter leaves the encoder's output as it is: encode once for its differences.
    const bool in_decoder = g.name.rfind("decoder.", 0) == 0;
    const Batch memory = encode(s.sd, s.config, in);
    const std::vector<double> numeric =
        ref::numeric_gradient(values, [&](const std::vector<double>& v) {
          values = v;
          return loss_of(
              in_decoder ? decode(s.sd, s.config, in, memory) : forward(s.sd, s.config, in), in);
        });
    values = original;
    ref::check_gradient(g.data.data(), numeric, g.shape, g.name);
  }
}
