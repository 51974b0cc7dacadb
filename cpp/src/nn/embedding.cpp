#include "attn/embedding.hpp"

#include "checks.hpp"

namespace attn {

void check_token_ids(const std::string& argument, const int32_t* ids, Index count, Index vocab) {
  for (Index i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      detail::fail(argument, "token ids in [0, " + std::to_string(vocab) + ")",
                   std::to_string(ids[i]) + " at index " + std::to_string(i));
    }
  }
}

Matrix embedding(const MatrixRef& weight, const int32_t* ids, Index count,
                 const std::string& argument) {
  check_token_ids(argument, ids, count, weight.rows());
  Matrix out(count, weight.cols());
  for (Index i = 0; i < count; ++i) out.row(i) = weight.row(ids[i]);
  return out;
}

void embedding_backward(const int32_t* ids, Index count, const MatrixRef& dy,
                        Eigen::Ref<Matrix> dweight) {
  detail::require_shape("dy", {count, dweight.cols()}, detail::shape_of(dy));
  for (Index i = 0; i < count; ++i) dweight.row(ids[i]) += dy.row(i);
}

}  // namespace attn
