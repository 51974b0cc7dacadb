#pragma once
// A buffer of floats left uninitialised, for kernels that write every entry before reading it:
// std::vector<float>(n) zeroes them first. Zeroing the backward's buffers (a strip's are 3 MB at
// nk = 2048) was the larger part of what the scaling section found outside the regions at 16
// threads; the fused forward's packed K and V, and the panels a product packs for one call
// (gemm.cpp), are written whole by the packing.

#include <memory>

#include "attn/tensor.hpp"

namespace attn::detail {

class Floats {
 public:
  explicit Floats(Index size = 0)
      : data_(size > 0 ? new float[static_cast<size_t>(size)] : nullptr), size_(size) {}
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  Index size() const { return size_; }

 private:
  std::unique_ptr<float[]> data_;
  Index size_;
};

}  // namespace attn::detail
