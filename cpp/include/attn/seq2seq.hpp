#pragma once
// d2l's RNN encoder-decoder with Bahdanau attention (d2l 11.4, PyTorch version), exactly:
//   encoder  Seq2SeqEncoder: nn.Embedding(src_vocab, embed), nn.GRU(embed, H, layers, dropout)
//            over the whole padded source (no packing), time-major; outputs [Ts, B, H] and the
//            final state of every layer.
//   decoder  Seq2SeqAttentionDecoder (attention = true): initial state = the encoder's final
//            state; at step t the query is the top layer's previous state (the encoder's final
//            top state at t = 0), keys = values = the encoder's top outputs; additive attention
//            (W_q, W_k: Linear(H, H, no bias), w_v: Linear(H, 1, no bias), masked by the source
//            valid lengths with fill -1e6, dropout on the weights when training); the GRU
//            (input embed + H, hidden H) reads concat(context, embedding(token)) in that order;
//            logits = dense(top state), dense: Linear(H, tgt_vocab). Teacher forcing.
//            Seq2SeqDecoder (attention = false): the GRU reads concat(embedding(token), c) with
//            c the encoder's last top output at every step; no attention weights.
//   GRU      torch.nn.GRU's equations and layout (attn/gru.hpp); dropout between layers when
//            training.
//   loss     cross-entropy averaged over the target positions whose label is not pad (d2l's
//            Seq2Seq.loss, attn/cross_entropy.hpp).
//   training torch.nn.utils.clip_grad_norm_ then torch.optim.Adam (attn/optim.hpp).
//   init     d2l's init_seq2seq as it acts: Xavier-uniform GRU weight matrices; PyTorch's
//            defaults elsewhere: embeddings N(0, 1), GRU biases U(+-1/sqrt(H)), and the Linear
//            layers' U(+-1/sqrt(in)) (d2l's W_q, W_k, w_v and dense are nn.LazyLinear, which
//            init_seq2seq's `type(module) == nn.Linear` does not match), drawn from config.seed.
// The state dict uses d2l's module paths (parameters() lists them). Inputs are batch-major:
// src [B, Ts], tgt [B, Tt]; token ids are checked against the vocabularies.
//
// Dropout (training only, dropout > 0) is drawn from a splitmix64 stream per site of a dropout
// seed s: the encoder GRU's from s, the decoder GRU's from s + 1 (layer l >= 1's input entry
// (t, b, j) is kept unless draw (l - 1) T B H + (t B + b) H + j falls below p), the attention
// weights' from s + 2 (weight (b, j) of step t: draw (t B + b) Ts + j). Kept entries are scaled
// by 1 / (1 - p).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/encoder_decoder.hpp"
#include "attn/optim.hpp"
#include "attn/state_dict.hpp"
#include "attn/tensor.hpp"
#include "attn/trainable_model.hpp"

namespace attn {

struct Seq2SeqConfig {
  Index src_vocab_size = 0;
  Index tgt_vocab_size = 0;
  Index embed_size = 0;
  Index num_hiddens = 0;
  Index num_layers = 1;
  float dropout = 0.0f;  // in [0, 1)
  uint64_t seed = 0;     // initialisation, and the default dropout stream
  bool attention = true;
};

struct Seq2SeqOutput {
  Tensor3 logits;     // [B, Tt, tgt_vocab]
  Tensor3 attention;  // [B, Tt, Ts], before dropout; empty (0 x 0 x 0) without attention
};

// The shared options (attn/encoder_decoder.hpp) under this model's names.
using Seq2SeqForwardOptions = EncoderDecoderForwardOptions;
using Seq2SeqLossOptions = EncoderDecoderLossOptions;
using Seq2SeqLoss = EncoderDecoderLoss;
using Seq2SeqTrainOptions = EncoderDecoderTrainOptions;
using Seq2SeqTranslateOptions = GreedyOptions;

struct Seq2SeqTranslation {
  Index batch = 0, max_len = 0;
  std::vector<int32_t> tokens;   // [B, max_len]: greedy tokens; after a row's eos, eos again
  std::vector<int32_t> lengths;  // [B]: tokens up to and including the first eos (or max_len)
  Tensor3 attention;             // [B, max_len, Ts]; rows after eos are 0; empty without attention
};

namespace detail {
struct Seq2SeqParameters;  // the flat parameter buffer and where each tensor lives in it
}

// The state-dict entries (parameters(), state_dict(), load_state_dict(): attn/trainable_model.hpp)
// are in d2l's order and names: encoder.embedding.weight [Vs, E],
// encoder.rnn.{weight_ih,weight_hh,bias_ih,bias_hh}_l{k}, then (attention only)
// decoder.attention.W_k.weight [H, H], decoder.attention.W_q.weight [H, H],
// decoder.attention.w_v.weight [1, H], then decoder.embedding.weight [Vt, E],
// decoder.rnn.*_l{k} (layer 0's input size E + H), decoder.dense.weight [Vt, H],
// decoder.dense.bias [Vt]. load_state_dict reads d2l's current encoder spelling
// "encoder.rnn.rnn.*" (its d2l.GRU wrapper) as "encoder.rnn.*", and likewise for the decoder.
class Seq2Seq : public TrainableModel<Seq2SeqConfig, detail::Seq2SeqParameters> {
 public:
  using Parameters = detail::Seq2SeqParameters;

  // Throws std::invalid_argument naming the field: sizes must be > 0, dropout in [0, 1).
  explicit Seq2Seq(const Seq2SeqConfig& config);

  // src [B, Ts], src_valid_lens [B] in [0, Ts], tgt_input [B, Tt] (teacher forcing).
  // Throws std::invalid_argument naming the argument: shapes, token ids outside the vocabulary.
  Seq2SeqOutput forward(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                        TokenBatch tgt_input, const Seq2SeqForwardOptions& options = {}) const;

  // The loss of tgt_output [B, Tt] (labels, pad left out) and its gradient for every parameter.
  Seq2SeqLoss loss_and_gradients(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                                 TokenBatch tgt_input, TokenBatch tgt_output,
                                 const Seq2SeqLossOptions& options);

  // One training step: the gradients as above, clipped (options.clip > 0), then one Adam step
  // with options.lr. Returns the loss before the step.
  float train_step(TokenBatch src, const std::vector<int32_t>& src_valid_lens, TokenBatch tgt_input,
                   TokenBatch tgt_output, const Seq2SeqTrainOptions& options);

  // Greedy decoding of the whole batch at once, as d2l's predict_step: starting from bos, each
  // step feeds back the argmax token, for max_len steps (no dropout).
  Seq2SeqTranslation translate(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                               const Seq2SeqTranslateOptions& options) const;
};

}  // namespace attn
