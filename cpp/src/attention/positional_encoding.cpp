#include "attn/positional_encoding.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"

namespace attn {

Matrix positional_encoding(Index n, Index d) {
  if (n < 0) detail::fail("n", "a length >= 0", std::to_string(n));
  if (d < 0) detail::fail("d", "a dimension >= 0", std::to_string(d));
  Matrix encoding(n, d);
  for (Index i = 0; i < n; ++i) {
    for (Index column = 0; column < d; ++column) {
      const Index pair = column / 2;  // columns 2j and 2j+1 share one frequency
      // Computed in double: i / 10000^(2j/d) reaches ~1e4 radians, where float's phase error
      // would be visible.
      const double angle = static_cast<double>(i) / std::pow(10000.0, 2.0 * pair / d);
      encoding(i, column) = static_cast<float>(column % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return encoding;
}

}  // namespace attn
