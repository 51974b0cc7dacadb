#include "attn/attention.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/seeded_dropout.hpp"
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

void detail::check_no_heads_or_modifiers(const AttentionOptions& options) {
  if (options.heads != 1 || options.kv_heads != 1) {
    fail("heads", "1 (heads are scaled dot-product attention's)",
         std::to_string(options.heads) + " heads, " + std::to_string(options.kv_heads) +
             " K/V heads");
  }
  for (const auto& [name, given] : {std::pair{"softcap", options.softcap.has_value()},
                                    {"alibi_slopes", !options.alibi_slopes.empty()},
                                    {"sinks", !options.sinks.empty()}}) {
    if (given) fail(name, "none (a scaled dot-product attention option)", "one");
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

namespace {

// Empty, or one finite number per head.
void check_per_head(const char* argument, const std::vector<float>& values, Index heads) {
  if (values.empty()) return;
  if (static_cast<Index>(values.size()) != heads) {
    detail::fail(argument, std::to_string(heads) + " numbers (one per head)",
                 std::to_string(values.size()));
  }
  for (size_t h = 0; h < values.size(); ++h) {
    if (!std::isfinite(values[h])) {
      detail::fail(argument, "finite numbers",
                   detail::number_string(values[h]) + " at index " + std::to_string(h));
    }
  }
}

}  // namespace

detail::FusedExtras detail::check_heads_and_modifiers(ConstBatch q, ConstBatch k,
                                                      const AttentionOptions& options) {
  const Index heads = options.heads, kv_heads = options.kv_heads;
  if (heads < 1) fail("heads", "a size >= 1", std::to_string(heads));
  if (kv_heads < 1 || heads % kv_heads != 0) {
    fail("kv_heads", "a divisor of heads = " + std::to_string(heads), std::to_string(kv_heads));
  }
  if (q.batch % heads != 0) {
    fail("q", "a batch of B * heads matrices (heads = " + std::to_string(heads) + ")",
         shape_string(shape_of(q)));
  }
  require_shape("k", {q.batch / heads * kv_heads, -1, q.cols}, shape_of(k));
  FusedExtras extras;
  extras.kv_heads = kv_heads;
  extras.modifiers =
      check_modifiers(options.softcap, options.alibi_slopes, options.sinks, options.heads);
  return extras;
}

detail::ScoreModifiers detail::check_modifiers(const std::optional<float>& softcap,
                                               const std::vector<float>& alibi_slopes,
                                               const std::vector<float>& sinks, Index heads) {
  if (softcap && !(std::isfinite(*softcap) && *softcap > 0.0f)) {
    fail("softcap", "a finite number > 0", number_string(*softcap));
  }
  check_per_head("alibi_slopes", alibi_slopes, heads);
  check_per_head("sinks", sinks, heads);
  ScoreModifiers modifiers;
  modifiers.softcap = softcap.value_or(0.0f);
  if (!alibi_slopes.empty()) modifiers.alibi_slopes = alibi_slopes.data();
  if (!sinks.empty()) modifiers.sinks = sinks.data();
  return modifiers;
}

void detail::check_pooling_arguments(ConstBatch q, ConstBatch k, ConstBatch v,
                                     const AttentionOptions& options, MutableBatch output,
                                     const MutableBatch* weights) {
  require_shape("v", {k.batch, k.rows, -1}, shape_of(v));
  require_shape("output", {q.batch, q.rows, v.cols}, shape_of(output));
  if (weights) require_shape("weights", {q.batch, q.rows, k.rows}, shape_of(*weights));
  check_attention_options(options);
  const Index heads = std::max<Index>(options.heads, 1);
  validate_mask(options.mask, q.batch / heads, q.rows, k.rows, heads);
}

float detail::default_scale(const AttentionOptions& options, Index d) {
  return options.scale.value_or(d > 0 ? 1.0f / std::sqrt(static_cast<float>(d)) : 1.0f);
}

void scaled_dot_product_attention(ConstBatch q, ConstBatch k, ConstBatch v,
                                  const AttentionOptions& options, MutableBatch output,
                                  const MutableBatch* weights, float* lse) {
  detail::FusedExtras extras = detail::check_heads_and_modifiers(q, k, options);
  detail::check_pooling_arguments(q, k, v, options, output, weights);
  extras.lse = lse;
  detail::attention_fused(q, k, v, detail::default_scale(options, q.cols), options.mask,
                          options.heads, detail::Dropout(options.dropout, options.seed), output,
                          weights, detail::HiddenBlocks::Skip, extras);
}

void additive_attention(ConstBatch q, ConstBatch k, ConstBatch v, const ScoreParams& params,
                        const AttentionOptions& options, MutableBatch output,
                        const MutableBatch* weights) {
  detail::check_score_arguments(ScoreFunction::Additive, q, k, params);
  detail::check_no_heads_or_modifiers(options);
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
                                             const AttentionOptions& options, bool need_weights,
                                             bool need_lse) {
  AttentionResult result = allocate_result(q.batch, q.rows, k.rows, v.cols, need_weights);
  if (need_lse) result.lse.resize(static_cast<size_t>(q.batch * q.rows));
  const MutableBatch weights = result.weights.view();
  scaled_dot_product_attention(q.view(), k.view(), v.view(), options, result.output.view(),
                               need_weights ? &weights : nullptr,
                               need_lse ? result.lse.data() : nullptr);
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
