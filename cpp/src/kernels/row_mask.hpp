#pragma once
// The mask of one query row of one score matrix, resolved once: the run of keys that valid
// length, causality and the sliding window leave visible, the rows of the boolean, additive and
// key-padding masks, and the head's score modifiers (softcap, ALiBi). The forward and the
// backward kernels apply it a tile at a time through the same steps: skips() to leave out keys
// whose weights are exactly 0, apply() before the softmax, zero_hidden() on the score gradients
// (a hidden score was replaced by a constant, so no gradient flows into it).

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attn/mask.hpp"
#include "kernel_table.hpp"
#include "row_kernels.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

// A hidden key's weight exp(fill - max) is exactly 0 in float once the fill lies this far below
// the row's max: the vector exp flushes to 0 below -87.7 and the C library's expf underflows
// below about -104.
constexpr float kUnderflowMargin = 128.0f;

// True when every hidden key of a row whose max is `max` gets weight exactly 0. A row with no
// visible score yet (max still -inf, or the fill itself) fails, as does a NaN max: a fully masked
// row is uniform under a finite fill, and a row whose visible scores come near the fill gives
// hidden keys weight too.
inline bool hidden_weights_vanish(float fill, float max) { return fill < max - kUnderflowMargin; }

// The score modifiers of current models (attn/attention.hpp has their formulas), per head of a
// batch of batch * batch_heads score matrices.
struct ScoreModifiers {
  float softcap = 0.0f;                 // > 0: s <- softcap * tanh(s / softcap)
  const float* alibi_slopes = nullptr;  // [batch_heads]: s <- s - slope * |i - j|
  const float* sinks = nullptr;         // [batch_heads]: one more logit in each row's softmax
  // Two that kernel regression (attention/kernel_regression.cpp) needs, not in the public API:
  // [nk], s <- s + key_bias[j] after the above, the same for every query and matrix (the
  // Gaussian kernel's -||k_j||^2 / 2 sigma^2); and each query hidden from the key at its own
  // position (leave-one-out).
  const float* key_bias = nullptr;
  bool exclude_self = false;

  // Whether the scores change before the softmax beyond what the mask hides.
  bool change_scores() const { return softcap > 0.0f || alibi_slopes || key_bias || exclude_self; }
};

// Folds a sink logit into a row's final max and sum (the sum of exp(s - max) over its keys):
// both then include it. Returns the factor by which what was pooled against the old max must
// be multiplied to stand against the new one (1 when the max did not move).
inline float fold_sink(float sink, float& max, float& sum) {
  const float new_max = std::isnan(max) ? max : std::max(max, sink);
  const float factor = new_max == max ? 1.0f : std::exp(max - new_max);
  sum = sum * factor + std::exp(sink - new_max);
  max = new_max;
  return factor;
}

// Which score matrix of a batch of batch * batch_heads matrices is being computed.
struct MaskContext {
  const Mask& mask;
  Index matrix;
  Index batch;
  Index batch_heads;
  const ScoreModifiers* modifiers = nullptr;
  // Query i sits at key position i + query_offset: causality, the window and ALiBi's distance
  // measure from there (0 in scaled dot-product attention; a KV cache's queries are its newest
  // positions).
  Index query_offset = 0;
  // When the rows of consecutive matrices are stacked into one (the query heads that share a
  // K/V head, in a KV cache), the rows per matrix; 0: the rows are one matrix's.
  Index stacked_rows = 0;

  // The matrix and query index of row i.
  Index matrix_of(Index i) const { return matrix + (stacked_rows ? i / stacked_rows : 0); }
  Index query_of(Index i) const { return stacked_rows ? i % stacked_rows : i; }
  Index head_of(Index i) const { return matrix_of(i) % batch_heads; }
};

