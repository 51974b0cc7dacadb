#include "attn/scoring.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "additive_features.hpp"
#include "checks.hpp"
#include "kernels/gemm.hpp"
#include "parallel/split.hpp"
#include "score_matrix.hpp"

namespace attn {

namespace {

constexpr detail::NamedValue<ScoreFunction> kScoreNames[] = {
    {ScoreFunction::Dot, "dot"},
    {ScoreFunction::ScaledDot, "scaled-dot"},
    {ScoreFunction::NegSquaredDistance, "neg-sq-dist"},
    {ScoreFunction::Additive, "additive"},
    {ScoreFunction::General, "general"}};

// wv^T tanh(Wq q_i + Wk k_j): both projections are computed once per batch row, so the nq x nk
// pairs cost only the tanh sum over the hidden size.
void additive_score_matrix(const ConstMatrixMap& q, const ConstMatrixMap& k,
                           const ScoreParams& params, MatrixMap scores) {
  const Matrix projected_q = detail::matmul_transposed(q, params.Wq);
  const Matrix projected_k = detail::matmul_transposed(k, params.Wk);
  detail::additive_scores(projected_q.data(), q.rows(), projected_k.data(), k.rows(),
                          params.wv.size(), params.wv.data(), scores.data(), scores.outerStride());
}

}  // namespace

void detail::check_score_arguments(ScoreFunction fn, ConstBatch q, ConstBatch k,
                                   const ScoreParams& params) {
  switch (fn) {
    case ScoreFunction::Dot:
    case ScoreFunction::ScaledDot:
    case ScoreFunction::NegSquaredDistance:
      detail::require_shape("k", {q.batch, -1, q.cols}, detail::shape_of(k));
      return;
    case ScoreFunction::Additive: {
      detail::require_shape("k", {q.batch, -1, -1}, detail::shape_of(k));
      const Index hidden = params.wv.size();
      detail::require_shape("Wq", {hidden, q.cols}, detail::shape_of(params.Wq));
      detail::require_shape("Wk", {hidden, k.cols}, detail::shape_of(params.Wk));
      return;
    }
    case ScoreFunction::General:
      detail::require_shape("k", {q.batch, -1, -1}, detail::shape_of(k));
      detail::require_shape("W", {q.cols, k.cols}, detail::shape_of(params.W));
      return;
  }
}

ScoreFunction parse_score_function(std::string_view name) {
  return detail::parse_named("fn", kScoreNames, name);
}

void detail::score_matrix(ScoreFunction fn, const ConstMatrixMap& q, const ConstMatrixMap& k,
                          const ScoreParams& params, MatrixMap scores) {
  switch (fn) {
    case ScoreFunction::Dot:
      f32_gemm(q.data(), q.rows(), q.cols(), k.data(), k.rows(), /*b_transposed=*/true,
               scores.data());
      break;
    case ScoreFunction::ScaledDot: {
      // The queries divided by sqrt(d) before the product: a pass over nq x d entries rather
      // than over the nq x nk scores (with no columns there is nothing to divide).
      const Matrix scaled = q / std::sqrt(static_cast<float>(q.cols()));
      f32_gemm(scaled.data(), q.rows(), q.cols(), k.data(), k.rows(), /*b_transposed=*/true,
               scores.data());
      break;
    }
    case ScoreFunction::NegSquaredDistance:
      // Direct differences rather than the expansion q.q - 2 q.k + k.k, which cancels
      // catastrophically for nearby points.
      for (Index i = 0; i < q.rows(); ++i) {
        for (Index j = 0; j < k.rows(); ++j) {
          scores(i, j) = -0.5f * (q.row(i) - k.row(j)).squaredNorm();
        }
      }
      break;
    case ScoreFunction::Additive:
      additive_score_matrix(q, k, params, scores);
      break;
    case ScoreFunction::General:
      scores = matmul_transposed(matmul(q, params.W), k);
      break;
  }
}

void score(ScoreFunction fn, ConstBatch q, ConstBatch k, const ScoreParams& params,
           MutableBatch scores) {
  detail::check_score_arguments(fn, q, k, params);
  detail::require_shape("scores", {q.batch, q.rows, k.rows}, detail::shape_of(scores));
  // The multiply-adds of one matrix's scores (additive's tanh features count as one each).
  const Index depth = fn == ScoreFunction::Additive ? params.wv.size() : q.cols;
  detail::run_products(q.batch, q.rows * k.rows * std::max<Index>(depth, 1),
                       [&](Index b) { detail::score_matrix(fn, q[b], k[b], params, scores[b]); });
}

Tensor3 score(ScoreFunction fn, const Tensor3& q, const Tensor3& k, const ScoreParams& params) {
  Tensor3 scores(q.batch, q.rows, k.rows);
  score(fn, q.view(), k.view(), params, scores.view());
  return scores;
}

}  // namespace attn
