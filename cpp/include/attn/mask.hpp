#pragma once
// What may hide a key from a query. Several masks may be combined; a position is masked if any
// of them masks it. The additive mask is added first; a masked position's score is then
// replaced by `fill` whatever was added.

#include <cstdint>
#include <limits>
#include <vector>

#include "attn/tensor.hpp"

namespace attn {

// d2l's masked_softmax value: a fully masked row becomes uniform instead of NaN.
constexpr float kD2lFill = -1e6f;

struct Mask {
  // d2l's valid lengths: empty (none), one per batch row [B], or one per query [B * nq].
  // Keys j >= valid_lens[...] are masked. Each length must lie in [0, nk].
  std::vector<int32_t> valid_lens;

  // Boolean mask, 1 = masked out (PyTorch's attn_mask convention for bool tensors).
  // [nq, nk] broadcast over every score matrix (bool_mask_batch = 1), or one [nq, nk] block per
  // score matrix (bool_mask_batch = B, or B * heads in multi-head attention).
  const uint8_t* bool_mask = nullptr;
  Index bool_mask_batch = 0;

  // Additive float mask, added to the scores; batched like bool_mask.
  const float* additive = nullptr;
  Index additive_batch = 0;

  // Key padding, 1 = masked out: [B, nk] (PyTorch's key_padding_mask).
  const uint8_t* key_padding = nullptr;

  // Query i may only see keys j <= i.
  bool causal = false;

  // A sliding window (FlashAttention's window_size): query i sees key j only if
  // i - window_left <= j <= i + window_right; -1 leaves that side unbounded. Composes with every
  // other mask; with causal, window_right is moot.
  Index window_left = -1;
  Index window_right = -1;

  // The score a masked position gets before the softmax. d2l's -1e6 makes a fully masked row
  // uniform; -infinity makes it NaN, as PyTorch does.
  float fill = kD2lFill;

  bool empty() const {
    return valid_lens.empty() && !bool_mask && !additive && !key_padding && !causal &&
           window_left < 0 && window_right < 0;
  }
};

// Checks the mask against scores of shape [batch, nq, nk]; `batch_heads` is the number of
// score matrices per batch row sharing one valid length / key padding row (heads in
// multi-head attention; 1 otherwise). Throws std::invalid_argument naming the offending field.
void validate_mask(const Mask& mask, Index batch, Index nq, Index nk, Index batch_heads = 1);

}  // namespace attn
