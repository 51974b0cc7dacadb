#pragma once
// Argument checks shared by the core: each throws std::invalid_argument whose message names the
// argument and says what was expected and what was given.

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attn/tensor.hpp"

namespace attn::detail {

std::string shape_string(const std::vector<Index>& shape);
std::string number_string(double value);

[[noreturn]] void fail(const std::string& argument, const std::string& expected,
                       const std::string& given);

// `expected` entries < 0 match any size.
void require_shape(const std::string& argument, const std::vector<Index>& expected,
                   const std::vector<Index>& given);

inline std::vector<Index> shape_of(ConstBatch t) { return {t.batch, t.rows, t.cols}; }
inline std::vector<Index> shape_of(MutableBatch t) { return {t.batch, t.rows, t.cols}; }
inline std::vector<Index> shape_of(const MatrixRef& m) { return {m.rows(), m.cols()}; }

void require_positive_finite(const std::string& argument, double value);

// One value of an enum and the name the API spells it with.
template <typename Enum>
struct NamedValue {
  Enum value;
  const char* name;
};

// The value `table` names `name`; otherwise fails naming `argument`, expecting the table's
// names as 'a' | 'b' | ...
template <typename Enum, size_t N>
Enum parse_named(const char* argument, const NamedValue<Enum> (&table)[N], std::string_view name) {
  for (const auto& entry : table) {
    if (name == entry.name) return entry.value;
  }
  std::string names;
  for (const auto& entry : table) {
    names += (names.empty() ? "'" : " | '") + std::string(entry.name) + "'";
  }
  fail(argument, names, "'" + std::string(name) + "'");
}

}  // namespace attn::detail
