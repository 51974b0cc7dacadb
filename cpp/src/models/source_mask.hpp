#pragma once
// The source's valid lengths as a mask over the encoder's positions, for both of d2l's
// encoder-decoders (Seq2Seq's Bahdanau decoder, the Transformer's cross-attention and encoder).

#include <cstdint>

#include "attn/mask.hpp"

namespace attn::detail {

// d2l's fill -1e6 is Mask's default, so a length of 0 is attended uniformly.
inline Mask source_mask(const int32_t* valid_lens, Index batch) {
  Mask mask;
  mask.valid_lens.assign(valid_lens, valid_lens + batch);
  return mask;
}

}  // namespace attn::detail
