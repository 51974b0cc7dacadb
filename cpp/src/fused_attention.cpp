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
    f32_gemm_2xN4<4>(q0, q1, packed + t * d, d, kTile, c0, c1);
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
// columns (each [nk][16]) starting at key j0.
void pool_block(const float* p0, const float* p1, const float* packed_v, Index nk, Index j0,
                Index len, Index dv, const float (&alpha)[2], float* out0, float* out1) {
  for (Index c = 0; c < dv; c += kTile) {
    F32x4 acc0[4], acc1[4];
    f32_gemm_2xN4<4>(p0, p1, packed_v + c * nk + j0 * kTile, len, kTile, acc0, acc1);
    const Index columns = std::min(kTile, dv - c);
    store_row_tile(out0 + c, acc0, columns, &alpha[0]);
    store_row_tile(out1 + c, acc1, columns, &alpha[1]);
  }
}

// One online-softmax step for one row (the form that sees the keys a block at a time): folds the
// block's scores into the row's running max and sum, turns them into exp(s - new max) in place,
// and returns the factor by which what was pooled so far must be rescaled.
float online_softmax_step(float* scores, Index len, float block_max, bool first_block,
                          float& running_max, float& running_sum) {
  const float new_max = simd::nan_max(running_max, block_max);
  // 0 on the first block (exp(-inf)); a row with no finite score stays NaN, as PyTorch. Once a
  // row's max has settled most blocks leave it unchanged: skip exp's call then.
  const float alpha = first_block              ? 0.0f
                      : new_max == running_max ? 1.0f
                                               : std::exp(running_max - new_max);
  // A max of -inf means no visible key yet (fill -inf), where exp(s - max) would be NaN (if max
  // is -inf, don't compute -inf - -inf): such a block contributes nothing. A row that never
  // meets a finite score keeps sum 0 and ends NaN (0 / 0), as PyTorch.
  float block_sum = 0.0f;
  if (new_max == kNegInf) {
    std::fill(scores, scores + len, 0.0f);
  } else {
    block_sum = f32_exp_shifted_sum(scores, len, new_max);
  }
  running_sum = alpha * running_sum + block_sum;
  running_max = new_max;
  return alpha;
}

// weights[j] = p[j] / sum: a row's normalised weights, once its sum is final.
void write_weights(const float* p, Index nk, float sum, float* weights) {
  const float inverse = 1.0f / sum;
  for (Index j = 0; j < nk; ++j) weights[j] = p[j] * inverse;
}

}  // namespace

void f32_attention_fused(const float* q, const float* k, const float* v, Index nq, Index nk,
                         Index d, Index dv, float scale, const MaskContext& mask, float* out,
                         float* weights, const RowStats* stats) {
  std::fill(out, out + nq * dv, 0.0f);
  if (nk == 0) {  // no keys: the empty sum, as the unfused path gives
    if (stats) {
      std::fill(stats->max, stats->max + nq, kNegInf);
      std::fill(stats->sum, stats->sum + nq, 0.0f);
    }
    return;
  }
  // With weights requested, one key block spans the whole row: its max is then final, and the
  // normalised exponentials are the weights. Otherwise key blocks small enough that a packed K
  // block and its V block stay in L1/L2 while a block of queries passes over them.
  const Index key_block = weights ? round_up(nk, kTile) : kBlockKeys;
  // Packing touches every key anyway: the scale rides along, so the scores come out scaled.
  const std::unique_ptr<float[]> packed(new float[static_cast<size_t>(round_up(nk, kTile) * d)]);
  f32_pack_panels(k, d, d, nk, /*transposed=*/true, packed.get(), scale);
  const std::unique_ptr<float[]> packed_v(new float[static_cast<size_t>(round_up(dv, kTile) * nk)]);
  f32_pack_panels(v, dv, nk, dv, /*transposed=*/false, packed_v.get());
  std::vector<float> scores(static_cast<size_t>(2 * key_block));
  // Running max and sum per query; index nq is the spare twin of an odd last query, and
  // spare_row its output, computed and thrown away.
  std::vector<float> row_max(static_cast<size_t>(nq + 1), kNegInf);
  std::vector<float> row_sum(static_cast<size_t>(nq + 1), 0.0f);
  std::vector<float> spare_row(static_cast<size_t>(dv), 0.0f);
  const bool masked = !mask.mask.empty();
  float* rows[2] = {scores.data(), scores.data() + key_block};

  for (Index query_start = 0; query_start < nq; query_start += kBlockQueries) {
    const Index query_end = std::min(nq, query_start + kBlockQueries);
    for (Index j0 = 0; j0 < nk; j0 += key_block) {
      const Index len = std::min(key_block, nk - j0);
      for (Index i0 = query_start; i0 < query_end; i0 += 2) {
        const Index r1 = i0 + 1 < query_end ? i0 + 1 : nq;  // nq: the spare twin
        const Index query[2] = {i0, r1 == nq ? i0 : r1};    // the query rows computed
        const Index state[2] = {i0, r1};                    // where their running state lives
        float* out1 = r1 == nq ? spare_row.data() : out + r1 * dv;
        float block_max[2];
        score_block(q + query[0] * d, q + query[1] * d, packed.get() + j0 * d, d, len, rows[0],
                    rows[1], block_max);
        float alpha[2];
        for (int r = 0; r < 2; ++r) {
          if (masked) {
            RowMask(mask, nq, nk, query[r]).apply(rows[r], j0, len);
            block_max[r] = f32_row_max(rows[r], len);
          }
          alpha[r] = online_softmax_step(rows[r], len, block_max[r], j0 == 0,
                                         row_max[static_cast<size_t>(state[r])],
                                         row_sum[static_cast<size_t>(state[r])]);
        }
        pool_block(rows[0], rows[1], packed_v.get(), nk, j0, len, dv, alpha, out + i0 * dv, out1);
        if (weights) {  // one block: the sums are final
          write_weights(rows[0], nk, row_sum[static_cast<size_t>(i0)], weights + i0 * nk);
          if (r1 != nq)
            write_weights(rows[1], nk, row_sum[static_cast<size_t>(r1)], weights + r1 * nk);
        }
      }
    }
    for (Index i = query_start; i < query_end; ++i) {
      const float inverse = 1.0f / row_sum[static_cast<size_t>(i)];
      for (Index c = 0; c < dv; ++c) out[i * dv + c] *= inverse;
    }
    // The spare twin restarts with the next query block.
    row_max[static_cast<size_t>(nq)] = kNegInf;
    row_sum[static_cast<size_t>(nq)] = 0.0f;
  }
  if (stats) {
    std::copy(row_max.begin(), row_max.end() - 1, stats->max);
    std::copy(row_sum.begin(), row_sum.end() - 1, stats->sum);
  }
}

void attention_fused(ConstBatch q, ConstBatch k, ConstBatch v, float scale, const Mask& mask,
                     Index batch_heads, MutableBatch output, const MutableBatch* weights) {
  const Index batch = q.batch / batch_heads;
  for (Index s = 0; s < q.batch; ++s) {
    const MaskContext context{mask, s, batch, batch_heads};
    f32_attention_fused(q[s].data(), k[s].data(), v[s].data(), q.rows, k.rows, q.cols, v.cols,
                        scale, context, output[s].data(), weights ? (*weights)[s].data() : nullptr,
                        nullptr);
  }
}

}  // namespace attn::detail
