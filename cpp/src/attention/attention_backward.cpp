// The backward passes of scaled dot-product and additive attention (attention.cpp holds their
// forwards). Both differentiate sum(output * grad_output); see attn/attention.hpp.

#include <cmath>

#include "additive_features.hpp"
#include "attn/attention.hpp"
#include "checks.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/seeded_dropout.hpp"
#include "score_matrix.hpp"
#include "softmax_pooling.hpp"
#include "unfused_attention.hpp"

namespace attn {

namespace {

void check_gradient_shapes(ConstBatch q, ConstBatch k, ConstBatch v, ConstBatch grad_output,
                           MutableBatch dq, MutableBatch dk, MutableBatch dv) {
  detail::require_shape("grad_output", {q.batch, q.rows, v.cols}, detail::shape_of(grad_output));
  detail::require_shape("dq", detail::shape_of(q), detail::shape_of(dq));
  detail::require_shape("dk", detail::shape_of(k), detail::shape_of(dk));
  detail::require_shape("dv", detail::shape_of(v), detail::shape_of(dv));
}

Tensor3 zeros_like(const Tensor3& t) { return Tensor3(t.batch, t.rows, t.cols); }

}  // namespace

void scaled_dot_product_attention_backward(ConstBatch q, ConstBatch k, ConstBatch v,
                                           ConstBatch grad_output, const AttentionOptions& options,
                                           MutableBatch dq, MutableBatch dk, MutableBatch dv,
                                           float* dsinks) {
  detail::FusedExtras extras = detail::check_heads_and_modifiers(q, k, options);
  detail::check_pooling_arguments(q, k, v, options, {nullptr, q.batch, q.rows, v.cols}, nullptr);
  check_gradient_shapes(q, k, v, grad_output, dq, dk, dv);
  extras.dsinks = dsinks;
  detail::attention_fused_backward(q, k, v, grad_output, detail::default_scale(options, q.cols),
                                   options.mask, options.heads,
                                   detail::Dropout(options.dropout, options.seed), dq, dk, dv,
                                   nullptr, detail::HiddenBlocks::Skip, extras);
}

AttentionGradients scaled_dot_product_attention_backward(const Tensor3& q, const Tensor3& k,
                                                         const Tensor3& v,
                                                         const Tensor3& grad_output,
                                                         const AttentionOptions& options) {
  AttentionGradients gradients{zeros_like(q), zeros_like(k), zeros_like(v), {}};
  if (!options.sinks.empty()) gradients.dsinks.resize(options.sinks.size());
  scaled_dot_product_attention_backward(
      q.view(), k.view(), v.view(), grad_output.view(), options, gradients.dq.view(),
      gradients.dk.view(), gradients.dv.view(),
      gradients.dsinks.empty() ? nullptr : gradients.dsinks.data());
  return gradients;
}

// Per batch row: features t_ij = tanh(Wq q_i + Wk k_j), scores s_ij = wv . t_ij. The weights
// P are formed as the forward forms them; then (softmax_and_pool_backward), with
// dP = F * (dO v^T) and D_i = sum_j P_ij dP_ij,
//   dS = P * (dP - D)   (0 where masked),   dV = (P * F)^T dO,
//   g_ij = dS_ij wv * (1 - t_ij^2),   d(Wq q)_i = sum_j g_ij,   d(Wk k)_j = sum_i g_ij,
//   dwv = sum_ij dS_ij t_ij,   dq = d(Wq q) Wq,   dWq = d(Wq q)^T q   (and likewise for k).
AdditiveAttentionGradients additive_attention_backward(const Tensor3& q, const Tensor3& k,
                                                       const Tensor3& v, const ScoreParams& params,
                                                       const Tensor3& grad_output,
                                                       const AttentionOptions& options) {
  detail::check_score_arguments(ScoreFunction::Additive, q.view(), k.view(), params);
  detail::check_no_heads_or_modifiers(options);
  detail::check_pooling_arguments(q.view(), k.view(), v.view(), options,
                                  {nullptr, q.batch, q.rows, v.cols}, nullptr);
  AdditiveAttentionGradients gradients{zeros_like(q), zeros_like(k), zeros_like(v), {}};
  check_gradient_shapes(q.view(), k.view(), v.view(), grad_output.view(), gradients.dq.view(),
                        gradients.dk.view(), gradients.dv.view());
  const Index nq = q.rows, nk = k.rows, hidden = params.wv.size();
  ScoreParams& dparams = gradients.dparams;
  dparams.Wq = Matrix::Zero(hidden, q.cols);
  dparams.Wk = Matrix::Zero(hidden, k.cols);
  dparams.wv = Vector::Zero(hidden);
  const detail::Dropout dropout(options.dropout, options.seed);

  for (Index b = 0; b < q.batch; ++b) {
    const auto qb = q.view()[b], kb = k.view()[b], vb = v.view()[b];
    const auto grad_out = grad_output.view()[b];
    const Matrix projected_q = detail::matmul_transposed(qb, params.Wq);  // [nq, h]
    const Matrix projected_k = detail::matmul_transposed(kb, params.Wk);  // [nk, h]
    const detail::MaskContext context{options.mask, b, q.batch, 1};

    Matrix weights(nq, nk);  // the scores from the projections just made, then the weights
    detail::additive_scores(projected_q.data(), nq, projected_k.data(), nk, hidden,
                            params.wv.data(), weights.data(), nk);
    detail::masked_softmax_rows(MatrixMap(weights.data(), nq, nk), context);
    Matrix grad_scores(nq, nk);
    detail::softmax_and_pool_backward(ConstMatrixMap(weights.data(), nq, nk), vb, grad_out, context,
                                      dropout, static_cast<uint64_t>(b * nq * nk),
                                      MatrixMap(grad_scores.data(), nq, nk),
                                      gradients.dv.view()[b]);

    Matrix grad_projected_q = Matrix::Zero(nq, hidden);
    Matrix grad_projected_k = Matrix::Zero(nk, hidden);
    detail::additive_scores_backward(
        grad_scores.data(), nk, projected_q.data(), nq, projected_k.data(), nk, hidden,
        params.wv.data(), grad_projected_q.data(), grad_projected_k.data(), dparams.wv.data());
    gradients.dq.view()[b] = grad_projected_q * params.Wq;
    gradients.dk.view()[b] = grad_projected_k * params.Wk;
    detail::accumulate_weight_gradient(grad_projected_q, qb, dparams.Wq, nullptr);
    detail::accumulate_weight_gradient(grad_projected_k, kb, dparams.Wk, nullptr);
  }
  return gradients;
}

}  // namespace attn
