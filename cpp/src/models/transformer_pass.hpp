#pragma once
// One teacher-forced pass of the Transformer over a batch, kept for its backward, and greedy
// decoding with a KV cache per decoder block. Inputs are checked by the caller (Transformer).
// Activations are batch-major rows: [B * T, H] is [B, T, H].

#include <vector>

#include "attn/transformer.hpp"
#include "models/transformer_layers.hpp"

namespace attn::detail {

struct EncoderBlockRun {
  AttentionRun attention;
  Matrix y, hidden, ffn, output;  // AddNorm1, relu(dense1), FFN, AddNorm2
};

struct DecoderBlockRun {
  AttentionRun self, cross;
  Matrix y, z, hidden, ffn, output;  // AddNorm1, AddNorm2, relu(dense1), FFN, AddNorm3
};

// The encoder over a batch, kept for its backward.
struct EncoderRun {
  Matrix input;  // embedded, positions added, dropped out
  std::vector<EncoderBlockRun> blocks;
  const Matrix& output() const { return blocks.back().output; }
};

// `encoding` holds at least Ts positions; `weights`, when non-null, receives each block's
// attention weights.
EncoderRun run_encoder(const Transformer::Parameters& parameters, TokenBatch src,
                       const Mask& source_mask, const DropoutSites& dropout, const Matrix& encoding,
                       std::vector<Tensor3>* weights);

class TransformerPass {
 public:
  // `attention`, when non-null, receives every attention layer's weights (before dropout).
  TransformerPass(const TransformerConfig& config, const Transformer::Parameters& parameters,
                  TokenBatch src, const int32_t* src_valid_lens, TokenBatch tgt_input,
                  const DropoutSites& dropout, TransformerAttention* attention = nullptr);

  const Matrix& logits() const { return logits_; }  // [B * Tt, V]

  // dlogits [B * Tt, V]; adds every parameter's gradient into `gradients`.
  void backward(const Matrix& dlogits, float* gradients) const;

 private:
  void decode(TransformerAttention* attention);
  // The gradient with respect to the encoder's output.
  Matrix decoder_backward(const Matrix& dlogits, float* gradients) const;

  const TransformerConfig& config_;
  const Transformer::Parameters& p_;
  const float* values_;
  TokenBatch src_, tgt_;
  Mask source_mask_, causal_mask_;
  const DropoutSites& dropout_;
  Matrix encoding_;  // positional encoding rows for max(Ts, Tt) positions
  EncoderRun encoder_;
  Matrix decoder_input_;
  std::vector<DecoderBlockRun> decoder_;
  Matrix logits_;
};

TransformerTranslation transformer_translate(const TransformerConfig& config,
                                             const Transformer::Parameters& parameters,
                                             TokenBatch src, const int32_t* src_valid_lens,
                                             const GreedyOptions& options);

}  // namespace attn::detail
