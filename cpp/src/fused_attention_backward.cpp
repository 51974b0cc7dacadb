// The backward of the fused attention kernel (fused_attention.cpp is its forward). With
// P = softmax(mask(s q k^T)) (dropout factors F applied to P for pooling), O = (P * F) V and
// D_i = dO_i . O_i, the gradients are
//   dV = (P * F)^T dO,   dS = P * (F * (dO V^T) - D),   dQ = s dS K,   dK = s dS^T Q
// with dS = 0 where the mask replaced a score by its fill (a constant has no gradient).
// Everything is computed a query block x key block tile at a time with the same GEMM
// micro-kernel as the forward, on operands packed once per score matrix.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "fused_attention.hpp"
#include "gemm.hpp"
#include "row_kernels.hpp"

namespace attn::detail {

namespace {

constexpr Index kBlockKeys = 128;    // keys per tile: the dK and dV rows a query block updates
constexpr Index kBlockQueries = 64;  // queries per tile
std::vector<float> packed_buffer(Index rows, Index cols) {
  return std::vector<float>(static_cast<size_t>(round_up(cols, kPanel) * std::max<Index>(rows, 1)));
}

// One score matrix's backward: its operands packed, its tiles, its row statistics.
class MatrixBackward {
 public:
  MatrixBackward(const float* q, const float* k, const float* v, const float* grad_out, Index nq,
                 Index nk, Index d, Index dv, float scale, const MaskContext& mask,
                 const Dropout& dropout, uint64_t first_weight, HiddenBlocks hidden_blocks)
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
        row_max_(static_cast<size_t>(nq)),
        row_sum_(static_cast<size_t>(nq)),
        delta_(static_cast<size_t>(nq)),
        keys_t_(packed_buffer(d, nk)),
        values_t_(packed_buffer(dv, nk)),
        keys_(packed_buffer(nk, d)),
        queries_(packed_buffer(nq, d)),
        grad_out_panels_(packed_buffer(nq, dv)),
        scores_(static_cast<size_t>(kBlockQueries * kBlockKeys)),
        grad_scores_(scores_.size()),
        weights_t_(scores_.size()),
        grad_scores_t_(scores_.size()) {
    // s q k^T: the scale rides along with packing K, as in the forward.
    f32_pack_panels(k, d, d, nk, /*transposed=*/true, keys_t_.data(), scale);
    f32_pack_panels(v, dv, dv, nk, /*transposed=*/true, values_t_.data());
    f32_pack_panels(k, d, nk, d, /*transposed=*/false, keys_.data());
    f32_pack_panels(q, d, nq, d, /*transposed=*/false, queries_.data());
    f32_pack_panels(grad_out, dv, nq, dv, /*transposed=*/false, grad_out_panels_.data());
    if (dropout.active()) {
      values_ = packed_buffer(nk, dv);
      f32_pack_panels(v, dv, nk, dv, /*transposed=*/false, values_.data());
    }
  }

  // out [nq, dv]: the forward output; dq, dk, dv receive the gradients.
  void run(const float* k, const float* v, float* out, float* dq, float* dk, float* dv) {
    std::fill(dq, dq + nq_ * d_, 0.0f);
    std::fill(dk, dk + nk_ * d_, 0.0f);
    std::fill(dv, dv + nk_ * dv_, 0.0f);
    const RowStats stats{row_max_.data(), row_sum_.data()};
    f32_attention_fused(q_, k, v, nq_, nk_, d_, dv_, scale_, mask_, out, nullptr, &stats,
                        skipping_ ? HiddenBlocks::Skip : HiddenBlocks::Compute);
    if (nk_ == 0 || nq_ == 0) return;
    if (dropout_.active()) pool_with_dropout(out);
    for (Index i = 0; i < nq_; ++i) {
      float dot = 0.0f;
      for (Index c = 0; c < dv_; ++c) dot += grad_out_[i * dv_ + c] * out[i * dv_ + c];
      delta_[static_cast<size_t>(i)] = dot;
    }
    for (Index j0 = 0; j0 < nk_; j0 += kBlockKeys) {
      const Index len = std::min(kBlockKeys, nk_ - j0);
      for (Index i0 = 0; i0 < nq_; i0 += kBlockQueries) {
        const Index rows = std::min(kBlockQueries, nq_ - i0);
        if (!contributes(i0, rows, j0, len)) continue;
        backward_tile(i0, rows, j0, len, dq, dk, dv);
      }
    }
  }

 private:
  // False when every weight of the tile is exactly 0: each row skips its keys (RowMask::skips
  // against the row's final max, the forward's decision).
  bool contributes(Index i0, Index rows, Index j0, Index len) const {
    if (!skipping_) return true;
    for (Index i = i0; i < i0 + rows; ++i) {
      if (!RowMask(mask_, nq_, nk_, i).skips(j0, len, row_max_[static_cast<size_t>(i)])) {
        return true;
      }
    }
    return false;
  }

  // scores_ rows i0 .. i0 + rows, keys j0 .. j0 + len: the weights P as the forward computed
  // them (masked scores, exp(s - max) / sum).
  void weights_tile(Index i0, Index rows, Index j0, Index len) {
    f32_gemm_panels(q_ + i0 * d_, d_, rows, d_, keys_t_.data() + j0 * d_, kPanel * d_, len,
                    scores_.data(), kBlockKeys);
    for (Index r = 0; r < rows; ++r) {
      float* row = scores_.data() + r * kBlockKeys;
      const auto i = static_cast<size_t>(i0 + r);
      if (masked_) RowMask(mask_, nq_, nk_, i0 + r).apply(row, j0, len);
      f32_exp_shifted_sum(row, len, row_max_[i]);
      const float inverse = 1.0f / row_sum_[i];
      for (Index c = 0; c < len; ++c) row[c] *= inverse;
    }
  }

