#pragma once
// The decoder of attn/seq2seq.hpp stepped one target position at a time over the whole batch:
// with attention the first GRU layer's input at step t depends on the top layer's state after
// step t - 1, so the layers advance together, step by step. Keeps what the backward needs.

#include <memory>
#include <vector>

#include "attn/seq2seq.hpp"
#include "kernels/seeded_dropout.hpp"
#include "models/decoder_attention.hpp"
#include "models/seq2seq_parameters.hpp"
#include "nn/gru_layer.hpp"

namespace attn::detail {

class DecoderRun {
 public:
  // encoder_outputs [Ts * B, H] time-major (the encoder's top layer), encoder_states [L, B, H]
  // (its final states, the decoder's initial ones); weights: the model's parameter values.
  // When training, the GRU's dropout uses stream dropout_seed + 1 and the attention's + 2.
  DecoderRun(const Seq2SeqConfig& config, const Seq2Seq::Parameters& parameters,
             const float* weights, const Matrix& encoder_outputs, const Tensor3& encoder_states,
             const int32_t* valid_lens, Index steps, bool training, uint64_t dropout_seed);

  // Step t, given the embeddings [B, E] of its input tokens.
  void step(Index t, const float* embeddings);

  const float* top(Index t) const { return tapes_.back().state(t); }  // [B, H]
  Eigen::Map<const Matrix> top_outputs() const { return tapes_.back().outputs(); }
  // Step t's attention distribution [B, Ts]; attention only.
  const float* attention_weights(Index t) const { return attention_->weights(t); }

  struct Gradients {
    Matrix d_embeddings;       // [T * B, E]
    Matrix d_encoder_outputs;  // [Ts * B, H] time-major
    Tensor3 d_encoder_states;  // [L, B, H]
  };
  // d_top [T * B, H]: the loss's gradient with respect to the top outputs. Adds the decoder's
  // parameter gradients (attention and GRU) into `gradients`, laid out like the parameters.
  Gradients backward(const MatrixRef& d_top, float* gradients);

 private:
  float layer_dropout(Index layer, Index index) const;

  const Seq2SeqConfig& config_;
  const Seq2Seq::Parameters& parameters_;
  Index batch_, source_steps_, steps_, hidden_, embed_;
  std::vector<GruLayerWeights> layer_weights_;
  std::vector<GruLayerTape> tapes_;
  std::vector<Matrix> inputs_;  // each layer's inputs of every step [T * B, in]
  Dropout gru_dropout_;
  std::unique_ptr<DecoderAttention> attention_;  // null without attention
  Matrix fixed_context_;  // without attention: the encoder's last top output [B, H]
  Index context_column_, embedding_column_;  // where each sits in layer 0's input
};

}  // namespace attn::detail
