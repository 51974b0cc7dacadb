#pragma once
// d2l's Transformer (d2l 11.7, PyTorch version), an encoder-decoder of multi-head attention:
//   encoder  TransformerEncoder: embedding * sqrt(H) + positional encoding (dropout), then
//            num_blks blocks: Y = AddNorm1(X, MHA(X, X, X, src_valid_lens)),
//            X' = AddNorm2(Y, FFN(Y)).
//   decoder  TransformerDecoder: embedding * sqrt(H) + positional encoding (dropout), then
//            num_blks blocks: Y = AddNorm1(X, MHA(X, X, X, causal)),
//            Z = AddNorm2(Y, MHA(Y, enc, enc, src_valid_lens)), X' = AddNorm3(Z, FFN(Z));
//            logits = dense(X).
//   blocks   d2l's MultiHeadAttention (W_q, W_k, W_v, W_o without bias; scaled dot-product
//            attention per head, masked with fill -1e6, so a source of valid length 0 is
//            attended uniformly; dropout on the weights), AddNorm = LayerNorm(dropout(Y) + X)
//            (eps 1e-5), PositionWiseFFN = dense2(relu(dense1(X))), the sinusoidal positional
//            encoding (attn/positional_encoding.hpp).
//   loss     cross-entropy averaged over the target positions whose label is not pad (d2l's
//            Seq2Seq.loss); training clips the gradient norm, then takes an Adam step.
//   init     d2l applies no init function to the Transformer: PyTorch's defaults, embeddings
//            N(0, 1), every Linear's weight and bias U(+-1/sqrt(in)), LayerNorm weight 1 and
//            bias 0, drawn from config.seed in state-dict order.
// Two of d2l's behaviours are changed on purpose: the decoder is causal in every mode (d2l's is
// causal only in training mode, so its eval-mode forward over a whole target lets positions see
// the future), and greedy decoding adds position t's encoding at step t (d2l's predict_step adds
// position 0's at every step). Cached decoding then equals the teacher-forced forward over the
// prefix.
//
// Dropout (training only, dropout > 0): each site has its own stream, seeded mix(s, site) from
// the call's dropout seed s, sites numbered in forward order: the encoder's positional encoding
// 0, encoder block i's attention weights 1 + 3i, AddNorm1 2 + 3i, AddNorm2 3 + 3i; then from
// base = 1 + 3 num_blks the decoder's positional encoding (base), and decoder block i's
// self-attention base + 1 + 5i, AddNorm1 base + 2 + 5i, cross-attention base + 3 + 5i, AddNorm2
// base + 4 + 5i, AddNorm3 base + 5 + 5i. Within a site entry t (row-major, attention weights
// as [B, heads, Tq, Tk]) is dropped as attn/dropout.hpp says.

#include <cstdint>
#include <memory>
#include <vector>

#include "attn/encoder_decoder.hpp"
#include "attn/optim.hpp"
#include "attn/state_dict.hpp"
#include "attn/tensor.hpp"
#include "attn/trainable_model.hpp"

namespace attn {

struct TransformerConfig {
  Index src_vocab_size = 0;
  Index tgt_vocab_size = 0;
  Index num_hiddens = 0;      // H; num_heads must divide it
  Index ffn_num_hiddens = 0;  // the FFN's hidden width
  Index num_heads = 1;
  Index num_blks = 1;
  float dropout = 0.0f;  // in [0, 1)
  uint64_t seed = 0;     // initialisation, and the default dropout stream
};

// Attention weights before dropout, one tensor per block, each [B * heads, Tq, Tk] (row-major,
// so also [B, heads, Tq, Tk]).
struct TransformerAttention {
  std::vector<Tensor3> encoder;        // Tq = Tk = Ts
  std::vector<Tensor3> decoder_self;   // Tq = Tk = Tt, causal
  std::vector<Tensor3> decoder_cross;  // Tq = Tt, Tk = Ts
};

struct TransformerOutput {
  Tensor3 logits;  // [B, Tt, tgt_vocab]
  TransformerAttention attention;
};

struct TransformerTranslation {
  Index batch = 0, max_len = 0;
  std::vector<int32_t> tokens;   // [B, max_len]: greedy tokens; after a row's eos, eos again
  std::vector<int32_t> lengths;  // [B]: tokens up to and including the first eos (or max_len)
  // Per decoder block, the cross-attention weights of each step: [B * heads, max_len, Ts]; rows
  // after a row's eos are 0.
  std::vector<Tensor3> cross_attention;
};

namespace detail {
struct TransformerParameters;  // the flat parameter buffer and where each tensor lives in it
}

// The state-dict entries (parameters(), state_dict(), load_state_dict(): attn/trainable_model.hpp)
// are in d2l's order and names: encoder.embedding.weight [Vs, H]; per encoder block i,
// encoder.blks.block{i}.attention.W_{q,k,v,o}.weight [H, H], .addnorm1.ln.{weight,bias} [H],
// .ffn.dense1.{weight [F, H], bias [F]}, .ffn.dense2.{weight [H, F], bias [H]}, .addnorm2.ln.*;
// decoder.embedding.weight [Vt, H]; per decoder block, decoder.blks.block{i}.attention1.W_*,
// .addnorm1.ln.*, .attention2.W_*, .addnorm2.ln.*, .ffn.dense{1,2}.*, .addnorm3.ln.*;
// decoder.dense.weight [Vt, H], decoder.dense.bias [Vt].
class Transformer : public TrainableModel<TransformerConfig, detail::TransformerParameters> {
 public:
  using Parameters = detail::TransformerParameters;

  // Throws std::invalid_argument naming the field: sizes must be > 0, num_heads must divide
  // num_hiddens, dropout in [0, 1).
  explicit Transformer(const TransformerConfig& config);

  // src [B, Ts], src_valid_lens [B] in [0, Ts], tgt_input [B, Tt] (teacher forcing, causal).
  // Throws std::invalid_argument naming the argument: shapes, token ids outside the vocabulary.
  TransformerOutput forward(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                            TokenBatch tgt_input,
                            const EncoderDecoderForwardOptions& options = {}) const;

  // The loss of tgt_output [B, Tt] (labels, pad left out) and every parameter's gradient.
  EncoderDecoderLoss loss_and_gradients(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                                        TokenBatch tgt_input, TokenBatch tgt_output,
                                        const EncoderDecoderLossOptions& options);

  // One training step: the gradients as above, clipped (options.clip > 0), then one Adam step
  // with options.lr. Returns the loss before the step.
  float train_step(TokenBatch src, const std::vector<int32_t>& src_valid_lens, TokenBatch tgt_input,
                   TokenBatch tgt_output, const EncoderDecoderTrainOptions& options);

  // Greedy decoding of the whole batch at once: from bos, each step feeds back the argmax token,
  // for max_len steps (no dropout). Each decoder block keeps its self-attention's keys and values
  // in a KV cache, so a step attends only its new token's query.
  TransformerTranslation translate(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                                   const GreedyOptions& options) const;
};

}  // namespace attn
