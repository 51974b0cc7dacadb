#pragma once
// Argument checks shared by the core: each throws std::invalid_argument whose message names the
// argument and says what was expected and what was given.

#include <initializer_list>
#include <stdexcept>
#include <string>
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

}  // namespace attn::detail
