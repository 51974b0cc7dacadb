#include "fused_attention.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <memory>
#include <vector>

#include "gemm.hpp"
#include "kernel_table.hpp"
#include "row_kernels.hpp"
#include "row_mask.hpp"

namespace attn::detail {

namespace {

constexpr Index kTile = kPanel;      // keys (or output columns) per micro-kernel call
constexpr Index kBlockKeys = 128;    // keys per online-softmax step: 32 KB of packed K at d = 64
constexpr Index kBlockQueries = 64;  // queries that pass over one key block while it is hot

// With weights requested, what one row kept of one key block: the running max its
// exp(s - max) were taken against, and how many of its keys were computed (the rest are 0).
struct KeptBlock {
  float max;
  Index computed;
};

// One score matrix's forward: K and V packed once, then query blocks meet key blocks, two query
// rows at a time (the micro-kernel's best tile height). An odd last row, and a decode step's
// single query, go through a one-row tile rather than beside a twin computed in vain.
class FusedForward {
 public:
  FusedForward(const float* q, const PackedKeysValues& kv, Index nq, Index nk, Index d, Index dv,
               const MaskContext& mask, HiddenBlocks hidden_blocks)
      : q_(q),
        kv_(kv),
        nq_(nq),
        nk_(nk),
        d_(d),
        dv_(dv),
        mask_(mask),
        masked_(!mask.mask.empty()),
        skipping_(masked_ && hidden_blocks == HiddenBlocks::Skip),
        scores_(static_cast<size_t>(2 * kBlockKeys)),
        row_max_(static_cast<size_t>(nq), kNegativeInfinity),
        row_sum_(static_cast<size_t>(nq), 0.0f) {}

  void run(float* out, float* weights) {
    const Index key_blocks = round_up(nk_, kBlockKeys) / kBlockKeys;
    if (weights) kept_.resize(static_cast<size_t>(kBlockQueries * key_blocks));
    for (Index query_start = 0; query_start < nq_; query_start += kBlockQueries) {
      const Index query_end = std::min(nq_, query_start + kBlockQueries);
      for (Index j0 = 0; j0 < nk_; j0 += kBlockKeys) {
        for (Index i0 = query_start; i0 < query_end; i0 += 2) {
          if (i0 + 1 < query_end) {
            tile_block<2>(i0, j0, query_start, out, weights);
          } else {
            tile_block<1>(i0, j0, query_start, out, weights);
          }
        }
      }
      for (Index i = query_start; i < query_end; ++i) {
        const float inverse = 1.0f / row_sum_[static_cast<size_t>(i)];
        for (Index c = 0; c < dv_; ++c) out[i * dv_ + c] *= inverse;
        if (weights) normalise_weights(i, query_start, weights + i * nk_);
      }
    }
  }

 private:
  template <int Rows>
  using RowMasks = std::array<RowMask, Rows>;

  // Query rows i0 .. i0 + Rows - 1 against key block j0: scores, mask, online-softmax step,
  // pooling.
  template <int Rows>
  void tile_block(Index i0, Index j0, Index query_start, float* out, float* weights) {
    const Index len = std::min(kBlockKeys, nk_ - j0);
    const RowMasks<Rows> masks = row_masks<Rows>(i0);
    Index count = keys_to_compute<Rows>(masks, i0, j0, len);
    if (count == 0) {
      if (weights) keep_weights<Rows>(i0, j0, len, 0, query_start, weights);
      return;
    }
    float block_max[Rows];
    score_masked<Rows>(masks, i0, j0, count, block_max);
    if (count < len && !tail_vanishes<Rows>(masks, i0, j0, count, len, block_max)) {
      count = len;  // the row's max stayed near the fill: the hidden tail counts after all
      score_masked<Rows>(masks, i0, j0, count, block_max);
    }
    float alpha[Rows];
    for (int r = 0; r < Rows; ++r) {
      const auto i = static_cast<size_t>(i0 + r);
      alpha[r] =
          f32_online_softmax_step(row(r), count, block_max[r], j0 == 0, row_max_[i], row_sum_[i]);
    }
    const float* exps = scores_.data();
    assert(j0 + count <= kv_.stride);  // the pool loop reads V's panels up to key j0 + count
    kernel_table().pool[Rows - 1](rows<Rows>(exps, kBlockKeys).data(), kv_.values, kv_.stride, j0,
                                  count, dv_, alpha, rows<Rows>(out + i0 * dv_, dv_).data());
    if (weights) keep_weights<Rows>(i0, j0, len, count, query_start, weights);
  }

  template <int Rows>
  RowMasks<Rows> row_masks(Index i0) const {
    if constexpr (Rows == 1) {
      return {RowMask(mask_, nq_, nk_, i0)};
    } else {
      return {RowMask(mask_, nq_, nk_, i0), RowMask(mask_, nq_, nk_, i0 + 1)};
    }
  }

  // Rows consecutive rows of a row-major matrix, starting at `first`.
  template <int Rows, typename T>
  static std::array<T*, Rows> rows(T* first, Index stride) {
    std::array<T*, Rows> pointers;
    for (int r = 0; r < Rows; ++r) pointers[r] = first + r * stride;
    return pointers;
  }

  float* row(int r) { return scores_.data() + r * kBlockKeys; }

  // How many keys of block [j0, j0 + len) the tile computes (the shared skip rule, against
  // each row's running max), or all of them when not skipping.
  template <int Rows>
  Index keys_to_compute(const RowMasks<Rows>& masks, Index i0, Index j0, Index len) const {
    if (!skipping_) return len;
    return detail::keys_to_compute(masks.data(), row_max_.data() + i0, Rows, j0, len, kTile);
  }

