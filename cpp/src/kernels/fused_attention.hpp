#pragma once
// Scaled dot-product attention fused into one pass over the keys (flash-style): scores are
// computed a block of 512 keys (128 under a sliding window) at a time, softmaxed online (running
// max and sum, rescaling what was pooled so far when the max grows) and pooled into the output
// at once, so no [nq, nk] score matrix exists unless the weights are asked for.
// Memory is O((nq + nk) d).

#include "attn/mask.hpp"
#include "attn/tensor.hpp"
#include "row_mask.hpp"
#include "seeded_dropout.hpp"

namespace attn::detail {

// What the fused kernels take beyond q, k, v, the scale, the mask and dropout: the score
// modifiers, grouped K/V heads, and the extra results.
struct FusedExtras {
  ScoreModifiers modifiers;
  // K/V matrices per batch row (grouped-query attention): query matrix b * batch_heads + h
  // reads K/V matrix b * kv_heads + h / (batch_heads / kv_heads). 0: as many as batch_heads.
  Index kv_heads = 0;
  float* lse = nullptr;     // forward: log of each row's softmax denominator [matrices * nq]
  float* dsinks = nullptr;  // backward, with sinks: their gradient [batch_heads]
};

// Whether the kernels leave out key blocks whose weights are exactly 0 (RowMask::skips): the
// results are the same bit for bit either way; Compute exists so that tests can show it.
enum class HiddenBlocks { Skip, Compute };

// K and V as the fused kernel reads them: keys as panels of 16 keys, each [d][16] and
// zero-padded past nk (f32_pack_panels of K, transposed), key j0's panel at keys + j0 * d; values
// as panels of 16 columns, each [stride][16] (stride >= nk), column c's panel at
// values + c * stride. The scores are q . key: a scale must already be in q or in the keys.
struct PackedKeysValues {
  const float* keys;
  const float* values;
  Index stride;
  // When non-null, K and V are held as IEEE halves in panels of the same layout (and keys and
  // values are unused): attention_fused_packed widens each chunk to floats as it reads it.
  const uint16_t* half_keys = nullptr;
  const uint16_t* half_values = nullptr;
};

// Score matrices m = 0 .. count - 1 on K and V packed beforehand (a KV cache keeps them so),
// matrix m's at key_step and value_step floats past `first`: q [count, nq, d] (scaled already)
// -> out [count, nq, dv], the mask of matrix m resolved as {mask, m, count / batch_heads,
// batch_heads} and already validated. Split across the thread pool in (matrix, key chunk) tasks:
// past 1024 keys a matrix's keys go in chunks of 1024 whose partial softmaxes are merged in
// order, which differs from one pass over the keys by rounding only (and not with the thread
// count), so that a few long sequences still occupy many threads.
// The mask may only hide keys by position (causal, the window): each chunk is worked on in its
// own key numbering. With extras.kv_heads, K/V matrix k (at k * key_step) serves the query matrices
// k * g .. k * g + g - 1 (g = batch_heads / kv_heads), whose rows are stacked into one
// [g * nq, d] matrix (they are consecutive in q and out): each block of cached keys is read
// once for every head of its group. Query i sits at key position i + query_offset (causality,
// the window and ALiBi measure from there); extras.lse receives each row's log-sum-exp.
void attention_fused_packed(const float* q, const PackedKeysValues& first, Index key_step,
                            Index value_step, Index count, Index nq, Index nk, Index d, Index dv,
                            const Mask& mask, Index batch_heads, float* out,
                            const FusedExtras& extras = {}, Index query_offset = 0);

// Every score matrix s of q [batch * batch_heads, nq, d], k [.., nk, d], v [.., nk, dv] ->
// output [.., nq, dv], and, when weights is non-null, the softmax weights [.., nq, nk]; the mask
// must already be validated. Key blocks are the same with and without weights (so is the
// output); the weights are each block's exp(s - running max) kept as the pass goes and
// normalised in one sweep per row once its max and sum are final. Split across the thread pool
// in (matrix, 64-query block) tasks. Under `dropout` the pooled weights are dropped (weight
// (s, i, j) takes draw (s * nq + i) * nk + j, as the backward regenerates them); the weights
// written are those before dropout.
// With extras.kv_heads, k and v hold batch * kv_heads matrices, each packed once and read by
// every query head of its group; tasks are then (K/V matrix, query head, query block).
void attention_fused(ConstBatch q, ConstBatch k, ConstBatch v, float scale, const Mask& mask,
                     Index batch_heads, const Dropout& dropout, MutableBatch output,
                     const MutableBatch* weights, HiddenBlocks hidden_blocks = HiddenBlocks::Skip,
                     const FusedExtras& extras = {});

// Gradients of sum(output * grad_output) with respect to q, k and v, flash-style: a block of
// queries at a time against every key (a strip of at most 64 x nk scores), so no [nq, nk]
// matrix exists and the extra memory is O((nq + nk) d + nk). Keys hidden from a whole block by
// valid lengths or causality (whose weights are exactly 0) are never multiplied (RowMask::skips,
// the forward's decision). `dropout` is the forward's, regenerated per weight; `output`, when
// non-null, receives the forward output (multi-head attention needs it). Shapes as in
// attention_fused; dq, dk, dv shaped like q, k, v. Split across the thread pool by whole matrices
// when each thread gets as many or at least 4, else by groups of strips (a region per matrix,
// whose groups' sums of dk and dv are added in group order), with the same bits either way and
// on every thread count. With extras.kv_heads, a K/V matrix's dk and dv sum its group's query
// heads strip by strip, the heads of a strip in head order.
void attention_fused_backward(ConstBatch q, ConstBatch k, ConstBatch v, ConstBatch grad_output,
                              float scale, const Mask& mask, Index batch_heads,
                              const Dropout& dropout, MutableBatch dq, MutableBatch dk,
                              MutableBatch dv, const MutableBatch* output,
                              HiddenBlocks hidden_blocks = HiddenBlocks::Skip,
                              const FusedExtras& extras = {});

}  // namespace attn::detail
