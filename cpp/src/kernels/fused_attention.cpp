#include "fused_attention.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <vector>

#include "floats.hpp"
#include "gemm.hpp"
#include "half.hpp"
#include "kernel_table.hpp"
#include "parallel/split.hpp"
#include "row_kernels.hpp"
#include "row_mask.hpp"

namespace attn::detail {

namespace {

constexpr Index kTile = kPanel;      // keys (or output columns) per micro-kernel call
constexpr Index kBlockQueries = 64;  // queries that pass over one key block while it is hot
// Keys per online-softmax step. Each step has fixed costs (the block's max and the rescaling, the
// micro-kernels' start and end, the masks' checks), so longer steps run faster: 512 keys ran
// dense attention 4-6% faster than 128 (d = 64 and 128, causal too). But a step computes its keys
// from the block's start, and a sliding window's rows see a band that starts inside it: there
// 128 (a window of 256 ran at 0.81 of its speed with steps of 512).
constexpr Index kBlockKeys = 512;
constexpr Index kWindowBlockKeys = 128;

Index keys_per_step(const Mask& mask) {
  return mask.window_left >= 0 ? kWindowBlockKeys : kBlockKeys;
}

// With weights requested, what one row kept of one key block: the running max its
// exp(s - max) were taken against, and how many of its keys were computed (the rest are 0).
struct KeptBlock {
  float max;
  Index computed;
};

Index key_blocks(Index nk, Index block) { return round_up(nk, block) / block; }

// What one thread's forward works in, sized before any thread starts for either step length (the
// rows for the longer, the kept blocks for the shorter): two rows of scores (then of
// exp(s - max)), a query block's running max and sum, with weights requested what each of its
// rows kept of each key block, and for K and V held as halves one key block of them widened.
struct FusedScratch {
  FusedScratch(Index nk, bool weights, Index half_d = 0, Index half_dv = 0)
      : scores(static_cast<size_t>(2 * kBlockKeys)),
        row_max(static_cast<size_t>(kBlockQueries)),
        row_sum(static_cast<size_t>(kBlockQueries)),
        kept(weights ? static_cast<size_t>(kBlockQueries * key_blocks(nk, kWindowBlockKeys)) : 0),
        block_keys(static_cast<size_t>(kBlockKeys * half_d)),
        block_values(static_cast<size_t>(round_up(half_dv, kPanel) * kBlockKeys)) {}
  std::vector<float> scores, row_max, row_sum;
  std::vector<KeptBlock> kept;  // [kBlockQueries][key blocks]
  // The widened key block: its key panels, and its rows of each value panel ([128][16] each).
  std::vector<float> block_keys, block_values;
};

// One score matrix's forward on K and V packed beforehand, a block of queries at a time: the
// block meets every key block in turn, two query rows at a time (the micro-kernel's best tile
// height). An odd last row, and a decode step's single query, go through a one-row tile rather
// than beside a twin computed in vain. Query blocks are independent, so threads may take them.
class FusedForward {
 public:
  FusedForward(const float* q, const PackedKeysValues& kv, Index nq, Index nk, Index d, Index dv,
               const MaskContext& mask, const Dropout& dropout, HiddenBlocks hidden_blocks,
               FusedScratch& scratch)
      : q_(q),
        kv_(kv),
        nq_(nq),
        nk_(nk),
        d_(d),
        dv_(dv),
        mask_(mask),
        block_(keys_per_step(mask.mask)),
        dropout_(dropout),
        masked_(!mask.mask.empty() || (mask.modifiers && mask.modifiers->change_scores())),
        skipping_(masked_ && hidden_blocks == HiddenBlocks::Skip),
        sinks_(mask.modifiers ? mask.modifiers->sinks : nullptr),
        scratch_(scratch) {}

  // Rows [query_start, query_start + kBlockQueries) of out (zeroed by the caller) and weights,
  // and with lse non-null, each row's log-sum-exp at lse[i].
  void run_block(Index query_start, float* out, float* weights, float* lse) {
    pool_keys(query_start, 0, nk_, out, weights);
    for (Index i = query_start; i < query_end(); ++i) {
      // A sink joins the denominator only: what was pooled is rescaled to the max it may raise.
      const float factor =
          sinks_ ? fold_sink(sinks_[mask_.head_of(i)], row_max(i), row_sum(i)) : 1.0f;
      const float inverse = factor / row_sum(i);
      for (Index c = 0; c < dv_; ++c) out[i * dv_ + c] *= inverse;
      if (weights) normalise_weights(i, weights + i * nk_);
      if (lse) lse[i] = row_max(i) + std::log(row_sum(i));
    }
  }

