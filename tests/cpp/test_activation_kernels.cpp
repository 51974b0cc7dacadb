// The tanh and sigmoid micro-kernels (activation_kernels.hpp) against double-precision libm, over
// the range the recurrences meet, the tails where exp underflows, lengths that are not a multiple
// of the vector width, and the special values.

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/activation_kernels.hpp"

namespace {

using Catch::Matchers::WithinAbs;

std::vector<float> grid(float lo, float hi, int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = n == 1 ? lo : lo + (hi - lo) * i / (n - 1);
  }
  return x;
}

template <typename Kernel, typename Reference>
void check_kernel(Kernel kernel, Reference reference, const char* name) {
  for (const auto& [lo, hi] : {std::pair{-10.0f, 10.0f}, {-1e-3f, 1e-3f}, {-100.0f, 100.0f}}) {
    for (int n : {1, 3, 4, 7, 1001}) {
      const std::vector<float> x = grid(lo, hi, n);
      std::vector<float> y(x.size());
      kernel(x.data(), y.data(), static_cast<attn::Index>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        const double want = reference(static_cast<double>(x[i]));
        INFO(name << "(" << x[i] << ")");
        CHECK_THAT(y[i], WithinAbs(want, 2e-7));
      }
    }
  }
  // In place, and the special values.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special{inf, -inf, std::numeric_limits<float>::quiet_NaN(), 0.0f, 1e30f};
  kernel(special.data(), special.data(), 5);
  CHECK(special[0] == static_cast<float>(reference(inf)));
  CHECK(special[1] == static_cast<float>(reference(-inf)));
  CHECK(std::isnan(special[2]));
  // The bound is absolute: near 0 the 1 - exp(-2|x|) of tanh cancels (tanh(0) is within it,
  // not exactly 0).
  CHECK_THAT(special[3], WithinAbs(reference(0.0), 2e-7));
  CHECK(special[4] == 1.0f);
}

}  // namespace

TEST_CASE("f32_tanh is within 2e-7 of tanh", "[kernels]") {
  check_kernel(
      attn::detail::f32_tanh, [](double x) { return std::tanh(x); }, "tanh");
}

TEST_CASE("f32_sigmoid is within 2e-7 of the logistic function", "[kernels]") {
  check_kernel(
      attn::detail::f32_sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, "sigmoid");
}