class RowMask {
 public:
  // Row i of an [nq, nk] score matrix; the mask must already be validated.
  RowMask(const MaskContext& context, Index rows, Index nk, Index row)
      : fill_(context.mask.fill), visible_end_(nk) {
    const Mask& mask = context.mask;
    const Index matrix = context.matrix_of(row), i = context.query_of(row);
    const Index nq = context.stacked_rows ? context.stacked_rows : rows;
    const Index b = matrix / context.batch_heads;
    query_ = i + context.query_offset;
    if (mask.bool_mask) {
      bool_row_ = mask.bool_mask + ((mask.bool_mask_batch == 1 ? 0 : matrix * nq) + i) * nk;
    }
    if (mask.additive) {
      additive_row_ = mask.additive + ((mask.additive_batch == 1 ? 0 : matrix * nq) + i) * nk;
    }
    if (mask.key_padding) padding_row_ = mask.key_padding + b * nk;
    if (!mask.valid_lens.empty()) {
      // validate_mask admits one length per batch row or one per query.
      const bool per_query = static_cast<Index>(mask.valid_lens.size()) != context.batch;
      visible_end_ = mask.valid_lens[static_cast<size_t>(per_query ? b * nq + i : b)];
    }
    if (mask.causal) visible_end_ = std::min(visible_end_, query_ + 1);
    // In 64 bits: a side of up to 2^31 - 1 (any window an int32 can say) must not wrap a 32-bit
    // Index (wasm32's) past either end.
    const auto query = static_cast<int64_t>(query_);
    if (mask.window_right >= 0) {
      const int64_t end = query + static_cast<int64_t>(mask.window_right) + 1;
      visible_end_ = static_cast<Index>(std::min<int64_t>(visible_end_, end));
    }
    if (mask.window_left >= 0) {
      const int64_t begin = query - static_cast<int64_t>(mask.window_left);
      visible_begin_ = static_cast<Index>(std::max<int64_t>(0, begin));
    }
    if (const ScoreModifiers* modifiers = context.modifiers) {
      softcap_ = modifiers->softcap;
      if (modifiers->alibi_slopes) slope_ = modifiers->alibi_slopes[context.head_of(row)];
      key_bias_ = modifiers->key_bias;
      if (modifiers->exclude_self) self_ = query_;
    }
  }

  // Keys j >= visible_end() are hidden by valid length, causality or the window's right side;
  // keys j < visible_begin() by the window's left side (others may hide more).
  Index visible_end() const { return visible_end_; }
  Index visible_begin() const { return visible_begin_; }

  bool hidden(Index j) const {
    return j < visible_begin_ || j >= visible_end_ || (bool_row_ && bool_row_[j]) ||
           (padding_row_ && padding_row_[j]) || j == self_;
  }

  // The skip decision, shared by the forward and the backward so that they cannot drift: true
  // when keys [j0, j0 + count) contribute exactly nothing to a row whose max is `max` (the
  // running max in the forward, which only grows, or the final one in the backward): each key
  // is hidden and hidden_weights_vanish. Leaving such keys out changes no bit of the result:
  // their weights are 0, so they add 0 to the row's sum and 0 * v to its output, and their fill
  // cannot raise a max that already lies above it (values of such keys are then never read, so
  // a NaN there no longer turns the row NaN).
  bool skips(Index j0, Index count, float max) const {
    return hidden_weights_vanish(fill_, max) && hides_all(j0, count);
  }

  // True when every key of [j0, j0 + count) is hidden. Outside [visible_begin(), visible_end())
  // that needs no look; inside only the boolean and key-padding masks and exclude_self can.
  bool hides_all(Index j0, Index count) const {
    const Index end = std::min(j0 + count, visible_end_);
    for (Index j = std::max(j0, visible_begin_); j < end; ++j) {
      if (!(bool_row_ && bool_row_[j]) && !(padding_row_ && padding_row_[j]) && j != self_) {
        return false;
      }
    }
    return true;
  }

  // Whether apply() would change any of keys [j0, j0 + count): a block wholly inside the visible
  // run of a row with no other mask or modifier is left as it is (and its max stays the one the
  // scores had).
  bool changes(Index j0, Index count) const {
    return softcap_ > 0.0f || slope_ != 0.0f || additive_row_ || bool_row_ || padding_row_ ||
           key_bias_ || (self_ >= j0 && self_ < j0 + count) || j0 < visible_begin_ ||
           j0 + count > visible_end_;
  }