  // The same rows against keys [key_begin, key_end) only (key_begin a multiple of the block),
  // not normalised: out receives sum_j exp(s_ij - running_max(i)) v_j, the scratch each row's
  // running max and sum (their sum over those keys).
  void pool_keys(Index query_start, Index key_begin, Index key_end, float* out, float* weights) {
    assert(key_begin % block_ == 0);
    query_start_ = query_start;
    std::fill(scratch_.row_max.begin(), scratch_.row_max.end(), kNegativeInfinity);
    std::fill(scratch_.row_sum.begin(), scratch_.row_sum.end(), 0.0f);
    // The key blocks before every row's window go last: by then each row's max is known, and
    // the skip rule leaves them out (first, against a max of -inf, they would be computed in
    // vain). The order depends on the mask alone, so computing hidden blocks gives the same bits.
    const Index lead = std::min(window_lead(key_begin), key_end);
    first_block_ = lead < key_end ? lead : key_begin;
    for (Index j0 = lead; j0 < key_end; j0 += block_) pool_block(j0, key_end, out, weights);
    for (Index j0 = key_begin; j0 < lead; j0 += block_) pool_block(j0, key_end, out, weights);
  }

  // Query row i's running max and sum, in the scratch (over its keys once pool_keys returns).
  float& row_max(Index i) { return scratch_.row_max[static_cast<size_t>(i - query_start_)]; }
  float& row_sum(Index i) { return scratch_.row_sum[static_cast<size_t>(i - query_start_)]; }

 private:
  template <int Rows>
  using RowMasks = std::array<RowMask, Rows>;

  Index query_end() const { return std::min(nq_, query_start_ + kBlockQueries); }

  // The first key block (from key_begin, a block boundary) that some row of the query block
  // may see through the window's left side: the block of the earliest row's first visible key.
  Index window_lead(Index key_begin) const {
    const Index left = mask_.mask.window_left;
    if (left < 0) return key_begin;
    Index earliest = mask_.query_of(query_start_);
    for (Index i = query_start_ + 1; i < query_end(); ++i) {
      earliest = std::min(earliest, mask_.query_of(i));
    }
    const auto begin = static_cast<Index>(std::max<int64_t>(
        0, static_cast<int64_t>(earliest) + mask_.query_offset - static_cast<int64_t>(left)));
    return std::max(key_begin, begin / block_ * block_);
  }

  // Every query row of the block against the key block at j0 (its end capped at key_end).
  void pool_block(Index j0, Index key_end, float* out, float* weights) {
    const Index len = std::min(block_, key_end - j0);
    for (Index i0 = query_start_; i0 < query_end(); i0 += 2) {
      if (i0 + 1 < query_end()) {
        tile_block<2>(i0, j0, len, out, weights);
      } else {
        tile_block<1>(i0, j0, len, out, weights);
      }
    }
  }

  // Query rows i0 .. i0 + Rows - 1 against the `len` keys of the block at j0: scores, mask,
  // online-softmax step, pooling.
  template <int Rows>
  void tile_block(Index i0, Index j0, Index len, float* out, float* weights) {
    const RowMasks<Rows> masks = row_masks<Rows>(i0);
    Index count = keys_to_compute<Rows>(masks, i0, j0, len);
    if (count == 0) {
      if (weights) keep_weights<Rows>(i0, j0, len, 0, weights);
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
      alpha[r] = f32_online_softmax_step(row(r), count, block_max[r], j0 == first_block_,
                                         row_max(i), row_sum(i));
    }
    // The weights are kept before dropout (as d2l keeps them); the running sums above were too,
    // so only what is pooled is dropped.
    if (weights) keep_weights<Rows>(i0, j0, len, count, weights);
    if (dropout_.active()) drop<Rows>(i0, j0, count);
    const float* exps = scratch_.scores.data();
    assert(j0 + count <= kv_.stride);  // the pool loop reads V's panels up to key j0 + count
    if (kv_.half_values) {             // the block's widened rows, [kBlockKeys][16] per value panel
      kernel_table().pool[Rows - 1](rows<Rows>(exps, kBlockKeys).data(),
                                    scratch_.block_values.data(), kBlockKeys, 0, count, dv_, alpha,
                                    rows<Rows>(out + i0 * dv_, dv_).data());
    } else {
      kernel_table().pool[Rows - 1](rows<Rows>(exps, kBlockKeys).data(), kv_.values, kv_.stride, j0,
                                    count, dv_, alpha, rows<Rows>(out + i0 * dv_, dv_).data());
    }
  }

