#pragma once
// Inverted dropout on attention weights, drawn from a RandomStream so that native and wasm builds
// drop the same weights for the same seed.

#include <cstdint>

#include "attn/tensor.hpp"
#include "random_stream.hpp"

namespace attn::detail {

class DropoutStream {
 public:
  DropoutStream(float probability, uint64_t seed) : probability_(probability), random_(seed) {}

  // Zeroes each entry with the stream's probability and scales survivors by 1 / (1 - p), so the
  // expected pooled value is unchanged.
  void apply(MatrixMap values) {
    const float keep_scale = 1.0f / (1.0f - probability_);
    for (Index i = 0; i < values.size(); ++i) {
      float& value = values.data()[i];
      value = random_.next_uniform() < probability_ ? 0.0f : value * keep_scale;
    }
  }

 private:
  float probability_;
  RandomStream random_;
};

}  // namespace attn::detail
