// The backward of the fused attention kernel (fused_attention.cpp is its forward). With
// P = softmax(mask(s q k^T)), dropout factors F, O = (P * F) V and dP = F * (dO V^T):
//   D_i = sum_j P_ij dP_ij,   dS = P * (dP - D),   dV = (P * F)^T dO,   dQ = s dS K,   dK = s dS^T
//   Q
// with dS = 0 where the mask replaced a score by its fill (a constant has no gradient).
//
// A block of queries at a time, the scores of its rows against every key are kept as one strip
// (rows x nk, not nq x nk): the softmax is then exact in two passes (no online rescaling), and D
// comes from the strip itself (sum_j P_ij dP_ij equals dO_i . O_i), so the forward is never
// rerun: five products of 2 nq nk d flops in all, with the same GEMM micro-kernel as the forward
// on operands packed once per score matrix.
//
// Threads. A strip is worked on in three steps, each a region of tasks that write disjoint
// parts of it or of the gradients:
//   1. key chunks: the scores and dP = dO V^T of every row of the strip against the chunk's
//      keys, masked, and each row's max over them;
//   2. rows: the softmax (its max reduced from step 1's, in chunk order), dropout and dS;
//   3. row pairs: dQ = dS K and the output rows; key blocks: dK += dS^T Q and dV += (P F)^T dO
//      for the block's keys, over the strip's rows.
// Every element is summed in one order that does not depend on the split: the one of a single
// thread doing the strip whole. A flash-style split (dQ by query blocks, dK and dV by key blocks,
// each recomputing the scores) would need no barriers but seven products instead of five, which
// one thread would pay for; here the price is three barriers per strip, so a batch with enough
// score matrices per thread gives each thread whole matrices instead.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "fused_attention.hpp"
#include "gemm.hpp"
#include "masked_softmax.hpp"
#include "parallel/split.hpp"
#include "row_kernels.hpp"

namespace attn::detail {

namespace {

// Keys per task in the steps that go by keys: one column block of the GEMM loop, so that a
// task's panels of K or V stay in L1 while every row of the strip passes over them.
constexpr Index kTaskKeys = 64;
// Score matrices per thread from which threads take whole matrices rather than split strips:
// the last round's idle threads then cost about a fifth at most.
constexpr Index kMatricesPerThread = 4;

// Whether threads take whole matrices (no barriers, no false sharing at the edges of the
// strips' tasks): when every thread gets as many, or enough of them that the last round's idle
// threads matter little.
bool whole_matrices(Index matrices, Index threads) {
  return threads > 1 && (matrices % threads == 0 || matrices >= kMatricesPerThread * threads);
}

// Queries per strip: 64, fewer when the keys are so many that the four strips of rows x nk
// floats would pass 2 MB, more than the caches keep while a strip is worked on (wasm SIMD, one
// thread: n = 4096 backward 3.5x -> 3.0x the forward's time with 32 rows instead of 64, and
// n = 16384 10.1 s -> 7.3 s with 8). Extra memory stays O(nk), whatever nq.
Index queries_per_strip(Index nk) {
  constexpr Index kMaxRows = 64, kStripFloats = Index{1} << 17;
  return std::clamp<Index>(kStripFloats / std::max<Index>(nk, 1) / 2 * 2, 2, kMaxRows);
}

Index tasks_of(Index n, Index per_task) { return (n + per_task - 1) / per_task; }

std::vector<float> packed_buffer(Index depth, Index cols) {
  return std::vector<float>(
      static_cast<size_t>(round_up(cols, kPanel) * std::max<Index>(depth, 1)));
}

// What one score matrix's backward works in, sized before any thread starts, so that nothing
// allocates inside a parallel region.
struct BackwardWorkspace {
  BackwardWorkspace(Index nq, Index nk, Index d, Index dv, bool output, bool dropout)
      : rows(queries_per_strip(nk)),
        stride(round_up(std::max<Index>(nk, 1), kPanel)),
        keys_t(packed_buffer(d, nk)),
        values_t(packed_buffer(dv, nk)),
        keys(packed_buffer(nk, d)),
        queries(packed_buffer(nq, d)),
        grad_out_panels(packed_buffer(nq, dv)),
        values(output ? packed_buffer(nk, dv) : std::vector<float>()),
        weights(static_cast<size_t>(rows * stride)),
        grad_scores(weights.size()),
        dropped(dropout ? weights.size() : 0),
        weights_t(weights.size()),
        grad_scores_t(weights.size()),
        chunk_max(static_cast<size_t>(rows * (tasks_of(nk, kTaskKeys) + 1))),
        row_max(static_cast<size_t>(rows)),
        no_max(static_cast<size_t>(rows), -std::numeric_limits<float>::infinity()) {
    masks.reserve(static_cast<size_t>(rows));
  }

