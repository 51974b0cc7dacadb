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
// Threads. A strip is one thread's from start to end: its rows of dQ (and of the output) are its
// own, and its part of dK and dV goes into the sums of its group of strips. A score matrix's
// strips are dealt to a fixed number of groups (strip_groups: from the shapes alone, never from
// the thread count), the groups are the tasks of one region, and the groups' sums are added up
// in group order after it. Every element is then summed in one order whatever the split and on
// every thread count, with no barrier between strips (the previous design split each strip by
// key chunks, rows and key blocks: three barriers per strip). A batch with enough score matrices
// per thread gives each thread whole matrices instead, each worked on in the same order.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "floats.hpp"
#include "fused_attention.hpp"
#include "gemm.hpp"
#include "masked_softmax.hpp"
#include "parallel/split.hpp"
#include "row_kernels.hpp"

namespace attn::detail {

namespace {

// Keys per chunk of the skip rule and per key block of dK and dV: one column block of the GEMM
// loop, so that a block's panels of K or V stay in L1 while every row of the strip passes over
// them.
constexpr Index kTaskKeys = 64;
// Score matrices per thread from which threads take whole matrices rather than groups of strips:
// the last round's idle threads then cost about a fifth at most.
constexpr Index kMatricesPerThread = 4;
// Strips per group at least, groups per score matrix at most, and the floats of the groups' partial
// sums of dK and dV at most (32 MB: 16 groups at nk = 4096, d = 64).
constexpr Index kStripsPerGroup = 4;
constexpr Index kMaxGroups = 16;
constexpr Index kPartialFloats = Index{1} << 23;

// Whether threads take whole matrices (no partial sums, no false sharing at the edges of the
// strips' rows): when every thread gets as many, or enough of them that the last round's idle
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

// The groups of a score matrix's strips: strip s is group s % groups's (a causal mask's heavier
// late strips spread over the groups). Enough groups to keep 16 threads busy on long sequences,
// at least four strips each (every group but the first keeps a partial sum of dK and dV, which
// is added up after: at two strips a group, 16 groups at n = 2048 with the partials zeroed up
// front, one thread took 8% longer),
// within kPartialFloats. A function of the shapes alone, so the sums are the same on every thread
// count.
Index strip_groups(Index strips, Index nk, Index d, Index dv) {
  const Index partial = std::max<Index>(nk * (d + dv), 1);
  return std::clamp<Index>(std::min(strips / kStripsPerGroup, 1 + kPartialFloats / partial), 1,
                           kMaxGroups);
}

Floats packed_buffer(Index depth, Index cols) {
  return Floats(round_up(cols, kPanel) * std::max<Index>(depth, 1));
}

// The sizes of one K/V matrix's backward.
struct Shapes {
  Index nq, nk, d, dv;
  Index heads;  // query heads per K/V matrix
  bool output, dropout, softcap;

  Index rows() const { return queries_per_strip(nk); }
  Index strips() const { return tasks_of(nq, rows()); }
  Index groups() const { return strip_groups(strips(), nk, d, dv); }
};

// What one strip is worked in, one per thread: the strip's rows of Q and dO packed as the B of
// dK += dS^T Q and dV += (P * F)^T dO; strips [rows][stride] of P, of dP then dS, of P * F
// under dropout and of the softcap's derivative under a softcap; the transposes [nk][rows] of
// P * F and of dS.
struct StripBuffers {
  explicit StripBuffers(const Shapes& shapes)
      : rows(shapes.rows()),
        stride(round_up(std::max<Index>(shapes.nk, 1), kPanel)),
        queries(packed_buffer(rows, shapes.d)),
        grad_out(packed_buffer(rows, shapes.dv)),
        weights(rows * stride),
        grad_scores(weights.size()),
        dropped(shapes.dropout ? weights.size() : 0),
        softcap_grad(shapes.softcap ? weights.size() : 0),
        weights_t(weights.size()),
        grad_scores_t(weights.size()),
        chunk_max(rows * (tasks_of(shapes.nk, kTaskKeys) + 2)),
        row_max(rows),
        no_max(static_cast<size_t>(rows), -std::numeric_limits<float>::infinity()) {
    masks.reserve(static_cast<size_t>(rows));
  }

