#include "fused_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "gemm.hpp"
#include "row_kernels.hpp"
#include "row_mask.hpp"
#include "simd/f32x4.hpp"

namespace attn::detail {

namespace {

using simd::F32x4;

constexpr Index kTile = kPanel;      // keys (or output columns) per micro-kernel call
constexpr Index kBlockKeys = 128;    // keys per online-softmax step: 32 KB of packed K at d = 64
constexpr Index kBlockQueries = 64;  // queries that pass over one key block while it is hot
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Scores of two query rows against the `len` keys of a packed block, into s0 and s1, and each
// row's maximum taken on the way (the tiles are in registers then, which saves a pass).
void score_block(const float* q0, const float* q1, const float* packed, Index d, Index len,
                 float* s0, float* s1, float (&max)[2]) {
  const F32x4 lowest = simd::splat(-std::numeric_limits<float>::infinity());
  F32x4 max0 = lowest, max1 = lowest;
  const Index full_tiles_end = len / kTile * kTile;
  for (Index t = 0; t < len; t += kTile) {
    F32x4 c0[4], c1[4];
    f32_gemm_2x16(q0, q1, packed + t * d, d, kTile, c0, c1);
    for (int n = 0; n < 4; ++n) {
      simd::store(s0 + t + 4 * n, c0[n]);
      simd::store(s1 + t + 4 * n, c1[n]);
    }
    if (t < full_tiles_end) {  // a partial tile's padded lanes must not count
      for (int n = 0; n < 4; ++n) {
        max0 = simd::max(max0, c0[n]);
        max1 = simd::max(max1, c1[n]);
      }
    }
  }
  max[0] = simd::horizontal_max(max0);
  max[1] = simd::horizontal_max(max1);
  for (Index j = full_tiles_end; j < len; ++j) {
    max[0] = simd::nan_max(max[0], s0[j]);
    max[1] = simd::nan_max(max[1], s1[j]);
  }
}

// out = alpha * out + P (2 x len) * V (len x dv) for the two rows, V as packed panels of 16
// columns (each [stride][16]) starting at key j0.
void pool_block(const float* p0, const float* p1, const float* packed_v, Index stride, Index j0,
                Index len, Index dv, const float (&alpha)[2], float* out0, float* out1) {
  for (Index c = 0; c < dv; c += kTile) {
    F32x4 acc0[4], acc1[4];
    f32_gemm_2x16(p0, p1, packed_v + c * stride + j0 * kTile, len, kTile, acc0, acc1);
    const Index columns = std::min(kTile, dv - c);
    store_row_tile(out0 + c, acc0, columns, &alpha[0]);
    store_row_tile(out1 + c, acc1, columns, &alpha[1]);
  }
}

// With weights requested, what one row kept of one key block: the running max its
// exp(s - max) were taken against, and how many of its keys were computed (the rest are 0).
struct KeptBlock {
  float max;
  Index computed;
};

// One score matrix's forward: K and V packed once, then query blocks meet key blocks, two query
// rows at a time (the micro-kernel's tile height).
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
        row_max_(static_cast<size_t>(nq + 1), kNegInf),
        row_sum_(static_cast<size_t>(nq + 1), 0.0f),
        spare_row_(static_cast<size_t>(dv), 0.0f) {}

  void run(float* out, float* weights) {
    const Index key_blocks = round_up(nk_, kBlockKeys) / kBlockKeys;
    if (weights) kept_.resize(static_cast<size_t>(kBlockQueries * key_blocks));
    for (Index query_start = 0; query_start < nq_; query_start += kBlockQueries) {
      const Index query_end = std::min(nq_, query_start + kBlockQueries);
      for (Index j0 = 0; j0 < nk_; j0 += kBlockKeys) {
        for (Index i0 = query_start; i0 < query_end; i0 += 2) {
          const Index r1 = i0 + 1 < query_end ? i0 + 1 : nq_;  // nq: the spare twin
          pair_block(i0, r1, j0, query_start, out, weights);
        }
      }
      for (Index i = query_start; i < query_end; ++i) {
        const float inverse = 1.0f / row_sum_[static_cast<size_t>(i)];
        for (Index c = 0; c < dv_; ++c) out[i * dv_ + c] *= inverse;
        if (weights) normalise_weights(i, query_start, weights + i * nk_);
      }
      // The spare twin restarts with the next query block.
      row_max_[static_cast<size_t>(nq_)] = kNegInf;
      row_sum_[static_cast<size_t>(nq_)] = 0.0f;
    }
  }

