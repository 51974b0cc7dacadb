#pragma once
// What the similarity functions (attn/similarity.hpp) offer the rest of the core.

#include "attn/similarity.hpp"

namespace attn::detail {

// alpha as a function of u = distance / bandwidth, unchecked, for inner loops.
float similarity_of_scaled_distance(Similarity similarity, float u);

}  // namespace attn::detail
