#pragma once
// Score matrices of the scoring functions (attn/scoring.hpp) one batch row at a time, for the
// attention functions that pool them (attention.cpp, attention_backward.cpp).

#include "attn/scoring.hpp"

namespace attn::detail {

// Throws std::invalid_argument when q, k or the parameters `fn` reads do not fit together.
void check_score_arguments(ScoreFunction fn, ConstBatch q, ConstBatch k, const ScoreParams& params);

// One score matrix of `fn` (see scoring.hpp), without shape checks.
void score_matrix(ScoreFunction fn, const ConstMatrixMap& q, const ConstMatrixMap& k,
                  const ScoreParams& params, MatrixMap scores);

}  // namespace attn::detail