  Index rows;    // queries per strip
  Index stride;  // floats per strip row
  Floats queries, grad_out;
  Floats weights, grad_scores, dropped, softcap_grad, weights_t, grad_scores_t;
  // Each row's max over each key chunk [chunks][rows], then over all its computed keys [rows].
  // The keys split into chunks in up to three runs (keys before the window and a hidden tail
  // scored after all): two chunks more.
  Floats chunk_max, row_max;
  // The strip's row masks, and the skip rule's max before any key is scored (-inf).
  std::vector<RowMask> masks;
  std::vector<float> no_max;
};

// What one K/V matrix's backward works in, sized before any thread starts, so that nothing
// allocates inside a parallel region: K^T (scaled) and V^T as the B of the score GEMMs, K (and V
// for the output) as the B of dQ = dS K (and O = (P * F) V), shared by every strip; the partial
// sums of dK and dV of every group but the first (which adds into dK and dV themselves), and
// which of their key blocks were written; each
// strip's part of its head's sink gradient [heads][strips]; a strip's buffers per thread.
struct MatrixWorkspace {
  MatrixWorkspace(const Shapes& shapes, Index threads)
      : keys_t(packed_buffer(shapes.d, shapes.nk)),
        values_t(packed_buffer(shapes.dv, shapes.nk)),
        keys(packed_buffer(shapes.nk, shapes.d)),
        values(shapes.output ? packed_buffer(shapes.nk, shapes.dv) : Floats()),
        partials((shapes.groups() - 1) * shapes.nk * (shapes.d + shapes.dv)),
        sink_parts(shapes.heads * shapes.strips()),
        written(static_cast<size_t>((shapes.groups() - 1) * tasks_of(shapes.nk, kTaskKeys))) {
    const Index slots = std::max<Index>(1, std::min(threads, shapes.groups()));
    strips.reserve(static_cast<size_t>(slots));
    for (Index t = 0; t < slots; ++t) strips.emplace_back(shapes);
  }

  Floats keys_t, values_t, keys, values;
  Floats partials, sink_parts;
  // Which key blocks of each partial sum hold a value: the others hold none (they are never
  // zeroed, nor added).
  std::vector<uint8_t> written;
  std::vector<StripBuffers> strips;
};

// One query head of a K/V matrix: its inputs and where its results go.
struct HeadArgs {
  const float* q;
  const float* grad_out;
  MaskContext mask;
  uint64_t first_weight;  // dropout's draw number of the head's weight (0, 0)
  float* dq;
  float* out;  // the forward output, or null
};

// Where a group of strips sums its parts of dK and dV: dK and dV themselves (zeroed) for the
// first group, whose `written` is null; a partial sum for every other, whose key block b holds a
// value once written[b] is set (the first strip to reach it stores rather than adds).
struct GroupSums {
  float* dk;
  float* dv;
  uint8_t* written;
};

// The backward of the score matrices of one K/V matrix: its query heads' strips, a strip at a
// time (Strip), in groups (run).
class MatrixBackward {
 public:
  MatrixBackward(const Shapes& shapes, float scale, const Dropout& dropout,
                 HiddenBlocks hidden_blocks, MatrixWorkspace& workspace)
      : shapes_(shapes),
        scale_(scale),
        dropout_(dropout),
        hidden_blocks_(hidden_blocks),
        work_(workspace) {}

