#pragma once
// What the encoder-decoder models share around their passes: argument checks that name the
// argument, the initialisation's random draws, dropout streams per call, and the clipped Adam
// step over the flat parameters.

#include <cstdint>
#include <string>
#include <vector>

#include "attn/encoder_decoder.hpp"
#include "attn/optim.hpp"
#include "kernels/random_stream.hpp"
#include "models/flat_parameters.hpp"

namespace attn::detail {

// tokens [batch, T >= 1] (batch < 0: any B >= 1) with ids in [0, vocab).
void check_tokens(const std::string& name, TokenBatch tokens, Index batch, Index vocab);
// src_valid_lens [batch], each in [0, steps].
void check_lengths(const std::vector<int32_t>& lens, Index batch, Index steps);
// bos and eos in [0, vocab), max_len >= 1.
void check_greedy_options(const GreedyOptions& options, Index vocab);
// The size fields of a model's config, each > 0, and its dropout in [0, 1).
void check_sizes(std::initializer_list<std::pair<const char*, Index>> sizes, float dropout);

// Mixes a seed and a count into a new seed (splitmix64's finaliser): successive training calls
// drop independently, and so do a pass's dropout sites.
uint64_t mix(uint64_t seed, uint64_t count);

// Whether a parameter's name ends with suffix: the initialisation picks a layer's draw by it.
bool ends_with(const std::string& name, const std::string& suffix);

// The initialisation's draws, from one splitmix64 stream in state-dict order.
class Initializer {
 public:
  explicit Initializer(uint64_t seed) : random_(seed) {}
  void uniform(float* w, Index n, double bound);  // U(-bound, bound)
  void normal(float* w, Index n);                 // N(0, 1), nn.Embedding's
  void fill(float* w, Index n, float value);      // no draws: LayerNorm's ones and zeros

 private:
  RandomStream random_;
};

// A training step's lr and clip (naming them).
void check_train_options(const EncoderDecoderTrainOptions& options);

}  // namespace attn::detail