  Index rows;    // queries per strip
  Index stride;  // floats per strip row
  // K^T (scaled) and V^T as the score GEMMs' B; K, Q, dO (and V for the output) as the B of
  // the products that contract over keys or queries.
  std::vector<float> keys_t, values_t, keys, queries, grad_out_panels, values;
  // Strips [rows][stride]: P, then dP and dS, and P * F under dropout; the transposes [nk][rows]
  // of P * F and of dS, for dV and dK.
  std::vector<float> weights, grad_scores, dropped, weights_t, grad_scores_t;
  // Each row's max over each key chunk [chunks][rows], then over all its computed keys [rows].
  // The keys split into chunks in two runs when a tail is scored after all: one chunk more.
  std::vector<float> chunk_max, row_max;
  // The strip's row masks, and the skip rule's max before any key is scored (-inf).
  std::vector<RowMask> masks;
  std::vector<float> no_max;
};

// One score matrix's backward, in a workspace: its operands packed once, then the strips of one
// query block at a time, each split across the threads (unless called inside a region).
class MatrixBackward {
 public:
  MatrixBackward(const float* q, const float* k, const float* v, const float* grad_out, Index nq,
                 Index nk, Index d, Index dv, float scale, const MaskContext& mask,
                 const Dropout& dropout, uint64_t first_weight, HiddenBlocks hidden_blocks,
                 BackwardWorkspace& workspace)
      : q_(q),
        grad_out_(grad_out),
        nq_(nq),
        nk_(nk),
        d_(d),
        dv_(dv),
        scale_(scale),
        mask_(mask),
        dropout_(dropout),
        first_weight_(first_weight),
        masked_(!mask.mask.empty()),
        skipping_(masked_ && hidden_blocks == HiddenBlocks::Skip),
        work_(workspace) {
    // s q k^T: the scale rides along with packing K, as in the forward.
    f32_pack_panels(k, d, d, nk, /*transposed=*/true, work_.keys_t.data(), scale);
    f32_pack_panels(v, dv, dv, nk, /*transposed=*/true, work_.values_t.data());
    f32_pack_panels(k, d, nk, d, /*transposed=*/false, work_.keys.data());
    f32_pack_panels(q, d, nq, d, /*transposed=*/false, work_.queries.data());
    f32_pack_panels(grad_out, dv, nq, dv, /*transposed=*/false, work_.grad_out_panels.data());
  }

  // dq, dk, dv receive the gradients; out, when non-null, the forward output (P * F) V.
  void run(const float* v, float* dq, float* dk, float* dv, float* out) {
    std::fill(dq, dq + nq_ * d_, 0.0f);
    std::fill(dk, dk + nk_ * d_, 0.0f);
    std::fill(dv, dv + nk_ * dv_, 0.0f);
    if (out) {
      std::fill(out, out + nq_ * dv_, 0.0f);
      f32_pack_panels(v, dv_, nk_, dv_, /*transposed=*/false, work_.values.data());
    }
    if (nk_ == 0) return;  // the output is the empty sum: nothing depends on q
    for (Index i0 = 0; i0 < nq_; i0 += work_.rows) {
      const Index rows = std::min(work_.rows, nq_ - i0);
      const Index keys = score_strip(i0, rows);
      grad_scores_strip(i0, rows, keys);
      products(i0, rows, keys, dq, dk, dv, out);
    }
  }

 private:
  // Step 1 for rows i0..: the masked scores and dP into the strips, and each row's max; returns
  // how many leading keys carry weights (the rest are exactly 0 for every row). Which keys those
  // are is the forward's skip rule (keys_to_compute, tail_vanishes), asked over all keys at once.
  Index score_strip(Index i0, Index rows) {
    work_.masks.clear();
    if (masked_) {
      for (Index i = i0; i < i0 + rows; ++i) work_.masks.emplace_back(mask_, nq_, nk_, i);
    }
    Index keys = nk_;
    if (skipping_)
      keys = keys_to_compute(work_.masks.data(), work_.no_max.data(), rows, 0, nk_, kPanel);
    Index chunks = score_keys(i0, rows, 0, keys, 0);
    reduce_row_max(rows, chunks);
    if (keys < nk_ &&
        !tail_vanishes(work_.masks.data(), work_.row_max.data(), rows, 0, keys, nk_)) {
      chunks += score_keys(i0, rows, keys, nk_, chunks);
      reduce_row_max(rows, chunks);
      keys = nk_;
    }
    return keys;
  }

