#pragma once
// Shared vocabulary of the core: row-major float matrices and contiguous batches of them.
// Everything is float32 row-major (C order) so that a JS Float32Array maps onto it unchanged.

#include <Eigen/Core>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace attn {

using Index = Eigen::Index;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using MatrixRef = Eigen::Ref<const Matrix>;
using VectorRef = Eigen::Ref<const Vector>;

// A non-owning view of `batch` row-major matrices of shape [rows, cols], stored back to back:
// the layout of a [batch, rows, cols] tensor. Views never outlive the memory they point into.
template <typename Scalar>
struct BatchView {
  Scalar* data = nullptr;
  Index batch = 0;
  Index rows = 0;
  Index cols = 0;

  BatchView() = default;
  BatchView(Scalar* data_, Index batch_, Index rows_, Index cols_)
      : data(data_), batch(batch_), rows(rows_), cols(cols_) {}
  // A mutable view reads as a const one (a Tensor3's view() passes where input is expected).
  template <typename Other, typename = std::enable_if_t<std::is_same_v<const Other, Scalar> &&
                                                        !std::is_same_v<Other, Scalar>>>
  BatchView(
      const BatchView<Other>& other)  // NOLINT(google-explicit-constructor): as T* -> const T*
      : data(other.data), batch(other.batch), rows(other.rows), cols(other.cols) {}

  Index size() const { return batch * rows * cols; }
  Eigen::Map<std::conditional_t<std::is_const_v<Scalar>, const Matrix, Matrix>> operator[](
      Index b) const {
    return {data + b * rows * cols, rows, cols};
  }
};
using ConstBatch = BatchView<const float>;
using MutableBatch = BatchView<float>;

// An owning [batch, rows, cols] tensor, for C++ callers who do not manage buffers themselves.
struct Tensor3 {
  Index batch = 0;
  Index rows = 0;
  Index cols = 0;
  std::vector<float> data;

  Tensor3() = default;
  Tensor3(Index batch_, Index rows_, Index cols_, float fill = 0.0f)
      : batch(batch_),
        rows(rows_),
        cols(cols_),
        data(static_cast<size_t>(batch_ * rows_ * cols_), fill) {}

  ConstBatch view() const { return {data.data(), batch, rows, cols}; }
  MutableBatch view() { return {data.data(), batch, rows, cols}; }
  float& at(Index b, Index i, Index j) {
    return data[static_cast<size_t>((b * rows + i) * cols + j)];
  }
  float at(Index b, Index i, Index j) const {
    return data[static_cast<size_t>((b * rows + i) * cols + j)];
  }
};

}  // namespace attn
