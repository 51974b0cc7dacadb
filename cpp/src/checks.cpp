#include "checks.hpp"

#include <cmath>
#include <cstdio>

namespace attn::detail {

// Strings are built without iostreams, which would add ~100 KB of locale code to the wasm.
std::string shape_string(const std::vector<Index>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i] < 0 ? "*" : std::to_string(shape[i]);
  }
  return out + "]";
}

// NaN and the infinities are spelled as JavaScript does, since these messages reach JS users.
std::string number_string(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
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
    fail(argument, "a finite number > 0", number_string(value));
  }
}

}  // namespace attn::detail
