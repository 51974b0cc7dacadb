#pragma once
// What the similarity kernels (attn/kernels.hpp) offer the rest of the core.

#include "attn/kernels.hpp"

namespace attn::detail {

// alpha as a function of u = distance / bandwidth, unchecked, for inner loops.
float kernel_of_scaled_distance(Kernel kernel, float u);

}  // namespace attn::detail
