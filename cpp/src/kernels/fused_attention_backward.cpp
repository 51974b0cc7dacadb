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

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "fused_attention.hpp"
#include "gemm.hpp"
#include "masked_softmax.hpp"
#include "parallel/thread_pool.hpp"
#include "row_kernels.hpp"

namespace attn::detail {

namespace {

// Queries per strip: 64, fewer when the keys are so many that the four strips of rows x nk
// floats would pass 2 MB, more than the caches keep while a strip is worked on (wasm SIMD, one
// thread: n = 4096 backward 3.5x -> 3.0x the forward's time with 32 rows instead of 64, and
// n = 16384 10.1 s -> 7.3 s with 8). Extra memory stays O(nk), whatever nq.
Index queries_per_strip(Index nk) {
  constexpr Index kMaxRows = 64, kStripFloats = Index{1} << 17;
  return std::clamp<Index>(kStripFloats / std::max<Index>(nk, 1) / 2 * 2, 2, kMaxRows);
}

std::vector<float> packed_buffer(Index depth, Index cols) {
  return std::vector<float>(
      static_cast<size_t>(round_up(cols, kPanel) * std::max<Index>(depth, 1)));
}

// What one thread's backward works in, sized for the batch's score matrices before any thread
// starts, so that nothing allocates inside a parallel region.
struct BackwardWorkspace {
  BackwardWorkspace(Index nq, Index nk, Index d, Index dv, bool output)
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
        weights_t(weights.size()),
        grad_scores_t(weights.size()),
        no_max(static_cast<size_t>(rows), -std::numeric_limits<float>::infinity()),
        row_max(static_cast<size_t>(rows)) {
    masks.reserve(static_cast<size_t>(rows));
  }

  Index rows;    // queries per strip
  Index stride;  // floats per strip row
  // K^T (scaled) and V^T as the score GEMMs' B; K, Q, dO (and V for the output) as the B of
  // the products that contract over keys or queries.
  std::vector<float> keys_t, values_t, keys, queries, grad_out_panels, values;
  // Strips [rows][stride]: P, then dS; and their transposes [nk][rows] for dK and dV.
  std::vector<float> weights, grad_scores, weights_t, grad_scores_t;
  // The skip rule's inputs for a strip's rows: their masks, and their max before (none: -inf)
  // and after the visible keys are scored.
  std::vector<RowMask> masks;
  std::vector<float> no_max, row_max;
};

// One score matrix's backward, in a workspace: its operands packed once, then the strips of one
// query block at a time.
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
        rows_(workspace.rows),
        stride_(workspace.stride),
        keys_t_(workspace.keys_t),
        values_t_(workspace.values_t),
        keys_(workspace.keys),
        queries_(workspace.queries),
        grad_out_panels_(workspace.grad_out_panels),
        values_(workspace.values),
        weights_(workspace.weights),
        grad_scores_(workspace.grad_scores),
        weights_t_(workspace.weights_t),
        grad_scores_t_(workspace.grad_scores_t),
        masks_(workspace.masks),
        no_max_(workspace.no_max),
        row_max_(workspace.row_max) {
    // s q k^T: the scale rides along with packing K, as in the forward.
    f32_pack_panels(k, d, d, nk, /*transposed=*/true, keys_t_.data(), scale);
    f32_pack_panels(v, dv, dv, nk, /*transposed=*/true, values_t_.data());
    f32_pack_panels(k, d, nk, d, /*transposed=*/false, keys_.data());
    f32_pack_panels(q, d, nq, d, /*transposed=*/false, queries_.data());
    f32_pack_panels(grad_out, dv, nq, dv, /*transposed=*/false, grad_out_panels_.data());
  }

  // dq, dk, dv receive the gradients; out, when non-null, the forward output (P * F) V.
  void run(const float* v, float* dq, float* dk, float* dv, float* out) {
    std::fill(dq, dq + nq_ * d_, 0.0f);
    std::fill(dk, dk + nk_ * d_, 0.0f);
    std::fill(dv, dv + nk_ * dv_, 0.0f);
    if (out) {
      std::fill(out, out + nq_ * dv_, 0.0f);
      f32_pack_panels(v, dv_, nk_, dv_, /*transposed=*/false, values_.data());
    }
    if (nk_ == 0) return;  // the output is the empty sum: nothing depends on q
    for (Index i0 = 0; i0 < nq_; i0 += rows_) {
      const Index rows = std::min(rows_, nq_ - i0);
      const Index keys = weights_strip(i0, rows);
      gradient_strip(i0, rows, keys, dq, dk, dv, out);
    }
  }

 private:
  // Scores of rows i0.. against keys [j0, j1), masked, into the strip. j0 starts a panel of
  // packed K (a multiple of 16).
  void score_columns(Index i0, Index rows, Index j0, Index j1) {
    assert(j0 % kPanel == 0);
    f32_gemm_panels(q_ + i0 * d_, d_, rows, d_, keys_t_.data() + j0 * d_, kPanel * d_, j1 - j0,
                    weights_.data() + j0, stride_);
    if (!masked_) return;
    for (Index r = 0; r < rows; ++r) {
      RowMask(mask_, nq_, nk_, i0 + r).apply(weights_.data() + r * stride_ + j0, j0, j1 - j0);
    }
  }

