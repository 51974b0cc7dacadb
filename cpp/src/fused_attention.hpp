#pragma once
// Scaled dot-product attention fused into one pass over the keys (flash-style): scores are
// computed a tile at a time, softmaxed online (running max and sum, rescaling what was pooled
// so far when the max grows) and pooled into the output at once, so no [nq, nk] score matrix
// exists unless the weights are asked for. Memory is O((nq + nk) d).

#include "attn/mask.hpp"
#include "attn/tensor.hpp"

namespace attn::detail {

// Which score matrix of a batch is being computed, for the mask lookups.
struct MaskContext {
  const Mask& mask;
  Index matrix;
  Index batch;
  Index batch_heads;
};

// One score matrix: q [nq, d], k [nk, d], v [nk, dv] (row-major) -> out [nq, dv], and, when
// weights is non-null, the softmax weights [nq, nk]. The mask must already be validated.
void f32_attention_fused(const float* q, const float* k, const float* v, Index nq, Index nk,
                         Index d, Index dv, float scale, const MaskContext& mask, float* out,
                         float* weights);

// The batched form: every matrix s of q/k/v [batch * batch_heads, n, d] in turn.
void attention_fused(ConstBatch q, ConstBatch k, ConstBatch v, float scale, const Mask& mask,
                     Index batch_heads, MutableBatch output, const MutableBatch* weights);

}  // namespace attn::detail
