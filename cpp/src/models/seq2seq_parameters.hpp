#pragma once
// Where the model's tensors live: one flat float buffer in state-dict order (so Adam and the
// gradient norm run over one span), with each tensor's name, shape and offset.

#include <array>
#include <vector>

#include "attn/gru.hpp"
#include "attn/seq2seq.hpp"
#include "models/decoder_attention.hpp"

namespace attn {

struct Seq2Seq::Parameters {
  using GruIds = std::array<Index, 4>;  // weight_ih, weight_hh, bias_ih, bias_hh

  explicit Parameters(const Seq2SeqConfig& config);

  std::vector<ParameterSpec> specs;
  std::vector<Index> offsets;
  Index total = 0;
  std::vector<float> values;  // [total]

  Index encoder_embedding = -1;
  std::vector<GruIds> encoder_rnn;
  Index attention_w_k = -1, attention_w_q = -1, attention_w_v = -1;  // -1 without attention
  Index decoder_embedding = -1;
  std::vector<GruIds> decoder_rnn;
  Index dense_weight = -1, dense_bias = -1;

  Index rows(Index id) const { return specs[static_cast<size_t>(id)].shape[0]; }
  Index cols(Index id) const {
    const auto& shape = specs[static_cast<size_t>(id)].shape;
    return shape.size() > 1 ? shape[1] : 1;
  }
  // Views of tensor `id` in a buffer laid out like `values` (the values or their gradients).
  ConstMatrixMap matrix(const float* base, Index id) const {
    return {base + offsets[static_cast<size_t>(id)], rows(id), cols(id)};
  }
  MatrixMap matrix(float* base, Index id) const {
    return {base + offsets[static_cast<size_t>(id)], rows(id), cols(id)};
  }
  Eigen::Map<const Vector> vector(const float* base, Index id) const {
    return {base + offsets[static_cast<size_t>(id)], rows(id) * cols(id)};
  }
  Eigen::Map<Vector> vector(float* base, Index id) const {
    return {base + offsets[static_cast<size_t>(id)], rows(id) * cols(id)};
  }
  std::vector<GruLayerWeights> gru(const float* base, const std::vector<GruIds>& layers) const {
    std::vector<GruLayerWeights> out;
    for (const GruIds& l : layers) {
      out.push_back(
          {matrix(base, l[0]), matrix(base, l[1]), vector(base, l[2]), vector(base, l[3])});
    }
    return out;
  }
  detail::AdditiveWeights attention(const float* base) const {
    return {matrix(base, attention_w_q), matrix(base, attention_w_k), vector(base, attention_w_v)};
  }

 private:
  Index add(const std::string& name, std::vector<Index> shape);
  std::vector<GruIds> add_gru(const std::string& prefix, Index input, Index hidden, Index layers);
};

}  // namespace attn
