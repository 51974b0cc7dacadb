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
  BackwardWorkspace(Index nq, Index nk, Index d, Index dv, bool output, bool dropout, bool softcap)
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
        softcap_grad(softcap ? weights.size() : 0),
        weights_t(weights.size()),
        grad_scores_t(weights.size()),
        chunk_max(static_cast<size_t>(rows * (tasks_of(nk, kTaskKeys) + 2))),
        row_max(static_cast<size_t>(rows)),
        sink_grad(static_cast<size_t>(rows)),
        no_max(static_cast<size_t>(rows), -std::numeric_limits<float>::infinity()) {
    masks.reserve(static_cast<size_t>(rows));
  }

  Index rows;    // queries per strip
  Index stride;  // floats per strip row
  // K^T (scaled) and V^T as the score GEMMs' B; K, Q, dO (and V for the output) as the B of
  // the products that contract over keys or queries.
  std::vector<float> keys_t, values_t, keys, queries, grad_out_panels, values;
  // Strips [rows][stride]: P, then dP and dS, P * F under dropout, the softcap's derivative
  // under a softcap; the transposes [nk][rows] of P * F and of dS, for dV and dK.
  std::vector<float> weights, grad_scores, dropped, softcap_grad, weights_t, grad_scores_t;
  // Each row's max over each key chunk [chunks][rows], then over all its computed keys [rows].
  // The keys split into chunks in up to three runs (keys before the window and a hidden tail
  // scored after all): two chunks more.
  std::vector<float> chunk_max, row_max;
  // Each row's part of its head's sink gradient.
  std::vector<float> sink_grad;
  // The strip's row masks, and the skip rule's max before any key is scored (-inf).
  std::vector<RowMask> masks;
  std::vector<float> no_max;
};

// The score matrices of one K/V matrix's backward, in a workspace: K and V packed once, then each
// query head of its group (run), a strip of one query block at a time, each split across the
// threads (unless called inside a region). dk and dv sum the heads in the order they run.
class MatrixBackward {
 public:
  MatrixBackward(const float* k, const float* v, Index nq, Index nk, Index d, Index dv, float scale,
                 const Dropout& dropout, HiddenBlocks hidden_blocks, BackwardWorkspace& workspace)
      : nq_(nq),
        nk_(nk),
        d_(d),
        dv_(dv),
        scale_(scale),
        dropout_(dropout),
        hidden_blocks_(hidden_blocks),
        work_(workspace) {
    // s q k^T: the scale rides along with packing K, as in the forward.
    f32_pack_panels(k, d, d, nk, /*transposed=*/true, work_.keys_t.data(), scale);
    f32_pack_panels(v, dv, dv, nk, /*transposed=*/true, work_.values_t.data());
    f32_pack_panels(k, d, nk, d, /*transposed=*/false, work_.keys.data());
  }

  // One query head against these keys: dq receives its gradient, dk and dv get its part added
  // (zero them before the group's first head), out, when non-null, the forward output (P * F) V.
  // Returns the head's sink gradient for these rows (0 without a sink).
  float run(const float* q, const float* grad_out, const MaskContext& mask, uint64_t first_weight,
            const float* v, float* dq, float* dk, float* dv, float* out) {
    q_ = q;
    grad_out_ = grad_out;
    mask_ = &mask;
    first_weight_ = first_weight;
    const ScoreModifiers* modifiers = mask.modifiers;
    softcap_ = modifiers && modifiers->softcap > 0.0f;
    sink_ = modifiers && modifiers->sinks ? &modifiers->sinks[mask.head_of(0)] : nullptr;
    masked_ = !mask.mask.empty() || (modifiers && modifiers->change_scores());
    skipping_ = masked_ && hidden_blocks_ == HiddenBlocks::Skip;
    f32_pack_panels(q, d_, nq_, d_, /*transposed=*/false, work_.queries.data());
    f32_pack_panels(grad_out, dv_, nq_, dv_, /*transposed=*/false, work_.grad_out_panels.data());
    std::fill(dq, dq + nq_ * d_, 0.0f);
    if (out) {
      std::fill(out, out + nq_ * dv_, 0.0f);
      f32_pack_panels(v, dv_, nk_, dv_, /*transposed=*/false, work_.values.data());
    }
    float sink_grad = 0.0f;
    if (nk_ == 0) return sink_grad;  // the output is the empty sum: nothing depends on q
    for (Index i0 = 0; i0 < nq_; i0 += work_.rows) {
      const Index rows = std::min(work_.rows, nq_ - i0);
      const KeyRange keys = score_strip(i0, rows);
      grad_scores_strip(i0, rows, keys);
      products(i0, rows, keys, dq, dk, dv, out);
      for (Index r = 0; sink_ && r < rows; ++r)
        sink_grad += work_.sink_grad[static_cast<size_t>(r)];
    }
    return sink_grad;
  }