  // The dropout factors of the tile's exps: weight (matrix, i, j) takes draw
  // (matrix * nq + i) * nk + j, the numbering the backward regenerates.
  template <int Rows>
  void drop(Index i0, Index j0, Index count) {
    for (int r = 0; r < Rows; ++r) {
      const auto first = static_cast<uint64_t>((mask_.matrix * nq_ + i0 + r) * nk_ + j0);
      dropout_.apply(row(r), count, first);
    }
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

  float* row(int r) { return scratch_.scores.data() + r * kBlockKeys; }

  // How many keys of block [j0, j0 + len) the tile computes (the shared skip rule, against
  // each row's running max), or all of them when not skipping.
  template <int Rows>
  Index keys_to_compute(const RowMasks<Rows>& masks, Index i0, Index j0, Index len) {
    if (!skipping_) return len;
    return detail::keys_to_compute(masks.data(), &row_max(i0), Rows, j0, len, kTile);
  }

  // Whether keys [j0 + count, j0 + len), left out, pass the same skip decision against the
  // max each row has once the computed keys are in.
  template <int Rows>
  bool tail_vanishes(const RowMasks<Rows>& masks, Index i0, Index j0, Index count, Index len,
                     const float (&block_max)[Rows]) {
    float max[Rows];
    for (int r = 0; r < Rows; ++r) {
      max[r] = simd::nan_max(row_max(i0 + r), block_max[r]);
    }
    return detail::tail_vanishes(masks.data(), max, Rows, j0, count, len);
  }

  // The tile's scores against keys [j0, j0 + count), masked, and each row's max.
  template <int Rows>
  void score_masked(const RowMasks<Rows>& masks, Index i0, Index j0, Index count,
                    float (&block_max)[Rows]) {
    // The score loop stores whole 16-key tiles: the row buffers hold kBlockKeys, and a block
    // starts on a panel of packed K.
    assert(count > 0 && count <= block_ && j0 % kTile == 0);
    const float* keys = kv_.half_keys ? widened_keys(j0) : kv_.keys + j0 * d_;
    kernel_table().score[Rows - 1](rows<Rows>(q_ + i0 * d_, d_).data(), keys, d_, count,
                                   rows<Rows>(scratch_.scores.data(), kBlockKeys).data(),
                                   block_max);
    if (!masked_) return;
    for (int r = 0; r < Rows; ++r) {
      if (!masks[r].changes(j0, count)) continue;
      block_max[r] = masks[r].apply(row(r), j0, count);
    }
  }

  // With weights requested: the block's exp(s - running max) go straight into the weights, the
  // keys not computed as 0, to be normalised once the row's max and sum are final.
  template <int Rows>
  void keep_weights(Index i0, Index j0, Index len, Index count, float* weights) {
    for (int r = 0; r < Rows; ++r) {
      const Index i = i0 + r;
      float* w = weights + i * nk_ + j0;
      std::copy(row(r), row(r) + count, w);
      std::fill(w + count, w + len, 0.0f);
      kept(i, j0 / block_) = {row_max(i), count};
    }
  }

  // One sweep over a row's weights: each block's exp(s - m) becomes exp(s - max) / sum, through
  // the factor exp(m - max) / sum (just 1 / sum where the block saw the final max, as most do).
  void normalise_weights(Index i, float* weights) {
    const float max = row_max(i);
    const float inverse = 1.0f / row_sum(i);
    for (Index b = 0; b < key_blocks(nk_, block_); ++b) {
      const KeptBlock& block = kept(i, b);
      const float factor = block.max == max ? inverse : std::exp(block.max - max) * inverse;
      float* w = weights + b * block_;
      for (Index c = 0; c < block.computed; ++c) w[c] *= factor;
    }
  }

  // With K and V held as halves, key block j0 widened into the scratch (once for every row
  // that meets it, and only for a block some row computes): its key panels, returned.
  const float* widened_keys(Index j0) {
    if (widened_block_ != j0) {
      const Index len = std::min(block_, nk_ - j0);
      f32_from_halves(kv_.half_keys + j0 * d_, round_up(len, kPanel) * d_,
                      scratch_.block_keys.data());
      for (Index p = 0; p < round_up(dv_, kPanel) / kPanel; ++p) {
        f32_from_halves(kv_.half_values + p * kPanel * kv_.stride + j0 * kPanel, len * kPanel,
                        scratch_.block_values.data() + p * kPanel * kBlockKeys);
      }
      widened_block_ = j0;
    }
    return scratch_.block_keys.data();
  }

  // What query row i kept of key block b, in the scratch.
  KeptBlock& kept(Index i, Index b) {
    return scratch_.kept[static_cast<size_t>((i - query_start_) * key_blocks(nk_, block_) + b)];
  }

  const float* q_;
  PackedKeysValues kv_;
  Index nq_, nk_, d_, dv_;
  const MaskContext& mask_;
  Index block_;  // keys per online-softmax step (keys_per_step)
  const Dropout& dropout_;
  bool masked_, skipping_;
  const float* sinks_;  // one per head, or null
  FusedScratch& scratch_;
  Index query_start_ = 0, first_block_ = 0;  // the block pool_keys is working on, its first keys
  Index widened_block_ = -1;                 // the key block the scratch holds widened
};

// A decode's keys go in chunks of this many, one task each: a few sequences over a long cache
// then occupy many threads (16 at 16384 positions). A whole number of key blocks of either size.
// Each chunk leaves a partial softmax state, merged in chunk order (merge_chunks). The chunks are
// fixed, not cut per thread count, so the result is the same on every count; a cache of at most one
// chunk is computed exactly as in one pass, longer ones differ from a single pass by rounding only.
constexpr Index kChunkKeys = 1024;
static_assert(kChunkKeys % kBlockKeys == 0 && kChunkKeys % kWindowBlockKeys == 0);

// What a chunk leaves of one query row beside its unnormalised output: its running max and sum.
struct ChunkState {
  float max, sum;
};

// One row's output from its chunks' partial states, chunk c's at state[c * step] and
// partial[c * step * dv]: out = sum_c e_c O_c / sum_c e_c l_c with e_c = exp(m_c - max m_c),
// a sink (when non-null) joining the denominator; returns the row's log-sum-exp.
float merge_chunks(const ChunkState* state, const float* partial, Index chunks, Index step,
                   Index dv, const float* sink, float* out) {
  float max = kNegativeInfinity;
  for (Index c = 0; c < chunks; ++c) max = simd::nan_max(max, state[c * step].max);
  float sum = 0.0f;
  for (Index c = 0; c < chunks; ++c) {
    // 1 for a chunk that saw the row's max, without exp: a lone chunk's output stays its own,
    // as a single pass gives it, and a row with no finite score anywhere (-inf == -inf) ends
    // 0 / 0 = NaN, as in PyTorch.
    const ChunkState& chunk = state[c * step];
    const float factor = chunk.max == max ? 1.0f : std::exp(chunk.max - max);
    const float* o = partial + c * step * dv;
    // The first chunk assigns rather than adds to 0, which would turn a -0 into +0.
    for (Index k = 0; k < dv; ++k) out[k] = c == 0 ? factor * o[k] : out[k] + factor * o[k];
    sum = c == 0 ? factor * chunk.sum : sum + factor * chunk.sum;
  }
  const float inverse = (sink ? fold_sink(*sink, max, sum) : 1.0f) / sum;
  for (Index k = 0; k < dv; ++k) out[k] *= inverse;
  return max + std::log(sum);
}

}  // namespace

// Tasks are (K/V matrix, key chunk) pairs, each writing only its own partial states; then each
// K/V matrix's rows merge their chunks.
void attention_fused_packed(const float* q, const PackedKeysValues& first, Index key_step,
                            Index value_step, Index count, Index nq, Index nk, Index d, Index dv,
                            const Mask& mask, Index batch_heads, float* out,
                            const FusedExtras& extras, Index query_offset) {
  assert(count >= 0 && nq >= 0 && nk >= 0 && d >= 0 && dv >= 0 && first.stride >= nk);
  assert((count * nq * dv == 0 || out) &&
         (nk == 0 || (first.keys && first.values) || (first.half_keys && first.half_values)));
  const Index kv_heads = extras.kv_heads > 0 ? extras.kv_heads : batch_heads;
  const Index group = batch_heads / kv_heads, kv_count = count / group, rows = group * nq;
  const float* sinks = extras.modifiers.sinks;
  assert(mask.valid_lens.empty() && !mask.bool_mask && !mask.additive && !mask.key_padding);
  // K/V matrix k's context, for keys numbered from key_begin.
  const auto context = [&](Index k, Index key_begin) {
    return MaskContext{mask,
                       k * group,
                       count / batch_heads,
                       batch_heads,
                       &extras.modifiers,
                       query_offset - key_begin,
                       group > 1 ? nq : 0};
  };
  std::fill(out, out + count * nq * dv, 0.0f);
  if (nk == 0 || nq == 0) {  // no keys: the empty sum
    for (Index r = 0; extras.lse && r < count * nq; ++r) {
      extras.lse[r] = sinks ? sinks[r / nq % batch_heads] : kNegativeInfinity;
    }
    return;
  }
  const Index chunks = round_up(nk, kChunkKeys) / kChunkKeys;
  // [kv_count][chunks][rows] states and [kv_count][chunks][rows][dv] outputs; pool_keys adds to
  // the latter.
  std::vector<ChunkState> states(static_cast<size_t>(kv_count * chunks * rows));
  std::vector<float> partials(static_cast<size_t>(kv_count * chunks * rows * dv), 0.0f);
  ThreadPool& pool = thread_pool();
  const Index slots = std::min<Index>(pool.threads(), kv_count * chunks);
  // Halves widen a key block at a time into each thread's scratch as the kernel reads them.
  const bool half = first.half_keys != nullptr;
  std::vector<FusedScratch> scratch(
      static_cast<size_t>(slots),
      FusedScratch(kChunkKeys, /*weights=*/false, half ? d : 0, half ? dv : 0));
  const Dropout no_dropout(0.0f, 0);  // a decode step attends without dropout
  run_split(kv_count * chunks, kv_count * rows * nk * (d + dv), [&](Index task, int slot) {
    const Index k = task / chunks, key_begin = task % chunks * kChunkKeys;
    const Index len = std::min(kChunkKeys, nk - key_begin);
    // The chunk's panels: key key_begin's panel, and row key_begin of each value panel (the
    // panels' stride stays the cache's).
    const Index keys = k * key_step + key_begin * d, values = k * value_step + key_begin * kPanel;
    const PackedKeysValues kv =
        half ? PackedKeysValues{nullptr, nullptr, first.stride, first.half_keys + keys,
                                first.half_values + values}
             : PackedKeysValues{first.keys + keys, first.values + values, first.stride};
    const MaskContext mask_context = context(k, key_begin);
    FusedForward forward(q + k * rows * d, kv, rows, len, d, dv, mask_context, no_dropout,
                         HiddenBlocks::Skip, scratch[static_cast<size_t>(slot)]);
    ChunkState* state = states.data() + task * rows;
    for (Index start = 0; start < rows; start += kBlockQueries) {
      forward.pool_keys(start, 0, len, partials.data() + task * rows * dv, nullptr);
      for (Index i = start; i < std::min(rows, start + kBlockQueries); ++i) {
        state[i] = {forward.row_max(i), forward.row_sum(i)};
      }
    }
  });
  run_split(kv_count, kv_count * chunks * rows * dv, [&](Index k, int) {
    const MaskContext mask_context = context(k, 0);
    for (Index i = 0; i < rows; ++i) {
      const Index row = k * chunks * rows + i;
      const float lse = merge_chunks(states.data() + row, partials.data() + row * dv, chunks, rows,
                                     dv, sinks ? &sinks[mask_context.head_of(i)] : nullptr,
                                     out + (k * rows + i) * dv);
      if (extras.lse) extras.lse[k * rows + i] = lse;
    }
  });
}

namespace {

// K and V of score matrices [first, first + count) of a batch, packed as the fused kernel reads
// them (PackedKeysValues), the scale riding along with K: packing touches every key anyway.
class PackedBatch {
 public:
  PackedBatch(ConstBatch k, ConstBatch v, float scale, Index first, Index count)
      : key_floats_(round_up(k.rows, kTile) * k.cols),
        value_floats_(round_up(v.cols, kTile) * v.rows),
        nk_(k.rows),
        keys_(count * key_floats_),
        values_(count * value_floats_) {
    for (Index s = 0; s < count; ++s) {
      f32_pack_panels(k[first + s].data(), k.cols, k.cols, k.rows, /*transposed=*/true,
                      keys_.data() + s * key_floats_, scale);
      f32_pack_panels(v[first + s].data(), v.cols, v.rows, v.cols, /*transposed=*/false,
                      values_.data() + s * value_floats_);
    }
  }