  // K and V packed, dK and dV (heads summed) and every head's dQ (and output), and each head's
  // sink gradient (0 without sinks) in sink_grads[h].
  void run(const float* k, const float* v, const HeadArgs* heads, float* dk, float* dv,
           float* sink_grads) {
    const Index nq = shapes_.nq, nk = shapes_.nk, d = shapes_.d, dv_cols = shapes_.dv;
    std::fill(dk, dk + nk * d, 0.0f);
    std::fill(dv, dv + nk * dv_cols, 0.0f);
    std::fill(sink_grads, sink_grads + shapes_.heads, 0.0f);
    if (nk == 0) {  // the output is the empty sum: nothing depends on q
      for (Index h = 0; h < shapes_.heads; ++h) {
        std::fill(heads[h].dq, heads[h].dq + nq * d, 0.0f);
        if (heads[h].out) std::fill(heads[h].out, heads[h].out + nq * dv_cols, 0.0f);
      }
      return;
    }
    // s q k^T: the scale rides along with packing K, as in the forward.
    f32_pack_panels(k, d, d, nk, /*transposed=*/true, work_.keys_t.data(), scale_);
    f32_pack_panels(v, dv_cols, dv_cols, nk, /*transposed=*/true, work_.values_t.data());
    f32_pack_panels(k, d, nk, d, /*transposed=*/false, work_.keys.data());
    if (shapes_.output) {
      f32_pack_panels(v, dv_cols, nk, dv_cols, /*transposed=*/false, work_.values.data());
    }
    std::fill(work_.written.begin(), work_.written.end(), uint8_t{0});
    const Index groups = shapes_.groups(), strips = shapes_.strips();
    // Weighed as the five products' multiply-adds.
    run_split(groups, shapes_.heads * nq * nk * (2 * d + 3 * dv_cols), [&](Index g, int slot) {
      const GroupSums sums = group_sums(g, dk, dv);
      for (Index s = g; s < strips; s += groups) {
        for (Index h = 0; h < shapes_.heads; ++h) {
          work_.sink_parts.data()[h * strips + s] =
              strip(heads[h], s * shapes_.rows(), work_.strips[static_cast<size_t>(slot)], sums);
        }
      }
    });
    add_partials(dk, dv, groups);
    for (Index h = 0; h < shapes_.heads; ++h) {
      for (Index s = 0; s < strips; ++s) sink_grads[h] += work_.sink_parts.data()[h * strips + s];
    }
  }

 private:
  GroupSums group_sums(Index g, float* dk, float* dv) {
    if (g == 0) return {dk, dv, nullptr};
    float* partial = work_.partials.data() + (g - 1) * shapes_.nk * (shapes_.d + shapes_.dv);
    return {partial, partial + shapes_.nk * shapes_.d,
            work_.written.data() + (g - 1) * tasks_of(shapes_.nk, kTaskKeys)};
  }

  // dK and dV plus the written key blocks of the partial sums of groups 1 .. groups - 1, in group
  // order, a key block at a time.
  void add_partials(float* dk, float* dv, Index groups) {
    if (groups == 1) return;
    const Index nk = shapes_.nk, d = shapes_.d, dv_cols = shapes_.dv;
    run_split(tasks_of(nk, kTaskKeys), (groups - 1) * nk * (d + dv_cols), [&](Index b, int) {
      const Index j0 = b * kTaskKeys, j1 = std::min(nk, j0 + kTaskKeys);
      for (Index g = 1; g < groups; ++g) {
        const GroupSums sums = group_sums(g, dk, dv);
        if (!sums.written[b]) continue;
        for (Index x = j0 * d; x < j1 * d; ++x) dk[x] += sums.dk[x];
        for (Index x = j0 * dv_cols; x < j1 * dv_cols; ++x) dv[x] += sums.dv[x];
      }
    });
  }

  // The strip of head `head` from query i0: its rows of dQ and of the output, its part of dK and
  // dV into `sums`; returns its part of the head's sink gradient.
  float strip(const HeadArgs& head, Index i0, StripBuffers& buffers, const GroupSums& sums) const;

  friend class Strip;

  Shapes shapes_;
  float scale_;
  const Dropout& dropout_;
  HiddenBlocks hidden_blocks_;
  MatrixWorkspace& work_;
};

// One strip's backward, in three steps on one thread: the masked scores and dP, each row's
// softmax and dS, then the products.
class Strip {
 public:
  Strip(const MatrixBackward& matrix, const HeadArgs& head, Index i0, StripBuffers& buffers)
      : m_(matrix),
        shapes_(matrix.shapes_),
        panels_(matrix.work_),
        head_(head),
        i0_(i0),
        rows_(std::min(buffers.rows, matrix.shapes_.nq - i0)),
        work_(buffers) {
    const ScoreModifiers* modifiers = head.mask.modifiers;
    softcap_ = modifiers && modifiers->softcap > 0.0f;
    sink_ = modifiers && modifiers->sinks ? &modifiers->sinks[head.mask.head_of(0)] : nullptr;
    masked_ = !head.mask.mask.empty() || (modifiers && modifiers->change_scores());
    skipping_ = masked_ && matrix.hidden_blocks_ == HiddenBlocks::Skip;
  }