 private:
  // The keys [first, end) of a strip that carry weights (the rest are exactly 0 for every row).
  struct KeyRange {
    Index first, end;
  };

  // Step 1 for rows i0..: the masked scores and dP into the strips, and each row's max; returns
  // which keys carry weights. Which keys those are is the forward's skip rule (keys_to_compute,
  // tail_vanishes), asked over all keys at once, from the first key block the window lets the
  // strip's first row see.
  KeyRange score_strip(Index i0, Index rows) {
    work_.masks.clear();
    if (masked_) {
      for (Index i = i0; i < i0 + rows; ++i) work_.masks.emplace_back(*mask_, nq_, nk_, i);
    }
    KeyRange keys{0, nk_};
    if (skipping_) {
      keys.first = window_lead(i0);
      keys.end = keys.first + keys_to_compute(work_.masks.data(), work_.no_max.data(), rows,
                                              keys.first, nk_ - keys.first, kPanel);
    }
    Index chunks = score_keys(i0, rows, keys.first, keys.end, 0);
    reduce_row_max(rows, chunks);
    const bool head = keys.first > 0 && !tail_vanishes(work_.masks.data(), work_.row_max.data(),
                                                       rows, 0, 0, keys.first);
    const bool tail = keys.end < nk_ && !tail_vanishes(work_.masks.data(), work_.row_max.data(),
                                                       rows, 0, keys.end, nk_);
    if (head) chunks += score_keys(i0, rows, 0, keys.first, chunks);
    if (tail) chunks += score_keys(i0, rows, keys.end, nk_, chunks);
    if (head || tail) {
      reduce_row_max(rows, chunks);
      keys = {head ? 0 : keys.first, tail ? nk_ : keys.end};
    }
    return keys;
  }