  // scores[c] of key j0 + c, for c < count, in the documented order: softcapped, the ALiBi bias,
  // the additive mask and the key bias added, hidden scores set to fill; returns their max (as
  // f32_row_max would find it). With softcap_grad non-null, it receives d(capped)/d(score) =
  // 1 - (capped / softcap)^2 for each visible key and 0 for a hidden one (the backward's factor;
  // a hidden key's weight is 0).
  float apply(float* scores, Index j0, Index count, float* softcap_grad = nullptr) const {
    if (additive_row_ || bool_row_ || padding_row_ || (self_ >= j0 && self_ < j0 + count)) {
      if (softcap_ > 0.0f || slope_ != 0.0f) {
        kernel_table().modify_scores(scores, count, softcap_, slope_, query_ - j0, softcap_grad);
      }
      for (Index c = 0; c < count; ++c) {
        if (additive_row_) scores[c] += additive_row_[j0 + c];
        if (key_bias_) scores[c] += key_bias_[j0 + c];
        if (hidden(j0 + c)) {
          scores[c] = fill_;
          if (softcap_grad) softcap_grad[c] = 0.0f;
        }
      }
      return f32_row_max(scores, count);
    }
    // Only the visible run's ends can hide keys: the modifiers run on [begin, end), fill lies
    // outside.
    const Index begin = std::clamp(visible_begin_, j0, j0 + count);
    const Index end = std::clamp(visible_end_, begin, j0 + count);
    float* run = scores + (begin - j0);
    const bool modified = softcap_ > 0.0f || slope_ != 0.0f;
    float max = modified ? kernel_table().modify_scores(
                               run, end - begin, softcap_, slope_, query_ - begin,
                               softcap_grad ? softcap_grad + (begin - j0) : nullptr)
                         : 0.0f;
    // The key bias comes after the modifiers; the pass that adds it finds the max.
    if (key_bias_) {
      max = f32_add_row_max(run, key_bias_ + begin, end - begin);
    } else if (!modified) {
      max = f32_row_max(run, end - begin);
    }
    std::fill(scores, scores + (begin - j0), fill_);
    std::fill(scores + (end - j0), scores + count, fill_);
    if (softcap_grad) {
      std::fill(softcap_grad, softcap_grad + (begin - j0), 0.0f);
      std::fill(softcap_grad + (end - j0), softcap_grad + count, 0.0f);
    }
    if (begin > j0 || end < j0 + count) max = simd::nan_max(max, fill_);
    return max;
  }

  // values[c] = 0 where key j0 + c is hidden.
  void zero_hidden(float* values, Index j0, Index count) const {
    for (Index c = 0; c < count; ++c) {
      if (hidden(j0 + c)) values[c] = 0.0f;
    }
  }

 private:
  float fill_;
  Index visible_end_;
  Index visible_begin_ = 0;
  Index query_ = 0;  // the row's position among the keys
  float softcap_ = 0.0f;
  float slope_ = 0.0f;
  const float* key_bias_ = nullptr;
  Index self_ = -1;  // the key hidden by exclude_self, or -1
  const uint8_t* bool_row_ = nullptr;
  const float* additive_row_ = nullptr;
  const uint8_t* padding_row_ = nullptr;
};

// The skip rule, one for the forward and the backward so that they cannot drift. A group of
// `rows` query rows (masks[r], and max[r] the largest score row r has seen so far: -inf before
// any) meets keys [j0, j0 + len): how many leading keys must be computed. 0 when every row
// skips the whole range (RowMask::skips); otherwise up to the latest row's visible end rounded
// up to whole panels of `panel` keys (so that vector sums see the same lanes, zeros past the
// visible keys, as over every key), or all of them for a row that sees none of the range. That
// is a guess: tail_vanishes confirms it once the computed keys' max is known.
inline Index keys_to_compute(const RowMask* masks, const float* max, Index rows, Index j0,
                             Index len, Index panel) {
  Index count = 0;
  for (Index r = 0; r < rows; ++r) {
    if (masks[r].skips(j0, len, max[r])) continue;
    const Index visible = masks[r].visible_end() - j0;
    count =
        std::max(count, visible > 0 ? (std::min(visible, len) + panel - 1) / panel * panel : len);
  }
  return std::min(count, len);
}

// Whether keys [j0 + count, j0 + len), left out by keys_to_compute, contribute nothing to rows
// whose max, with the computed keys in, is max[r]: the same skip decision against the new max.
// False means the tail must be computed after all (a row's max stayed near the fill).
inline bool tail_vanishes(const RowMask* masks, const float* max, Index rows, Index j0, Index count,
                          Index len) {
  for (Index r = 0; r < rows; ++r) {
    if (!masks[r].skips(j0 + count, len - count, max[r])) return false;
  }
  return true;
}

}  // namespace attn::detail
