#pragma once
// Similarity kernels for attention pooling by similarity (Nadaraya-Watson).

#include <string>
#include <string_view>

#include "attn/tensor.hpp"

namespace attn {

enum class Kernel { Gaussian, Boxcar, Epanechnikov, Constant };

// Parses "gaussian" | "boxcar" | "epanechnikov" | "constant".
// Throws std::invalid_argument naming `kernel` and the accepted names otherwise.
Kernel parse_kernel(std::string_view name);
std::string kernel_name(Kernel kernel);

// alpha(d) for a distance d = ||q - k|| >= 0 and a bandwidth sigma > 0:
//   gaussian      exp(-(d / sigma)^2 / 2)
//   boxcar        1 if d / sigma <= 1, else 0
//   epanechnikov  max(0, 1 - d / sigma)
//   constant      1
// Throws std::invalid_argument if sigma is not a finite positive number.
float kernel_value(Kernel kernel, float distance, float bandwidth);

// kernel_value of n distances at once: out[i] = alpha(distances[i]) (out may be distances).
// Throws std::invalid_argument naming bandwidth as kernel_value does, or naming distances (with
// the index) for a distance that is negative or NaN; nothing is written then.
void kernel_values(Kernel kernel, const float* distances, Index n, float bandwidth, float* out);

}  // namespace attn