  PackedKeysValues operator[](Index s) const {
    return {keys_.data() + s * key_floats_, values_.data() + s * value_floats_, nk_};
  }

 private:
  Index key_floats_, value_floats_, nk_;
  Floats keys_, values_;  // written whole by the packing
};

}  // namespace

// Tasks are (score matrix, query block) pairs, each writing only its own rows of the output and
// weights, so the result does not depend on the thread count. Matrices go in groups of as many
// as there are threads, so that the packed K and V held at once stay a group's, not the batch's.
// Within a matrix the last query blocks go first: under a causal mask they see the most keys, and
// the threads then finish together.
void attention_fused(ConstBatch q, ConstBatch k, ConstBatch v, float scale, const Mask& mask,
                     Index batch_heads, const Dropout& dropout, MutableBatch output,
                     const MutableBatch* weights, HiddenBlocks hidden_blocks,
                     const FusedExtras& extras) {
  const Index batch = q.batch / batch_heads, nq = q.rows, nk = k.rows, dv = v.cols;
  const Index kv_heads = extras.kv_heads > 0 ? extras.kv_heads : batch_heads;
  const Index heads_per_kv = batch_heads / kv_heads;
  assert(batch_heads % kv_heads == 0 && k.batch == batch * kv_heads);
  std::fill(output.data, output.data + output.size(), 0.0f);
  if (nk == 0 || nq == 0) {  // no keys: the empty sum, as the unfused path gives
    for (Index s = 0; extras.lse && s < q.batch; ++s) {
      const float* sinks = extras.modifiers.sinks;
      std::fill(extras.lse + s * nq, extras.lse + (s + 1) * nq,
                sinks ? sinks[s % batch_heads] : kNegativeInfinity);
    }
    return;
  }
  ThreadPool& pool = thread_pool();
  const Index group = pool.threads();  // K/V matrices packed at once
  const Index query_blocks = round_up(nq, kBlockQueries) / kBlockQueries;
  const Index tasks_per_kv = heads_per_kv * query_blocks;
  const Index slots = std::min<Index>(pool.threads(), std::min(group, k.batch) * tasks_per_kv);
  std::vector<FusedScratch> scratch(static_cast<size_t>(slots),
                                    FusedScratch(nk, weights != nullptr));
  for (Index first = 0; first < k.batch; first += group) {
    const Index count = std::min(group, k.batch - first);
    const PackedBatch packed(k, v, scale, first, count);
    const Index work = count * heads_per_kv * nq * nk * (q.cols + dv);
    run_split(count * tasks_per_kv, work, [&](Index task, int slot) {
      const Index m = first + task / tasks_per_kv, within = task % tasks_per_kv;
      const Index s =
          m / kv_heads * batch_heads + m % kv_heads * heads_per_kv + within / query_blocks;
      const Index block = query_blocks - 1 - within % query_blocks;
      const MaskContext context{mask, s, batch, batch_heads, &extras.modifiers};
      FusedForward forward(q[s].data(), packed[m - first], nq, nk, q.cols, dv, context, dropout,
                           hidden_blocks, scratch[static_cast<size_t>(slot)]);
      forward.run_block(block * kBlockQueries, output[s].data(),
                        weights ? (*weights)[s].data() : nullptr,
                        extras.lse ? extras.lse + s * nq : nullptr);
    });
  }
}

}  // namespace attn::detail
