// The similarity kernels of attn/kernels.hpp (Gaussian, boxcar, Epanechnikov, constant), not
// compute kernels: those live in cpp/src/kernels/.

#include "similarity_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "checks.hpp"

namespace attn {

namespace {
constexpr detail::NamedValue<Kernel> kKernelNames[] = {{Kernel::Gaussian, "gaussian"},
                                                       {Kernel::Boxcar, "boxcar"},
                                                       {Kernel::Epanechnikov, "epanechnikov"},
                                                       {Kernel::Constant, "constant"}};
}  // namespace

Kernel parse_kernel(std::string_view name) {
  return detail::parse_named("kernel", kKernelNames, name);
}

std::string kernel_name(Kernel kernel) {
  for (const auto& entry : kKernelNames) {
    if (kernel == entry.value) return entry.name;
  }
  return "unknown";
}

float kernel_value(Kernel kernel, float distance, float bandwidth) {
  detail::require_positive_finite("bandwidth", bandwidth);
  return detail::kernel_of_scaled_distance(kernel, distance / bandwidth);
}

void kernel_values(Kernel kernel, const float* distances, Index n, float bandwidth, float* out) {
  detail::require_positive_finite("bandwidth", bandwidth);
  for (Index i = 0; i < n; ++i) {
    if (!(distances[i] >= 0.0f)) {  // NaN fails too
      detail::fail("distances", "distances >= 0",
                   detail::number_string(distances[i]) + " at index " + std::to_string(i));
    }
  }
  for (Index i = 0; i < n; ++i) {
    out[i] = detail::kernel_of_scaled_distance(kernel, distances[i] / bandwidth);
  }
}

float detail::kernel_of_scaled_distance(Kernel kernel, float u) {
  switch (kernel) {
    case Kernel::Gaussian:
      return std::exp(-0.5f * u * u);
    case Kernel::Boxcar:
      return u <= 1.0f ? 1.0f : 0.0f;
    case Kernel::Epanechnikov:
      return std::max(0.0f, 1.0f - u);
    case Kernel::Constant:
      return 1.0f;
  }
  return 0.0f;
}

}  // namespace attn