  // Whether keys [j0 + count, j0 + len), left out, pass the same skip decision against the
  // max each row has once the computed keys are in.
  template <int Rows>
  bool tail_vanishes(const RowMasks<Rows>& masks, Index i0, Index j0, Index count, Index len,
                     const float (&block_max)[Rows]) const {
    float max[Rows];
    for (int r = 0; r < Rows; ++r) {
      max[r] = simd::nan_max(row_max_[static_cast<size_t>(i0 + r)], block_max[r]);
    }
    return detail::tail_vanishes(masks.data(), max, Rows, j0, count, len);
  }

  // The tile's scores against keys [j0, j0 + count), masked, and each row's max.
  template <int Rows>
  void score_masked(const RowMasks<Rows>& masks, Index i0, Index j0, Index count,
                    float (&block_max)[Rows]) {
    // The score loop stores whole 16-key tiles: the row buffers hold kBlockKeys, and a block
    // starts on a panel of packed K.
    assert(count > 0 && count <= kBlockKeys && j0 % kTile == 0);
    kernel_table().score[Rows - 1](rows<Rows>(q_ + i0 * d_, d_).data(), kv_.keys + j0 * d_, d_,
                                   count, rows<Rows>(scores_.data(), kBlockKeys).data(), block_max);
    if (!masked_) return;
    for (int r = 0; r < Rows; ++r) {
      if (!masks[r].changes(j0, count)) continue;
      masks[r].apply(row(r), j0, count);
      block_max[r] = f32_row_max(row(r), count);
    }
  }

  // With weights requested: the block's exp(s - running max) go straight into the weights, the
  // keys not computed as 0, to be normalised once the row's max and sum are final.
  template <int Rows>
  void keep_weights(Index i0, Index j0, Index len, Index count, Index query_start, float* weights) {
    for (int r = 0; r < Rows; ++r) {
      const Index i = i0 + r;
      float* w = weights + i * nk_ + j0;
      std::copy(row(r), row(r) + count, w);
      std::fill(w + count, w + len, 0.0f);
      kept_[static_cast<size_t>((i - query_start) * (round_up(nk_, kBlockKeys) / kBlockKeys) +
                                j0 / kBlockKeys)] = {row_max_[static_cast<size_t>(i)], count};
    }
  }

  // One sweep over a row's weights: each block's exp(s - m) becomes exp(s - max) / sum, through
  // the factor exp(m - max) / sum (just 1 / sum where the block saw the final max, as most do).
  void normalise_weights(Index i, Index query_start, float* weights) const {
    const Index key_blocks = round_up(nk_, kBlockKeys) / kBlockKeys;
    const float max = row_max_[static_cast<size_t>(i)];
    const float inverse = 1.0f / row_sum_[static_cast<size_t>(i)];
    for (Index b = 0; b < key_blocks; ++b) {
      const KeptBlock& kept = kept_[static_cast<size_t>((i - query_start) * key_blocks + b)];
      const float factor = kept.max == max ? inverse : std::exp(kept.max - max) * inverse;
      float* w = weights + b * kBlockKeys;
      for (Index c = 0; c < kept.computed; ++c) w[c] *= factor;
    }
  }

  const float* q_;
  PackedKeysValues kv_;
  Index nq_, nk_, d_, dv_;
  const MaskContext& mask_;
  bool masked_, skipping_;
  // Two rows of scores, then of exp(s - max); running max and sum per query.
  std::vector<float> scores_, row_max_, row_sum_;
  std::vector<KeptBlock> kept_;  // [kBlockQueries][key blocks], with weights requested
};

}  // namespace

void f32_attention_fused_packed(const float* q, const PackedKeysValues& kv, Index nq, Index nk,
                                Index d, Index dv, const MaskContext& mask, float* out,
                                float* weights, HiddenBlocks hidden_blocks) {
  assert(nq >= 0 && nk >= 0 && d >= 0 && dv >= 0 && kv.stride >= nk);
  assert((nq == 0 || dv == 0 || out) && (nk == 0 || (kv.keys && kv.values)));
  std::fill(out, out + nq * dv, 0.0f);
  if (nk == 0) return;  // no keys: the empty sum, as the unfused path gives
  FusedForward(q, kv, nq, nk, d, dv, mask, hidden_blocks).run(out, weights);
}

void f32_attention_fused(const float* q, const float* k, const float* v, Index nq, Index nk,
                         Index d, Index dv, float scale, const MaskContext& mask, float* out,
                         float* weights, HiddenBlocks hidden_blocks) {
  // Packing touches every key anyway: the scale rides along, so the scores come out scaled.
  const std::unique_ptr<float[]> keys(new float[static_cast<size_t>(round_up(nk, kTile) * d)]);
  f32_pack_panels(k, d, d, nk, /*transposed=*/true, keys.get(), scale);
  const std::unique_ptr<float[]> values(new float[static_cast<size_t>(round_up(dv, kTile) * nk)]);
  f32_pack_panels(v, dv, nk, dv, /*transposed=*/false, values.get());
  f32_attention_fused_packed(q, {keys.get(), values.get(), nk}, nq, nk, d, dv, mask, out, weights,
                             hidden_blocks);
}

void attention_fused(ConstBatch q, ConstBatch k, ConstBatch v, float scale, const Mask& mask,
                     Index batch_heads, MutableBatch output, const MutableBatch* weights,
                     HiddenBlocks hidden_blocks) {
  const Index batch = q.batch / batch_heads;
  for (Index s = 0; s < q.batch; ++s) {
    const MaskContext context{mask, s, batch, batch_heads};
    f32_attention_fused(q[s].data(), k[s].data(), v[s].data(), q.rows, k.rows, q.cols, v.cols,
                        scale, context, output[s].data(), weights ? (*weights)[s].data() : nullptr,
                        hidden_blocks);
  }
}

}  // namespace attn::detail