 private:
  // Query rows i0 and r1 (nq_: the spare twin of an odd last row, computed and thrown away)
  // against key block j0: scores, mask, online-softmax step, pooling.
  void pair_block(Index i0, Index r1, Index j0, Index query_start, float* out, float* weights) {
    const Index len = std::min(kBlockKeys, nk_ - j0);
    const Index query[2] = {i0, r1 == nq_ ? i0 : r1};  // the query rows computed
    const Index state[2] = {i0, r1};                   // where their running state lives
    const RowMask masks[2] = {RowMask(mask_, nq_, nk_, query[0]),
                              RowMask(mask_, nq_, nk_, query[1])};
    Index count = keys_to_compute(masks, state, j0, len);
    if (count == 0) {
      if (weights) keep_weights(state, j0, len, 0, query_start, weights);
      return;
    }
    float block_max[2];
    score_masked(query, masks, j0, count, block_max);
    if (count < len && !tail_vanishes(masks, state, j0, count, len, block_max)) {
      count = len;  // the row's max stayed near the fill: the hidden tail counts after all
      score_masked(query, masks, j0, count, block_max);
    }
    float alpha[2];
    for (int r = 0; r < 2; ++r) {
      alpha[r] = f32_online_softmax_step(row(r), count, block_max[r], j0 == 0,
                                         row_max_[static_cast<size_t>(state[r])],
                                         row_sum_[static_cast<size_t>(state[r])]);
    }
    float* out1 = r1 == nq_ ? spare_row_.data() : out + r1 * dv_;
    pool_block(row(0), row(1), kv_.values, kv_.stride, j0, count, dv_, alpha, out + i0 * dv_, out1);
    if (weights) keep_weights(state, j0, len, count, query_start, weights);
  }

  float* row(int r) { return scores_.data() + r * kBlockKeys; }

  // How many keys of block [j0, j0 + len) the pair computes: 0 when both rows skip the block
  // (RowMask::skips), else up to the later row's visible end rounded up to a whole tile (a
  // guess that tail_vanishes confirms once the block's max is known), or the whole block.
  Index keys_to_compute(const RowMask (&masks)[2], const Index (&state)[2], Index j0,
                        Index len) const {
    if (!skipping_) return len;
    Index count = 0;
    for (int r = 0; r < 2; ++r) {
      if (masks[r].skips(j0, len, row_max_[static_cast<size_t>(state[r])])) continue;
      const Index visible = masks[r].visible_end() - j0;
      count = std::max(count, visible > 0 ? round_up(std::min(visible, len), kTile) : len);
    }
    return std::min(count, len);
  }

  // Whether keys [j0 + count, j0 + len), left out, pass the same skip decision against the
  // max each row has once the computed keys are in.
  bool tail_vanishes(const RowMask (&masks)[2], const Index (&state)[2], Index j0, Index count,
                     Index len, const float (&block_max)[2]) const {
    for (int r = 0; r < 2; ++r) {
      const float max = simd::nan_max(row_max_[static_cast<size_t>(state[r])], block_max[r]);
      if (!masks[r].skips(j0 + count, len - count, max)) return false;
    }
    return true;
  }

  // The pair's scores against keys [j0, j0 + count), masked, and each row's max.
  void score_masked(const Index (&query)[2], const RowMask (&masks)[2], Index j0, Index count,
                    float (&block_max)[2]) {
    score_block(q_ + query[0] * d_, q_ + query[1] * d_, kv_.keys + j0 * d_, d_, count, row(0),
                row(1), block_max);
    if (!masked_) return;
    for (int r = 0; r < 2; ++r) {
      if (!masks[r].changes(j0, count)) continue;
      masks[r].apply(row(r), j0, count);
      block_max[r] = f32_row_max(row(r), count);
    }
  }

  // With weights requested: the block's exp(s - running max) go straight into the weights, the
  // keys not computed as 0, to be normalised once the row's max and sum are final.
  void keep_weights(const Index (&state)[2], Index j0, Index len, Index count, Index query_start,
                    float* weights) {
    for (int r = 0; r < 2; ++r) {
      const Index i = state[r];
      if (i == nq_) continue;  // the spare twin keeps nothing
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
  // Two rows of scores, then of exp(s - max); running max and sum per query (index nq: the
  // spare twin, whose output row spare_row_ is thrown away).
  std::vector<float> scores_, row_max_, row_sum_, spare_row_;
  std::vector<KeptBlock> kept_;  // [kBlockQueries][key blocks], with weights requested
};

}  // namespace

void f32_attention_fused_packed(const float* q, const PackedKeysValues& kv, Index nq, Index nk,
                                Index d, Index dv, const MaskContext& mask, float* out,
                                float* weights, HiddenBlocks hidden_blocks) {
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
