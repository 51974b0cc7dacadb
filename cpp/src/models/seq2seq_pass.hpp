#pragma once
// One teacher-forced pass of the encoder-decoder over a batch, kept for its backward, and greedy
// decoding. Inputs are checked by the caller (Seq2Seq).

#include <memory>
#include <vector>

#include "attn/gru.hpp"
#include "attn/seq2seq.hpp"
#include "models/seq2seq_decoder.hpp"
#include "models/seq2seq_parameters.hpp"

namespace attn::detail {

// ids [B, T] batch-major -> [T * B] time-major (row t * B + b), the layout of the recurrences.
std::vector<int32_t> time_major(TokenBatch tokens);

// The encoder over a batch: d2l's Seq2SeqEncoder. (Not EncoderRun: that is the Transformer's, in
// the same namespace, and two classes of one name break the one-definition rule; the linker kept
// one class's destructor for both, which ASan caught as a use after free.)
struct GruEncoderRun {
  GruEncoderRun(const Seq2SeqConfig& config, const Seq2Seq::Parameters& parameters,
                const float* weights, TokenBatch src, bool training, uint64_t dropout_seed);

  std::vector<int32_t> ids;  // [Ts * B] time-major
  GruForward gru;
  Matrix outputs;  // [Ts * B, H] the top layer's, time-major
  Tensor3 states;  // [L, B, H] final states
};

class Seq2SeqPass {
 public:
  Seq2SeqPass(const Seq2SeqConfig& config, const Seq2Seq::Parameters& parameters,
              const float* weights, TokenBatch src, const int32_t* src_valid_lens,
              TokenBatch tgt_input, bool training, uint64_t dropout_seed);

  const Matrix& logits() const { return logits_; }  // [Tt * B, V] time-major
  Tensor3 batch_major_logits() const;               // [B, Tt, V]
  Tensor3 attention() const;                        // [B, Tt, Ts], or empty

  // dlogits [Tt * B, V] time-major; adds every parameter's gradient into `gradients`.
  void backward(const Matrix& dlogits, float* gradients);

 private:
  const Seq2SeqConfig& config_;
  const Seq2Seq::Parameters& parameters_;
  const float* weights_;
  Index batch_, source_steps_, target_steps_;
  GruEncoderRun encoder_;
  std::vector<int32_t> target_ids_;  // [Tt * B] time-major
  DecoderRun decoder_;
  Matrix logits_;
};

Seq2SeqTranslation greedy_translate(const Seq2SeqConfig& config,
                                    const Seq2Seq::Parameters& parameters, TokenBatch src,
                                    const int32_t* src_valid_lens,
                                    const Seq2SeqTranslateOptions& options);

}  // namespace attn::detail