  // The first key the window's left side lets row i0 (so every later row) see, rounded down to
  // a key chunk; 0 without a window.
  Index window_lead(Index i0) const {
    const Index left = mask_->mask.window_left;
    if (left < 0) return 0;
    const auto first = std::max<int64_t>(
        0, static_cast<int64_t>(i0) + mask_->query_offset - static_cast<int64_t>(left));
    const auto lead = static_cast<Index>(first / kTaskKeys * kTaskKeys);
    return lead < nk_ ? lead : 0;
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
      float* softcap_grad = softcap_ ? work_.softcap_grad.data() + r * work_.stride + j0 : nullptr;
      work_.chunk_max[static_cast<size_t>(chunk * work_.rows + r)] =
          masked_ ? work_.masks[static_cast<size_t>(r)].apply(s, j0, len, softcap_grad)
                  : f32_row_max(s, len);
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
  // dS; under dropout P * F goes into `dropped`. With a sink, the row's part of its gradient,
  // -P_sink D (D = sum_j P_j dP_j, the sink pooling nothing), goes into sink_grad.
  void grad_scores_strip(Index i0, Index rows, KeyRange keys) {
    const Index n = keys.end - keys.first;
    // Weighed as a few multiply-adds per weight: the exp, the dropout hash, the two sweeps.
    run_split(rows, rows * n * 16, [&](Index r, int) {
      const Index offset = r * work_.stride + keys.first;
      float* p = work_.weights.data() + offset;
      float* ds = work_.grad_scores.data() + offset;
      float max = work_.row_max[static_cast<size_t>(r)];
      float sink_exp = 0.0f;
      if (sink_) {
        max = std::isnan(max) ? max : std::max(max, *sink_);
        sink_exp = std::exp(*sink_ - max);
      }
      const float inverse = f32_softmax_row(p, n, max, sink_exp);
      if (dropout_.active()) {  // dropped = P * F, ds = F * dP: D and dS need both, dV the first
        float* dropped = work_.dropped.data() + offset;
        for (Index j = 0; j < n; ++j) {
          const float factor = dropout_.factor(weight_index(i0 + r, keys.first + j));
          ds[j] *= factor;
          dropped[j] = p[j] * factor;
        }
      }
      const float delta = masked_softmax_backward_row(
          p, ds, n, scale_, masked_ ? &work_.masks[static_cast<size_t>(r)] : nullptr, keys.first);
      if (softcap_) {
        const float* softcap_grad = work_.softcap_grad.data() + offset;
        for (Index j = 0; j < n; ++j) ds[j] *= softcap_grad[j];
      }
      if (sink_) work_.sink_grad[static_cast<size_t>(r)] = -sink_exp * inverse * delta;
    });
  }

  // Step 3: the key blocks first (the larger tasks), then the row pairs.
  void products(Index i0, Index rows, KeyRange keys, float* dq, float* dk, float* dv, float* out) {
    const Index n = keys.end - keys.first;
    const Index blocks = tasks_of(n, kTaskKeys), pairs = tasks_of(rows, 2);
    run_split(blocks + pairs, rows * n * (2 * d_ + (out ? 2 : 1) * dv_), [&](Index t, int) {
      if (t < blocks) {
        const Index j0 = keys.first + t * kTaskKeys;
        key_block_products(i0, rows, j0, std::min(keys.end, j0 + kTaskKeys), dk, dv);
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

  // dQ = dS K, and O = (P * F) V when asked, for `count` rows from query i (strip row r), over
  // the keys that carry weights (packed K and V read from key keys.first on).
  void row_products(Index i, Index r, Index count, KeyRange keys, float* dq, float* out) {
    const Index offset = r * work_.stride + keys.first, n = keys.end - keys.first;
    f32_gemm_panels_serial(work_.grad_scores.data() + offset, work_.stride, count, n,
                           work_.keys.data() + keys.first * kPanel, kPanel * nk_, d_, dq + i * d_,
                           d_);
    if (out) {
      f32_gemm_panels_serial(pooled() + offset, work_.stride, count, n,
                             work_.values.data() + keys.first * kPanel, kPanel * nk_, dv_,
                             out + i * dv_, dv_);
    }
  }

  Index nq_, nk_, d_, dv_;
  float scale_;
  const Dropout& dropout_;
  HiddenBlocks hidden_blocks_;
  BackwardWorkspace& work_;
  // The query head run() is working on.
  const float* q_ = nullptr;
  const float* grad_out_ = nullptr;
  const MaskContext* mask_ = nullptr;
  uint64_t first_weight_ = 0;
  bool masked_ = false, skipping_ = false, softcap_ = false;
  const float* sink_ = nullptr;
};

}  // namespace

// Each K/V matrix writes only its own dk, dv and its query heads' dq (and output). Threads take
// whole K/V matrices, each in a workspace of its own, when whole_matrices says so; otherwise the
// matrices go one after another, their strips split across the threads. Both give the same
// bits. The sinks' gradient is summed per query matrix, then over the batch in order.
void attention_fused_backward(ConstBatch q, ConstBatch k, ConstBatch v, ConstBatch grad_output,
                              float scale, const Mask& mask, Index batch_heads,
                              const Dropout& dropout, MutableBatch dq, MutableBatch dk,
                              MutableBatch dv, const MutableBatch* output,
                              HiddenBlocks hidden_blocks, const FusedExtras& extras) {
  const Index batch = q.batch / batch_heads;
  const Index kv_heads = extras.kv_heads > 0 ? extras.kv_heads : batch_heads;
  const Index heads_per_kv = batch_heads / kv_heads;
  assert(batch_heads % kv_heads == 0 && k.batch == batch * kv_heads);
  ThreadPool& pool = thread_pool();
  const bool whole = whole_matrices(k.batch, pool.threads());
  const Index workspaces =
      whole ? std::min<Index>(pool.threads(), k.batch) : std::min<Index>(k.batch, 1);
  std::vector<BackwardWorkspace> workspace;
  workspace.reserve(static_cast<size_t>(workspaces));
  for (Index t = 0; t < workspaces; ++t) {
    workspace.emplace_back(q.rows, k.rows, q.cols, v.cols, output != nullptr, dropout.active(),
                           extras.modifiers.softcap > 0.0f);
  }
  std::vector<float> sink_grads(static_cast<size_t>(q.batch), 0.0f);
  const auto kv_matrix = [&](Index m, int slot) {
    std::fill(dk[m].data(), dk[m].data() + k.rows * k.cols, 0.0f);
    std::fill(dv[m].data(), dv[m].data() + v.rows * v.cols, 0.0f);
    MatrixBackward backward(k[m].data(), v[m].data(), q.rows, k.rows, q.cols, v.cols, scale,
                            dropout, hidden_blocks, workspace[static_cast<size_t>(slot)]);
    for (Index g = 0; g < heads_per_kv; ++g) {
      const Index s = m / kv_heads * batch_heads + m % kv_heads * heads_per_kv + g;
      const MaskContext context{mask, s, batch, batch_heads, &extras.modifiers};
      sink_grads[static_cast<size_t>(s)] =
          backward.run(q[s].data(), grad_output[s].data(), context,
                       static_cast<uint64_t>(s * q.rows * k.rows), v[m].data(), dq[s].data(),
                       dk[m].data(), dv[m].data(), output ? (*output)[s].data() : nullptr);
    }
  };
  if (whole) {
    // The strips' regions then run inline, on the task's thread.
    pool.run(k.batch, [&](Index m, int slot) { kv_matrix(m, slot); });
  } else {
    for (Index m = 0; m < k.batch; ++m) kv_matrix(m, 0);
  }
  if (extras.dsinks && extras.modifiers.sinks) {
    std::fill(extras.dsinks, extras.dsinks + batch_heads, 0.0f);
    for (Index s = 0; s < q.batch; ++s)
      extras.dsinks[s % batch_heads] += sink_grads[static_cast<size_t>(s)];
  }
}

}  // namespace attn::detail