  float run(const GroupSums& sums) {
    const Index d = shapes_.d, dv_cols = shapes_.dv;
    f32_pack_panels(head_.q + i0_ * d, d, rows_, d, /*transposed=*/false, work_.queries.data());
    f32_pack_panels(head_.grad_out + i0_ * dv_cols, dv_cols, rows_, dv_cols, /*transposed=*/false,
                    work_.grad_out.data());
    const KeyRange keys = score_strip();
    const float sink_grad = grad_scores_strip(keys);
    for (Index j0 = keys.first; j0 < keys.end; j0 += kTaskKeys)
      key_block_products(j0, std::min(keys.end, j0 + kTaskKeys), sums);
    for (Index r = 0; r < rows_; r += 2) row_products(r, std::min<Index>(2, rows_ - r), keys);
    return sink_grad;
  }

 private:
  // The keys [first, end) of a strip that carry weights (the rest are exactly 0 for every row).
  struct KeyRange {
    Index first, end;
  };

  // The masked scores and dP into the strips, and each row's max; returns which keys carry
  // weights. Which keys those are is the forward's skip rule (keys_to_compute, tail_vanishes),
  // asked over all keys at once, from the first key block the window lets the strip's first row
  // see.
  KeyRange score_strip() {
    const Index nq = shapes_.nq, nk = shapes_.nk;
    work_.masks.clear();
    if (masked_) {
      for (Index i = i0_; i < i0_ + rows_; ++i) work_.masks.emplace_back(head_.mask, nq, nk, i);
    }
    KeyRange keys{0, nk};
    if (skipping_) {
      keys.first = window_lead();
      keys.end = keys.first + keys_to_compute(work_.masks.data(), work_.no_max.data(), rows_,
                                              keys.first, nk - keys.first, kPanel);
    }
    Index chunks = score_keys(keys.first, keys.end, 0);
    reduce_row_max(chunks);
    const bool head = keys.first > 0 && !tail_vanishes(work_.masks.data(), work_.row_max.data(),
                                                       rows_, 0, 0, keys.first);
    const bool tail = keys.end < nk && !tail_vanishes(work_.masks.data(), work_.row_max.data(),
                                                      rows_, 0, keys.end, nk);
    if (head) chunks += score_keys(0, keys.first, chunks);
    if (tail) chunks += score_keys(keys.end, nk, chunks);
    if (head || tail) {
      reduce_row_max(chunks);
      keys = {head ? 0 : keys.first, tail ? nk : keys.end};
    }
    return keys;
  }

  // The first key the window's left side lets row i0 (so every later row) see, rounded down to
  // a key chunk; 0 without a window.
  Index window_lead() const {
    const Index left = head_.mask.mask.window_left;
    if (left < 0) return 0;
    const auto first = std::max<int64_t>(
        0, static_cast<int64_t>(i0_) + head_.mask.query_offset - static_cast<int64_t>(left));
    const auto lead = static_cast<Index>(first / kTaskKeys * kTaskKeys);
    return lead < shapes_.nk ? lead : 0;
  }

  // Keys [j0, j1) scored, as chunks numbered from first_chunk; returns how many. j0 starts a
  // panel of packed K (a multiple of 16).
  Index score_keys(Index j0, Index j1, Index first_chunk) {
    assert(j0 % kPanel == 0);
    const Index chunks = tasks_of(j1 - j0, kTaskKeys);
    for (Index c = 0; c < chunks; ++c) {
      const Index start = j0 + c * kTaskKeys;
      score_chunk(start, std::min(kTaskKeys, j1 - start), first_chunk + c);
    }
    return chunks;
  }

  // Every row of the strip against the `len` keys from j0: the scores, masked, and dP.
  void score_chunk(Index j0, Index len, Index chunk) {
    const Index d = shapes_.d, dv_cols = shapes_.dv;
    f32_gemm_panels_serial(head_.q + i0_ * d, d, rows_, d, panels_.keys_t.data() + j0 * d,
                           kPanel * d, len, work_.weights.data() + j0, work_.stride);
    f32_gemm_panels_serial(head_.grad_out + i0_ * dv_cols, dv_cols, rows_, dv_cols,
                           panels_.values_t.data() + j0 * dv_cols, kPanel * dv_cols, len,
                           work_.grad_scores.data() + j0, work_.stride);
    for (Index r = 0; r < rows_; ++r) {
      float* s = work_.weights.data() + r * work_.stride + j0;
      float* softcap_grad = softcap_ ? work_.softcap_grad.data() + r * work_.stride + j0 : nullptr;
      work_.chunk_max.data()[chunk * work_.rows + r] =
          masked_ ? work_.masks[static_cast<size_t>(r)].apply(s, j0, len, softcap_grad)
                  : f32_row_max(s, len);
    }
  }

