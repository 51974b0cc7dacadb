#pragma once
// Where the Transformer's tensors live (models/flat_parameters.hpp), by what they are, and
// views of them as the blocks take them.

#include <vector>

#include "attention/multi_head_core.hpp"
#include "attn/feed_forward.hpp"
#include "attn/transformer.hpp"
#include "models/flat_parameters.hpp"

namespace attn::detail {

struct TransformerParameters : FlatParameters {
  struct Attention {
    Index w_q, w_k, w_v, w_o;
  };
  struct Norm {
    Index weight, bias;
  };
  struct FeedForward {
    Index dense1_weight, dense1_bias, dense2_weight, dense2_bias;
  };
  struct EncoderBlock {
    Attention attention;
    Norm addnorm1;
    FeedForward ffn;
    Norm addnorm2;
  };
  struct DecoderBlock {
    Attention attention1;
    Norm addnorm1;
    Attention attention2;
    Norm addnorm2;
    FeedForward ffn;
    Norm addnorm3;
  };

  explicit TransformerParameters(const TransformerConfig& config);

  Index heads;
  Index encoder_embedding;
  std::vector<EncoderBlock> encoder;
  Index decoder_embedding;
  std::vector<DecoderBlock> decoder;
  Index dense_weight, dense_bias;

  // d2l's MultiHeadAttention as the attention chain takes it: no biases, packed per call.
  MultiHeadWeights attention(const float* base, const Attention& ids) const;
  FeedForwardWeights ffn(const float* base, const FeedForward& ids) const;

 private:
  Attention add_attention(const std::string& prefix, Index hidden);
  Norm add_norm(const std::string& prefix, Index hidden);
  FeedForward add_ffn(const std::string& prefix, Index hidden, Index ffn_hidden);
  void initialise(uint64_t seed);
};

}  // namespace attn::detail
