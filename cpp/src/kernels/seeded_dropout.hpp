#pragma once
// Inverted dropout on attention weights, drawn from a RandomStream so that native and wasm builds
// drop the same weights for the same seed. Weight number t of the whole batch of score matrices
// (row-major: matrix s, row i, key j is t = (s * nq + i) * nk + j) uses the stream's draw t, so
// the backward regenerates exactly the forward's mask from the seed, in any order.

#include <cstdint>

#include "attn/tensor.hpp"
#include "random_stream.hpp"

namespace attn::detail {

class Dropout {
 public:
  Dropout(float probability, uint64_t seed)
      : probability_(probability), keep_scale_(1.0f / (1.0f - probability)), random_(seed) {}

  bool active() const { return probability_ > 0.0f; }

  // What weight number `index` is multiplied by: 0 (dropped) or 1 / (1 - p), so that the
  // expected pooled value is unchanged.
  float factor(uint64_t index) const {
    return random_.uniform_at(index) < probability_ ? 0.0f : keep_scale_;
  }

  // values[t] *= factor(first_index + t) over a contiguous run of weights.
  void apply(float* values, Index count, uint64_t first_index) const {
    for (Index t = 0; t < count; ++t) values[t] *= factor(first_index + static_cast<uint64_t>(t));
  }

 private:
  float probability_;
  float keep_scale_;
  RandomStream random_;
};

}  // namespace attn::detail
