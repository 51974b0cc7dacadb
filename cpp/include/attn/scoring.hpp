#pragma once
// Attention scoring functions a(q, k).

#include <string_view>

#include "attn/tensor.hpp"

namespace attn {

enum class ScoreFunction { Dot, ScaledDot, NegSquaredDistance, Additive, General };

// Parses "dot" | "scaled-dot" | "neg-sq-dist" | "additive" | "general".
ScoreFunction parse_score_function(std::string_view name);

// Learned parameters, in PyTorch's nn.Linear layout [out_features, in_features].
// Only the ones the chosen function needs are read; empty matrices mean "not given".
struct ScoreParams {
  Matrix Wq;  // additive: [h, dq]
  Matrix Wk;  // additive: [h, dk]
  Vector wv;  // additive: [h]
  Matrix W;   // general:  [dq, dk], a(q, k) = q^T W k
};

// scores[b, i, j] = a(q[b, i], k[b, j]) for q [B, nq, dq], k [B, nk, dk], scores [B, nq, nk]:
//   dot          q.k                       (dq == dk)
//   scaled-dot   q.k / sqrt(d)             (dq == dk)
//   neg-sq-dist  -||q - k||^2 / 2          (dq == dk)
//   additive     wv^T tanh(Wq q + Wk k)    (Bahdanau)
//   general      q^T W k                   (Luong's bilinear score)
// Throws std::invalid_argument naming the argument whose shape does not fit.
void score(ScoreFunction fn, ConstBatch q, ConstBatch k, const ScoreParams& params,
           MutableBatch scores);
Tensor3 score(ScoreFunction fn, const Tensor3& q, const Tensor3& k, const ScoreParams& params = {});

}  // namespace attn