  // Step 1 on keys [j0, j1), as chunks numbered from first_chunk; returns how many. j0 starts a
  // panel of packed K (a multiple of 16).
  Index score_keys(Index i0, Index rows, Index j0, Index j1, Index first_chunk) {
    assert(j0 % kPanel == 0);
    const Index chunks = tasks_of(j1 - j0, kTaskKeys);
    run_split(chunks, rows * (j1 - j0) * (d_ + dv_), [&](Index c, int) {
      const Index start = j0 + c * kTaskKeys;
      score_chunk(i0, rows, start, std::min(kTaskKeys, j1 - start), first_chunk + c);
    });
    return chunks;
  }

  // Step 1's task: every row of the strip against the `len` keys from j0.
  void score_chunk(Index i0, Index rows, Index j0, Index len, Index chunk) {
    f32_gemm_panels_serial(q_ + i0 * d_, d_, rows, d_, work_.keys_t.data() + j0 * d_, kPanel * d_,
                           len, work_.weights.data() + j0, work_.stride);
    f32_gemm_panels_serial(grad_out_ + i0 * dv_, dv_, rows, dv_, work_.values_t.data() + j0 * dv_,
                           kPanel * dv_, len, work_.grad_scores.data() + j0, work_.stride);
    for (Index r = 0; r < rows; ++r) {
      float* s = work_.weights.data() + r * work_.stride + j0;
      if (masked_) work_.masks[static_cast<size_t>(r)].apply(s, j0, len);
      work_.chunk_max[static_cast<size_t>(chunk * work_.rows + r)] = f32_row_max(s, len);
    }
  }

  // Each row's max over chunks [0, chunks), in chunk order: the max of the whole row whatever
  // the split.
  void reduce_row_max(Index rows, Index chunks) {
    for (Index r = 0; r < rows; ++r) {
      float max = -std::numeric_limits<float>::infinity();
      for (Index c = 0; c < chunks; ++c) {
        max = simd::nan_max(max, work_.chunk_max[static_cast<size_t>(c * work_.rows + r)]);
      }
      work_.row_max[static_cast<size_t>(r)] = max;
    }
  }

  uint64_t weight_index(Index i, Index j) const {
    return first_weight_ + static_cast<uint64_t>(i * nk_ + j);
  }

  // Step 2, a task per row r of the strip (query i0 + r): its scores become P and its dP becomes
  // dS; under dropout P * F goes into `dropped`.
  void grad_scores_strip(Index i0, Index rows, Index keys) {
    // Weighed as a few multiply-adds per weight: the exp, the dropout hash, the two sweeps.
    run_split(rows, rows * keys * 16, [&](Index r, int) {
      float* p = work_.weights.data() + r * work_.stride;
      float* ds = work_.grad_scores.data() + r * work_.stride;
      f32_softmax_row(p, keys, work_.row_max[static_cast<size_t>(r)]);
      if (dropout_.active()) {  // dropped = P * F, ds = F * dP: D and dS need both, dV the first
        float* dropped = work_.dropped.data() + r * work_.stride;
        for (Index j = 0; j < keys; ++j) {
          const float factor = dropout_.factor(weight_index(i0 + r, j));
          ds[j] *= factor;
          dropped[j] = p[j] * factor;
        }
      }
      masked_softmax_backward_row(p, ds, keys, scale_,
                                  masked_ ? &work_.masks[static_cast<size_t>(r)] : nullptr);
    });
  }

  // Step 3: the key blocks first (the larger tasks), then the row pairs.
  void products(Index i0, Index rows, Index keys, float* dq, float* dk, float* dv, float* out) {
    const Index blocks = tasks_of(keys, kTaskKeys), pairs = tasks_of(rows, 2);
    run_split(blocks + pairs, rows * keys * (2 * d_ + (out ? 2 : 1) * dv_), [&](Index t, int) {
      if (t < blocks) {
        key_block_products(i0, rows, t * kTaskKeys, std::min(keys, (t + 1) * kTaskKeys), dk, dv);
      } else {
        const Index r = (t - blocks) * 2;
        row_products(i0 + r, r, std::min<Index>(2, rows - r), keys, dq, out);
      }
    });
  }

