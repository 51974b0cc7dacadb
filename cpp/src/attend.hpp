#pragma once
// The part every attention variant shares once its scores exist: mask, softmax, dropout, and the
// weighted sum of the values. Scaled dot-product, additive and multi-head attention differ only
// in how they fill a score matrix.

#include <functional>

#include "attn/attention.hpp"

namespace attn::detail {

// Fills the [nq, nk] score matrix of score matrix number `matrix`.
using ScoreFiller = std::function<void(Index matrix, MatrixMap scores)>;

void check_attention_options(const AttentionOptions& options);

// The checks every attention function shares once q and k are known to fit together: values,
// outputs, options and the mask against scores [B, nq, nk].
void check_pooling_arguments(ConstBatch q, ConstBatch k, ConstBatch v,
                             const AttentionOptions& options, MutableBatch output,
                             const MutableBatch* weights);

// options.scale, or 1/sqrt(d) (1 for d = 0).
float default_scale(const AttentionOptions& options, Index d);

// v [batch * batch_heads, nk, dv] -> output [batch * batch_heads, nq, dv]; weights (optional)
// [batch * batch_heads, nq, nk] receive the attention distribution before dropout.
// The mask must already be validated against (batch, nq, nk, batch_heads).
void attend(const ScoreFiller& fill_scores, ConstBatch v, const AttentionOptions& options,
            Index batch_heads, MutableBatch output, const MutableBatch* weights);

// Throws std::invalid_argument when q, k or the parameters `fn` reads do not fit together.
void check_score_arguments(ScoreFunction fn, ConstBatch q, ConstBatch k, const ScoreParams& params);

// One score matrix of `fn` (see scoring.hpp), without shape checks.
void score_matrix(ScoreFunction fn, const ConstMatrixMap& q, const ConstMatrixMap& k,
                  const ScoreParams& params, MatrixMap scores);

}  // namespace attn::detail
