// The similarity kernels of attn/similarity.hpp (Gaussian, boxcar, Epanechnikov, constant), not
// compute kernels: those live in cpp/src/kernels/.

#include "similarity.hpp"

#include <algorithm>
#include <cmath>

#include "checks.hpp"

namespace attn {

namespace {
constexpr detail::NamedValue<Similarity> kSimilarityNames[] = {
    {Similarity::Gaussian, "gaussian"},
    {Similarity::Boxcar, "boxcar"},
    {Similarity::Epanechnikov, "epanechnikov"},
    {Similarity::Constant, "constant"}};
}  // namespace

Similarity parse_similarity(std::string_view name) {
  return detail::parse_named("kernel", kSimilarityNames, name);
}

std::string similarity_name(Similarity similarity) {
  for (const auto& entry : kSimilarityNames) {
    if (similarity == entry.value) return entry.name;
  }
  return "unknown";
}

float similarity_value(Similarity similarity, float distance, float bandwidth) {
  detail::require_positive_finite("bandwidth", bandwidth);
  return detail::similarity_of_scaled_distance(similarity, distance / bandwidth);
}

void similarity_values(Similarity similarity, const float* distances, Index n, float bandwidth,
                       float* out) {
  detail::require_positive_finite("bandwidth", bandwidth);
  for (Index i = 0; i < n; ++i) {
    if (!(distances[i] >= 0.0f)) {  // NaN fails too
      detail::fail("distances", "distances >= 0",
                   detail::number_string(distances[i]) + " at index " + std::to_string(i));
    }
  }
  for (Index i = 0; i < n; ++i) {
    out[i] = detail::similarity_of_scaled_distance(similarity, distances[i] / bandwidth);
  }
}

}  // namespace attn
