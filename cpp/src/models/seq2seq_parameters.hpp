#pragma once
// Where the model's tensors live (models/flat_parameters.hpp), by what they are.

#include <array>
#include <vector>

#include "attn/gru.hpp"
#include "attn/seq2seq.hpp"
#include "models/decoder_attention.hpp"
#include "models/flat_parameters.hpp"

namespace attn::detail {

struct Seq2SeqParameters : FlatParameters {
  using GruIds = std::array<Index, 4>;  // weight_ih, weight_hh, bias_ih, bias_hh

  explicit Seq2SeqParameters(const Seq2SeqConfig& config);

  Index encoder_embedding = -1;
  std::vector<GruIds> encoder_rnn;
  Index attention_w_k = -1, attention_w_q = -1, attention_w_v = -1;  // -1 without attention
  Index decoder_embedding = -1;
  std::vector<GruIds> decoder_rnn;
  Index dense_weight = -1, dense_bias = -1;

  std::vector<GruLayerWeights> gru(const float* base, const std::vector<GruIds>& layers) const {
    std::vector<GruLayerWeights> out;
    for (const GruIds& l : layers) {
      out.push_back(
          {matrix(base, l[0]), matrix(base, l[1]), vector(base, l[2]), vector(base, l[3])});
    }
    return out;
  }
  AdditiveWeights attention(const float* base) const {
    return {matrix(base, attention_w_q), matrix(base, attention_w_k), vector(base, attention_w_v)};
  }

 private:
  std::vector<GruIds> add_gru(const std::string& prefix, Index input, Index hidden, Index layers);
};

}  // namespace attn::detail
