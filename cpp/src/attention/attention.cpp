#include "attn/attention.hpp"

#include <cmath>

#include "checks.hpp"
#include "kernels/dropout.hpp"
#include "kernels/fused_attention.hpp"
#include "score_matrix.hpp"
#include "softmax_pooling.hpp"
#include "unfused_attention.hpp"

namespace attn {

void detail::check_attention_options(const AttentionOptions& options) {
  if (!(options.dropout >= 0.0f && options.dropout < 1.0f)) {
    fail("dropout", "a probability in [0, 1)", number_string(options.dropout));
  }
  if (options.scale && !std::isfinite(*options.scale)) {
    fail("scale", "a finite number", number_string(*options.scale));
  }
}

void detail::attention_unfused(const ScoreFiller& fill_scores, ConstBatch v,
                               const AttentionOptions& options, MutableBatch output,
                               const MutableBatch* weights) {
  // No score matrix at all: nothing to compute, and no [nq, nk] scratch to allocate for it.
  if (output.batch == 0) return;
  const Index nq = output.rows, nk = v.rows;
  Matrix scratch(nq, nk);  // the scores, unless the caller keeps them as weights
  const Dropout dropout(options.dropout, options.seed);
  for (Index s = 0; s < output.batch; ++s) {
    MatrixMap scores = weights ? (*weights)[s] : MatrixMap(scratch.data(), nq, nk);
    fill_scores(s, scores);
    softmax_and_pool(scores, v[s], {options.mask, s, output.batch, 1}, dropout,
                     static_cast<uint64_t>(s * nq * nk), output[s]);
  }
}

void detail::check_pooling_arguments(ConstBatch q, ConstBatch k, ConstBatch v,
                                     const AttentionOptions& options, MutableBatch output,
                                     const MutableBatch* weights) {
  require_shape("v", {q.batch, k.rows, -1}, shape_of(v));
  require_shape("output", {q.batch, q.rows, v.cols}, shape_of(output));
  if (weights) require_shape("weights", {q.batch, q.rows, k.rows}, shape_of(*weights));
  check_attention_options(options);
  validate_mask(options.mask, q.batch, q.rows, k.rows);
}

float detail::default_scale(const AttentionOptions& options, Index d) {
  return options.scale.value_or(d > 0 ? 1.0f / std::sqrt(static_cast<float>(d)) : 1.0f);
}

void scaled_dot_product_attention(ConstBatch q, ConstBatch k, ConstBatch v,
                                  const AttentionOptions& options, MutableBatch output,
                                  const MutableBatch* weights) {
  detail::require_shape("k", {q.batch, -1, q.cols}, detail::shape_of(k));
  detail::check_pooling_arguments(q, k, v, options, output, weights);

  detail::attention_fused(q, k, v, detail::default_scale(options, q.cols), options.mask, 1,
                          detail::Dropout(options.dropout, options.seed), output, weights);
}

void additive_attention(ConstBatch q, ConstBatch k, ConstBatch v, const ScoreParams& params,
                        const AttentionOptions& options, MutableBatch output,
                        const MutableBatch* weights) {
  detail::check_score_arguments(ScoreFunction::Additive, q, k, params);
  detail::check_pooling_arguments(q, k, v, options, output, weights);

  auto fill = [&](Index s, MatrixMap scores) {
    detail::score_matrix(ScoreFunction::Additive, q[s], k[s], params, scores);
  };
  detail::attention_unfused(fill, v, options, output, weights);
}

namespace {

AttentionResult allocate_result(Index batch, Index nq, Index nk, Index dv, bool need_weights) {
  AttentionResult result;
  result.output = Tensor3(batch, nq, dv);
  if (need_weights) result.weights = Tensor3(batch, nq, nk);
  return result;
}

}  // namespace

AttentionResult scaled_dot_product_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                             const AttentionOptions& options, bool need_weights) {
  AttentionResult result = allocate_result(q.batch, q.rows, k.rows, v.cols, need_weights);
  const MutableBatch weights = result.weights.view();
  scaled_dot_product_attention(q.view(), k.view(), v.view(), options, result.output.view(),
                               need_weights ? &weights : nullptr);
  return result;
}

AttentionResult additive_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                   const ScoreParams& params, const AttentionOptions& options,
                                   bool need_weights) {
  AttentionResult result = allocate_result(q.batch, q.rows, k.rows, v.cols, need_weights);
  const MutableBatch weights = result.weights.view();
  additive_attention(q.view(), k.view(), v.view(), params, options, result.output.view(),
                     need_weights ? &weights : nullptr);
  return result;
}

}  // namespace attn