  // Each row's max over chunks [0, chunks), in chunk order: the max of the whole row.
  void reduce_row_max(Index chunks) {
    for (Index r = 0; r < rows_; ++r) {
      float max = -std::numeric_limits<float>::infinity();
      for (Index c = 0; c < chunks; ++c) {
        max = simd::nan_max(max, work_.chunk_max.data()[c * work_.rows + r]);
      }
      work_.row_max.data()[r] = max;
    }
  }

  uint64_t weight_index(Index i, Index j) const {
    return head_.first_weight + static_cast<uint64_t>(i * shapes_.nk + j);
  }

  // Each row r of the strip (query i0 + r): its scores become P and its dP becomes dS; under
  // dropout P * F goes into `dropped`. Returns the strip's part of the sink gradient, the sum over
  // its rows in order of -P_sink D (D = sum_j P_j dP_j, the sink pooling nothing); 0 without one.
  float grad_scores_strip(KeyRange keys) {
    const Index n = keys.end - keys.first;
    float sink_grad = 0.0f;
    for (Index r = 0; r < rows_; ++r) {
      const Index offset = r * work_.stride + keys.first;
      float* p = work_.weights.data() + offset;
      float* ds = work_.grad_scores.data() + offset;
      float max = work_.row_max.data()[r];
      float sink_exp = 0.0f;
      if (sink_) {
        max = std::isnan(max) ? max : std::max(max, *sink_);
        sink_exp = std::exp(*sink_ - max);
      }
      const float inverse = f32_pooled_softmax_row(p, n, max, sink_exp);
      if (m_.dropout_.active()) {  // dropped = P * F, ds = F * dP: D and dS need both, dV the first
        float* dropped = work_.dropped.data() + offset;
        for (Index j = 0; j < n; ++j) {
          const float factor = m_.dropout_.factor(weight_index(i0_ + r, keys.first + j));
          ds[j] *= factor;
          dropped[j] = p[j] * factor;
        }
      }
      const float delta = masked_softmax_backward_row(
          p, ds, n, m_.scale_, masked_ ? &work_.masks[static_cast<size_t>(r)] : nullptr,
          keys.first);
      if (softcap_) {
        const float* softcap_grad = work_.softcap_grad.data() + offset;
        for (Index j = 0; j < n; ++j) ds[j] *= softcap_grad[j];
      }
      if (sink_) sink_grad += -sink_exp * inverse * delta;
    }
    return sink_grad;
  }

  // P * F: the strip the values are pooled with.
  const float* pooled() const {
    return m_.dropout_.active() ? work_.dropped.data() : work_.weights.data();
  }

  // dK += dS^T Q and dV += (P * F)^T dO for keys [j0, j1), through their transposes, into `sums`
  // (j0 starts key block j0 / 64): stored, not added, where the block holds no value yet, the
  // rest of a block that the keys end inside zeroed.
  void key_block_products(Index j0, Index j1, const GroupSums& sums) {
    assert(j0 % kTaskKeys == 0);
    for (Index r = 0; r < rows_; ++r) {
      const float* ds = work_.grad_scores.data() + r * work_.stride;
      const float* p = pooled() + r * work_.stride;
      for (Index j = j0; j < j1; ++j) {
        work_.grad_scores_t.data()[j * work_.rows + r] = ds[j];
        work_.weights_t.data()[j * work_.rows + r] = p[j];
      }
    }
    const Index d = shapes_.d, dv_cols = shapes_.dv;
    bool accumulate = true;
    if (sums.written && !sums.written[j0 / kTaskKeys]) {
      const Index block_end = std::min(shapes_.nk, j0 + kTaskKeys);
      std::fill(sums.dk + j1 * d, sums.dk + block_end * d, 0.0f);
      std::fill(sums.dv + j1 * dv_cols, sums.dv + block_end * dv_cols, 0.0f);
      sums.written[j0 / kTaskKeys] = 1;
      accumulate = false;
    }
    f32_gemm_panels_serial(work_.grad_scores_t.data() + j0 * work_.rows, work_.rows, j1 - j0, rows_,
                           work_.queries.data(), kPanel * rows_, d, sums.dk + j0 * d, d,
                           accumulate);
    f32_gemm_panels_serial(work_.weights_t.data() + j0 * work_.rows, work_.rows, j1 - j0, rows_,
                           work_.grad_out.data(), kPanel * rows_, dv_cols, sums.dv + j0 * dv_cols,
                           dv_cols, accumulate);
  }