  uint64_t weight_index(Index i, Index j) const {
    return first_weight_ + static_cast<uint64_t>(i * nk_ + j);
  }

  // out = (P * F) V again, tile by tile: with dropout the fused forward's output (which has no
  // dropout) is not the O whose D_i the gradient needs.
  void pool_with_dropout(float* out) {
    std::fill(out, out + nq_ * dv_, 0.0f);
    for (Index j0 = 0; j0 < nk_; j0 += kBlockKeys) {
      const Index len = std::min(kBlockKeys, nk_ - j0);
      for (Index i0 = 0; i0 < nq_; i0 += kBlockQueries) {
        const Index rows = std::min(kBlockQueries, nq_ - i0);
        weights_tile(i0, rows, j0, len);
        for (Index r = 0; r < rows; ++r) {
          dropout_.apply(scores_.data() + r * kBlockKeys, len, weight_index(i0 + r, j0));
        }
        f32_gemm_panels(scores_.data(), kBlockKeys, rows, len, values_.data() + j0 * kPanel,
                        kPanel * nk_, dv_, out + i0 * dv_, dv_, /*accumulate=*/true);
      }
    }
  }

  void backward_tile(Index i0, Index rows, Index j0, Index len, float* dq, float* dk, float* dv) {
    weights_tile(i0, rows, j0, len);
    // dO V^T for the tile, into grad_scores_.
    f32_gemm_panels(grad_out_ + i0 * dv_, dv_, rows, dv_, values_t_.data() + j0 * dv_, kPanel * dv_,
                    len, grad_scores_.data(), kBlockKeys);
    for (Index r = 0; r < rows; ++r) {
      float* p = scores_.data() + r * kBlockKeys;
      float* ds = grad_scores_.data() + r * kBlockKeys;
      const float delta = delta_[static_cast<size_t>(i0 + r)];
      for (Index c = 0; c < len; ++c) {
        const float factor =
            dropout_.active() ? dropout_.factor(weight_index(i0 + r, j0 + c)) : 1.0f;
        ds[c] = scale_ * p[c] * (factor * ds[c] - delta);
        weights_t_[static_cast<size_t>(c * kBlockQueries + r)] = p[c] * factor;
      }
      if (masked_) RowMask(mask_, nq_, nk_, i0 + r).zero_hidden(ds, j0, len);
      for (Index c = 0; c < len; ++c) {
        grad_scores_t_[static_cast<size_t>(c * kBlockQueries + r)] = ds[c];
      }
    }
    // dQ += dS K, dK += dS^T Q, dV += (P * F)^T dO.
    f32_gemm_panels(grad_scores_.data(), kBlockKeys, rows, len, keys_.data() + j0 * kPanel,
                    kPanel * nk_, d_, dq + i0 * d_, d_, /*accumulate=*/true);
    f32_gemm_panels(grad_scores_t_.data(), kBlockQueries, len, rows, queries_.data() + i0 * kPanel,
                    kPanel * nq_, d_, dk + j0 * d_, d_,
                    /*accumulate=*/true);
    f32_gemm_panels(weights_t_.data(), kBlockQueries, len, rows,
                    grad_out_panels_.data() + i0 * kPanel, kPanel * nq_, dv_, dv + j0 * dv_, dv_,
                    /*accumulate=*/true);
  }

  const float* q_;
  const float* grad_out_;
  Index nq_, nk_, d_, dv_;
  float scale_;
  const MaskContext& mask_;
  const Dropout& dropout_;
  uint64_t first_weight_;
  bool masked_, skipping_;
  std::vector<float> row_max_, row_sum_, delta_;
  // K^T (scaled) and V^T as the score GEMM's B; K, Q, dO and (with dropout) V as the B of the
  // products that contract over keys or queries.
  std::vector<float> keys_t_, values_t_, keys_, queries_, grad_out_panels_, values_;
  // Tiles [kBlockQueries][kBlockKeys]: P, then dS; and their transposes for dK and dV.
  std::vector<float> scores_, grad_scores_, weights_t_, grad_scores_t_;
};

}  // namespace

void attention_fused_backward(ConstBatch q, ConstBatch k, ConstBatch v, ConstBatch grad_output,
                              float scale, const Mask& mask, Index batch_heads,
                              const Dropout& dropout, MutableBatch dq, MutableBatch dk,
                              MutableBatch dv, const MutableBatch* output,
                              HiddenBlocks hidden_blocks) {
  const Index batch = q.batch / batch_heads;
  std::vector<float> scratch(output ? 0 : static_cast<size_t>(q.rows * v.cols));
  for (Index s = 0; s < q.batch; ++s) {
    const MaskContext context{mask, s, batch, batch_heads};
    float* out = output ? (*output)[s].data() : scratch.data();
    MatrixBackward matrix(q[s].data(), k[s].data(), v[s].data(), grad_output[s].data(), q.rows,
                          k.rows, q.cols, v.cols, scale, context, dropout,
                          static_cast<uint64_t>(s * q.rows * k.rows), hidden_blocks);
    matrix.run(k[s].data(), v[s].data(), out, dq[s].data(), dk[s].data(), dv[s].data());
  }
}

}  // namespace attn::detail
