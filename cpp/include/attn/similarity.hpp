#pragma once
// The similarity functions of attention pooling by similarity (Nadaraya-Watson kernel
// regression; d2l calls them kernels). Named Similarity here because "kernel" in this codebase
// means a compute kernel (cpp/src/kernels/); the JS API keeps d2l's word (`kernel`,
// `kernelValues`).

#include <string>
#include <string_view>

#include "attn/tensor.hpp"

namespace attn {

enum class Similarity { Gaussian, Boxcar, Epanechnikov, Constant };

// Parses "gaussian" | "boxcar" | "epanechnikov" | "constant".
// Throws std::invalid_argument naming `kernel` (the argument's name in kernel regression, as in
// d2l) and the accepted names otherwise.
Similarity parse_similarity(std::string_view name);
std::string similarity_name(Similarity similarity);

// alpha(d) for a distance d = ||q - k|| >= 0 and a bandwidth sigma > 0:
//   gaussian      exp(-(d / sigma)^2 / 2)
//   boxcar        1 if d / sigma <= 1, else 0
//   epanechnikov  max(0, 1 - d / sigma)
//   constant      1
// Throws std::invalid_argument if sigma is not a finite positive number.
float similarity_value(Similarity similarity, float distance, float bandwidth);

// similarity_value of n distances at once: out[i] = alpha(distances[i]) (out may be distances).
// Throws std::invalid_argument naming bandwidth as similarity_value does, or naming distances (with
// the index) for a distance that is negative or NaN; nothing is written then.
void similarity_values(Similarity similarity, const float* distances, Index n, float bandwidth,
                       float* out);

}  // namespace attn
