#pragma once
// What the attention functions of attention.cpp and attention_backward.cpp share: their
// argument checks, the default scale, and the unfused path (a whole score matrix at a time, then
// softmax_and_pool), which additive attention takes; scaled dot-product and multi-head
// attention take the fused kernel (kernels/fused_attention.hpp).

#include <functional>

#include "attn/attention.hpp"
#include "kernels/fused_attention.hpp"

namespace attn::detail {

// Fills the [nq, nk] score matrix of score matrix number `matrix`.
using ScoreFiller = std::function<void(Index matrix, MatrixMap scores)>;

void check_attention_options(const AttentionOptions& options);

// Fails when options carry heads or score modifiers, which only scaled dot-product attention
// takes.
void check_no_heads_or_modifiers(const AttentionOptions& options);

// Scaled dot-product attention's heads and score modifiers, checked against q and k (whose
// shapes they decide): the fused kernels' extras, pointing into options.
FusedExtras check_heads_and_modifiers(ConstBatch q, ConstBatch k, const AttentionOptions& options);

// The score modifiers for `heads` heads, checked (softcap finite and > 0, slopes and sinks
// empty or one finite number per head): the kernels' view of them, pointing into the vectors.
ScoreModifiers check_modifiers(const std::optional<float>& softcap,
                               const std::vector<float>& alibi_slopes,
                               const std::vector<float>& sinks, Index heads);

// The checks every attention function shares once q and k are known to fit together: values,
// outputs, options and the mask against scores [B, nq, nk] (B counting batch rows times
// options.heads).
void check_pooling_arguments(ConstBatch q, ConstBatch k, ConstBatch v,
                             const AttentionOptions& options, MutableBatch output,
                             const MutableBatch* weights);

// options.scale, or 1/sqrt(d) (1 for d = 0).
float default_scale(const AttentionOptions& options, Index d);

// v [batch, nk, dv] -> output [batch, nq, dv]; weights (optional) [batch, nq, nk] receive the
// attention distribution before dropout. The mask must already be validated.
void attention_unfused(const ScoreFiller& fill_scores, ConstBatch v,
                       const AttentionOptions& options, MutableBatch output,
                       const MutableBatch* weights);

}  // namespace attn::detail
