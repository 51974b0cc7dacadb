#include "checks.hpp"

#include <cmath>
#include <sstream>

namespace attn::detail {

std::string shape_string(const std::vector<Index>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out << ", ";
    if (shape[i] < 0) {
      out << '*';
    } else {
      out << shape[i];
    }
  }
  out << ']';
  return out.str();
}

void fail(const std::string& argument, const std::string& expected, const std::string& given) {
  throw std::invalid_argument(argument + ": expected " + expected + ", got " + given);
}

void require_shape(const std::string& argument, const std::vector<Index>& expected,
                   const std::vector<Index>& given) {
  bool ok = expected.size() == given.size();
  for (size_t i = 0; ok && i < expected.size(); ++i) {
    ok = expected[i] < 0 || expected[i] == given[i];
  }
  if (!ok) fail(argument, "shape " + shape_string(expected), shape_string(given));
}

void require_positive_finite(const std::string& argument, double value) {
  if (!(std::isfinite(value) && value > 0)) {
    std::ostringstream given;
    given << value;
    fail(argument, "a finite number > 0", given.str());
  }
}

}  // namespace attn::detail