  // P * F: the strip the values are pooled with.
  const float* pooled() const {
    return dropout_.active() ? work_.dropped.data() : work_.weights.data();
  }

  // dK += dS^T Q and dV += (P * F)^T dO for keys [j0, j1), through their transposes.
  void key_block_products(Index i0, Index rows, Index j0, Index j1, float* dk, float* dv) {
    for (Index r = 0; r < rows; ++r) {
      const float* ds = work_.grad_scores.data() + r * work_.stride;
      const float* p = pooled() + r * work_.stride;
      for (Index j = j0; j < j1; ++j) {
        work_.grad_scores_t[static_cast<size_t>(j * work_.rows + r)] = ds[j];
        work_.weights_t[static_cast<size_t>(j * work_.rows + r)] = p[j];
      }
    }
    const float* grad_scores_t = work_.grad_scores_t.data() + j0 * work_.rows;
    const float* weights_t = work_.weights_t.data() + j0 * work_.rows;
    f32_gemm_panels_serial(grad_scores_t, work_.rows, j1 - j0, rows,
                           work_.queries.data() + i0 * kPanel, kPanel * nq_, d_, dk + j0 * d_, d_,
                           /*accumulate=*/true);
    f32_gemm_panels_serial(weights_t, work_.rows, j1 - j0, rows,
                           work_.grad_out_panels.data() + i0 * kPanel, kPanel * nq_, dv_,
                           dv + j0 * dv_, dv_, /*accumulate=*/true);
  }

  // dQ = dS K, and O = (P * F) V when asked, for `count` rows from query i (strip row r).
  void row_products(Index i, Index r, Index count, Index keys, float* dq, float* out) {
    f32_gemm_panels_serial(work_.grad_scores.data() + r * work_.stride, work_.stride, count, keys,
                           work_.keys.data(), kPanel * nk_, d_, dq + i * d_, d_);
    if (out) {
      f32_gemm_panels_serial(pooled() + r * work_.stride, work_.stride, count, keys,
                             work_.values.data(), kPanel * nk_, dv_, out + i * dv_, dv_);
    }
  }

  const float* q_;
  const float* grad_out_;
  Index nq_, nk_, d_, dv_;
  float scale_;
  const MaskContext& mask_;
  const Dropout& dropout_;
  uint64_t first_weight_;
  bool masked_;
  bool skipping_;  // keys hidden from a whole strip are left out
  BackwardWorkspace& work_;
};

}  // namespace

// Each score matrix writes only its own dq, dk, dv (and output). Threads take whole matrices,
// each in a workspace of its own, when whole_matrices says so; otherwise the matrices go one
// after another, their strips split across the threads. Both give the same bits.
void attention_fused_backward(ConstBatch q, ConstBatch k, ConstBatch v, ConstBatch grad_output,
                              float scale, const Mask& mask, Index batch_heads,
                              const Dropout& dropout, MutableBatch dq, MutableBatch dk,
                              MutableBatch dv, const MutableBatch* output,
                              HiddenBlocks hidden_blocks) {
  const Index batch = q.batch / batch_heads;
  ThreadPool& pool = thread_pool();
  const bool whole = whole_matrices(q.batch, pool.threads());
  const Index workspaces =
      whole ? std::min<Index>(pool.threads(), q.batch) : std::min<Index>(q.batch, 1);
  std::vector<BackwardWorkspace> workspace;
  workspace.reserve(static_cast<size_t>(workspaces));
  for (Index t = 0; t < workspaces; ++t) {
    workspace.emplace_back(q.rows, k.rows, q.cols, v.cols, output != nullptr, dropout.active());
  }
  const auto matrix = [&](Index s, int slot) {
    const MaskContext context{mask, s, batch, batch_heads};
    MatrixBackward backward(q[s].data(), k[s].data(), v[s].data(), grad_output[s].data(), q.rows,
                            k.rows, q.cols, v.cols, scale, context, dropout,
                            static_cast<uint64_t>(s * q.rows * k.rows), hidden_blocks,
                            workspace[static_cast<size_t>(slot)]);
    backward.run(v[s].data(), dq[s].data(), dk[s].data(), dv[s].data(),
                 output ? (*output)[s].data() : nullptr);
  };
  if (whole) {
    // The strips' regions then run inline, on the task's thread.
    pool.run(q.batch, [&](Index s, int slot) { matrix(s, slot); });
  } else {
    for (Index s = 0; s < q.batch; ++s) matrix(s, 0);
  }
}

}  // namespace attn::detail
