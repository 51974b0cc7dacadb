#pragma once
// Inverted dropout on a tensor, reproducible: entry t (row-major) is kept unless draw t of a
// splitmix64 stream seeded with `seed` falls below the probability, and kept entries are scaled
// by 1 / (1 - probability). The same seed drops the same entries in native and wasm builds, so a
// backward regenerates its forward's mask from the seed alone.

#include <cstdint>

#include "attn/tensor.hpp"

namespace attn {

struct DropoutOptions {
  float probability = 0.0f;  // in [0, 1); 0 drops nothing
  uint64_t seed = 0;
};

// x [n, d] -> dropout(x). Its backward is itself: the gradient of sum(dropout(x) * dy) with
// respect to x is dropout(dy) with the same options. Throws std::invalid_argument naming
// `dropout` unless the probability lies in [0, 1).
Matrix dropout(const MatrixRef& x, const DropoutOptions& options);

}  // namespace attn