  // The weights P of rows i0.., as the forward's softmax gives them, into the strip; returns how
  // many leading keys carry them (the rest are exactly 0 for every row). Which keys those are is
  // the forward's skip rule (keys_to_compute, tail_vanishes), asked over all keys at once.
  Index weights_strip(Index i0, Index rows) {
    Index keys = nk_;
    if (skipping_) {
      masks_.clear();
      for (Index i = i0; i < i0 + rows; ++i) masks_.emplace_back(mask_, nq_, nk_, i);
      keys = keys_to_compute(masks_.data(), no_max_.data(), rows, 0, nk_, kPanel);
    }
    score_columns(i0, rows, 0, keys);
    if (keys < nk_) {
      for (Index r = 0; r < rows; ++r) {
        row_max_[static_cast<size_t>(r)] = f32_row_max(weights_.data() + r * stride_, keys);
      }
      if (!tail_vanishes(masks_.data(), row_max_.data(), rows, 0, keys, nk_)) {
        score_columns(i0, rows, keys, nk_);
        keys = nk_;
      }
    }
    for (Index r = 0; r < rows; ++r) f32_softmax_row(weights_.data() + r * stride_, keys);
    return keys;
  }

  uint64_t weight_index(Index i, Index j) const {
    return first_weight_ + static_cast<uint64_t>(i * nk_ + j);
  }

  void gradient_strip(Index i0, Index rows, Index keys, float* dq, float* dk, float* dv,
                      float* out) {
    // dO V^T, then in place F * (dO V^T) and dS.
    f32_gemm_panels(grad_out_ + i0 * dv_, dv_, rows, dv_, values_t_.data(), kPanel * dv_, keys,
                    grad_scores_.data(), stride_);
    for (Index r = 0; r < rows; ++r) {
      float* p = weights_.data() + r * stride_;
      float* ds = grad_scores_.data() + r * stride_;
      if (dropout_.active()) {  // p becomes P * F, ds F * dP: D and dS need both, dV the first
        for (Index j = 0; j < keys; ++j) {
          const float factor = dropout_.factor(weight_index(i0 + r, j));
          ds[j] *= factor;
          weights_t_[static_cast<size_t>(j * rows_ + r)] = p[j] * factor;
        }
      } else {
        for (Index j = 0; j < keys; ++j) weights_t_[static_cast<size_t>(j * rows_ + r)] = p[j];
      }
      const RowMask mask(mask_, nq_, nk_, i0 + r);
      masked_softmax_backward_row(p, ds, keys, scale_, masked_ ? &mask : nullptr);
      for (Index j = 0; j < keys; ++j) grad_scores_t_[static_cast<size_t>(j * rows_ + r)] = ds[j];
    }
    // dQ = dS K, dK += dS^T Q, dV += (P * F)^T dO; and O = (P * F) V when asked.
    f32_gemm_panels(grad_scores_.data(), stride_, rows, keys, keys_.data(), kPanel * nk_, d_,
                    dq + i0 * d_, d_);
    f32_gemm_panels(grad_scores_t_.data(), rows_, keys, rows, queries_.data() + i0 * kPanel,
                    kPanel * nq_, d_, dk, d_, /*accumulate=*/true);
    f32_gemm_panels(weights_t_.data(), rows_, keys, rows, grad_out_panels_.data() + i0 * kPanel,
                    kPanel * nq_, dv_, dv, dv_, /*accumulate=*/true);
    if (out) {
      // weights_t_ holds P * F transposed; the strip rows are needed untransposed.
      for (Index r = 0; r < rows; ++r) {
        float* p = weights_.data() + r * stride_;
        for (Index j = 0; j < keys; ++j) p[j] = weights_t_[static_cast<size_t>(j * rows_ + r)];
      }
      f32_gemm_panels(weights_.data(), stride_, rows, keys, values_.data(), kPanel * nk_, dv_,
                      out + i0 * dv_, dv_);
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
  Index rows_, stride_;
  // The workspace's buffers (BackwardWorkspace says what each holds).
  std::vector<float>&keys_t_, &values_t_, &keys_, &queries_, &grad_out_panels_, &values_;
  std::vector<float>&weights_, &grad_scores_, &weights_t_, &grad_scores_t_;
  std::vector<RowMask>& masks_;
  std::vector<float>&no_max_, &row_max_;
};

}  // namespace

// Tasks are the score matrices, each writing only its own dq, dk, dv (and output), so the
// result does not depend on the thread count; each thread works in a workspace of its own.
void attention_fused_backward(ConstBatch q, ConstBatch k, ConstBatch v, ConstBatch grad_output,
                              float scale, const Mask& mask, Index batch_heads,
                              const Dropout& dropout, MutableBatch dq, MutableBatch dk,
                              MutableBatch dv, const MutableBatch* output,
                              HiddenBlocks hidden_blocks) {
  const Index batch = q.batch / batch_heads;
  ThreadPool& pool = thread_pool();
  const Index workspaces = std::min<Index>(pool.threads(), q.batch);
  std::vector<BackwardWorkspace> workspace;
  workspace.reserve(static_cast<size_t>(workspaces));
  for (Index t = 0; t < workspaces; ++t) {
    workspace.emplace_back(q.rows, k.rows, q.cols, v.cols, output != nullptr);
  }
  pool.run(q.batch, [&](Index s, int slot) {
    const MaskContext context{mask, s, batch, batch_heads};
    MatrixBackward matrix(q[s].data(), k[s].data(), v[s].data(), grad_output[s].data(), q.rows,
                          k.rows, q.cols, v.cols, scale, context, dropout,
                          static_cast<uint64_t>(s * q.rows * k.rows), hidden_blocks,
                          workspace[static_cast<size_t>(slot)]);
    matrix.run(v[s].data(), dq[s].data(), dk[s].data(), dv[s].data(),
               output ? (*output)[s].data() : nullptr);
  });
}

}  // namespace attn::detail
