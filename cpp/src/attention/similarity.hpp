#pragma once
// What the similarity functions (attn/similarity.hpp) offer the rest of the core.

#include <algorithm>
#include <cmath>

#include "attn/similarity.hpp"

namespace attn::detail {

// alpha as a function of u = distance / bandwidth, unchecked, for inner loops (inline, so that
// a loop's compiler can take the switch out of it).
inline float similarity_of_scaled_distance(Similarity similarity, float u) {
  switch (similarity) {
    case Similarity::Gaussian:
      return std::exp(-0.5f * u * u);
    case Similarity::Boxcar:
      return u <= 1.0f ? 1.0f : 0.0f;
    case Similarity::Epanechnikov:
      return std::max(0.0f, 1.0f - u);
    case Similarity::Constant:
      return 1.0f;
  }
  return 0.0f;
}

}  // namespace attn::detail