  // dQ = dS K, and O = (P * F) V when asked, for `count` rows from strip row r, over the keys
  // that carry weights (packed K and V read from key keys.first on).
  void row_products(Index r, Index count, KeyRange keys) {
    const Index offset = r * work_.stride + keys.first, n = keys.end - keys.first;
    const Index i = i0_ + r, nk = shapes_.nk, d = shapes_.d, dv_cols = shapes_.dv;
    f32_gemm_panels_serial(work_.grad_scores.data() + offset, work_.stride, count, n,
                           panels_.keys.data() + keys.first * kPanel, kPanel * nk, d,
                           head_.dq + i * d, d);
    if (head_.out) {
      f32_gemm_panels_serial(pooled() + offset, work_.stride, count, n,
                             panels_.values.data() + keys.first * kPanel, kPanel * nk, dv_cols,
                             head_.out + i * dv_cols, dv_cols);
    }
  }

  const MatrixBackward& m_;
  const Shapes& shapes_;
  const MatrixWorkspace& panels_;
  const HeadArgs& head_;
  Index i0_, rows_;
  StripBuffers& work_;
  bool masked_ = false, skipping_ = false, softcap_ = false;
  const float* sink_ = nullptr;
};

float MatrixBackward::strip(const HeadArgs& head, Index i0, StripBuffers& buffers,
                            const GroupSums& sums) const {
  return Strip(*this, head, i0, buffers).run(sums);
}

}  // namespace

// Each K/V matrix writes only its own dk, dv and its query heads' dq (and output). Threads take
// whole K/V matrices, each in a workspace of its own, when whole_matrices says so; otherwise the
// matrices go one after another, each one region of its groups of strips. Both give the same
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
  const Shapes shapes{q.rows,           k.rows,
                      q.cols,           v.cols,
                      heads_per_kv,     output != nullptr,
                      dropout.active(), extras.modifiers.softcap > 0.0f};
  ThreadPool& pool = thread_pool();
  // Whole matrices go to the pool only when the call is worth splitting; otherwise each matrix
  // decides for its own regions (one too small to split runs on this thread).
  const bool whole = whole_matrices(k.batch, pool.threads()) &&
                     worth_splitting(q.batch * q.rows * k.rows * (2 * q.cols + 3 * v.cols));
  // Whole matrices: a workspace per thread, with one strip's buffers; otherwise one, with a
  // strip's buffers per thread.
  const Index workspaces = whole ? std::min<Index>(pool.threads(), k.batch) : 1;
  std::vector<MatrixWorkspace> workspace;
  workspace.reserve(static_cast<size_t>(workspaces));
  for (Index t = 0; t < workspaces; ++t) workspace.emplace_back(shapes, whole ? 1 : pool.threads());
  // Query matrix s's arguments; the query heads of K/V matrix m are consecutive, from first_head.
  std::vector<HeadArgs> heads;
  heads.reserve(static_cast<size_t>(q.batch));
  for (Index s = 0; s < q.batch; ++s) {
    heads.push_back({q[s].data(), grad_output[s].data(),
                     MaskContext{mask, s, batch, batch_heads, &extras.modifiers},
                     static_cast<uint64_t>(s * q.rows * k.rows), dq[s].data(),
                     output ? (*output)[s].data() : nullptr});
  }
  const auto first_head = [&](Index m) {
    return m / kv_heads * batch_heads + m % kv_heads * heads_per_kv;
  };
  std::vector<float> sink_grads(static_cast<size_t>(q.batch), 0.0f);
  const auto kv_matrix = [&](Index m, int slot) {
    MatrixBackward backward(shapes, scale, dropout, hidden_blocks,
                            workspace[static_cast<size_t>(slot)]);
    backward.run(k[m].data(), v[m].data(), heads.data() + first_head(m), dk[m].data(), dv[m].data(),
                 sink_grads.data() + first_head(m));
  };
  if (whole) {
    // Each matrix's region then runs inline, on the task's thread.
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
