#pragma once
// What the core's two encoder-decoder models (Seq2Seq with Bahdanau attention, Transformer)
// share: token batches, and the options of their forward, loss, training step and greedy
// translation, so that code moves from one model to the other.

#include <cstdint>
#include <optional>
#include <vector>

#include "attn/state_dict.hpp"
#include "attn/tensor.hpp"

namespace attn {

// Token ids, row-major [batch, steps], viewed (not owned).
struct TokenBatch {
  const int32_t* data = nullptr;
  Index batch = 0;
  Index steps = 0;
};

struct EncoderDecoderForwardOptions {
  bool training = false;      // dropout on (when the model's dropout > 0)
  uint64_t dropout_seed = 0;  // the stream when training
};

struct EncoderDecoderLossOptions {
  int32_t pad = 0;  // labels equal to pad are left out of the mean
  bool training = true;
  // The dropout stream; by default each call draws a fresh one from the model's seed.
  std::optional<uint64_t> dropout_seed;
};

struct EncoderDecoderLoss {
  float loss = 0.0f;
  std::vector<NamedTensor> gradients;  // every parameter's, in parameters() order and names
};

struct EncoderDecoderTrainOptions {
  int32_t pad = 0;
  float lr = 1e-3f;
  float clip = 0.0f;  // max global gradient norm; 0 clips nothing
  std::optional<uint64_t> dropout_seed;
};

struct GreedyOptions {
  int32_t bos = 0;
  int32_t eos = 0;
  Index max_len = 0;
};

}  // namespace attn
