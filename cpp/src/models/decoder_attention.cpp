#include "models/decoder_attention.hpp"

#include <algorithm>

#include "attention/additive_features.hpp"
#include "attn/mask.hpp"
#include "kernels/gemm.hpp"
#include "kernels/row_kernels.hpp"

namespace attn::detail {

namespace {

// Softmax of scores [n] in place, positions j >= valid replaced by d2l's fill first (so a row
// with nothing valid is uniform, as in d2l).
void masked_softmax_row(float* s, Index n, Index valid) {
  std::fill(s + std::min(valid, n), s + n, kD2lFill);
  f32_softmax_row(s, n);
}

}  // namespace

DecoderAttention::DecoderAttention(const AdditiveWeights& weights, Matrix values, Index batch,
                                   Index source_steps, const int32_t* valid_lens, Index steps,
                                   const Dropout& dropout)
    : w_(weights),
      values_(std::move(values)),
      projected_keys_(matmul_transposed(values_, weights.w_k)),
      packed_q_t_(pack_transposed(weights.w_q)),
      batch_(batch),
      source_steps_(source_steps),
      steps_(steps),
      hidden_(weights.w_q.rows()),
      valid_lens_(valid_lens, valid_lens + batch),
      dropout_(dropout),
      projected_queries_(steps * batch, hidden_),
      weights_(steps * batch, source_steps) {}

void DecoderAttention::step(Index t, const float* query, float* context) {
  const Index B = batch_, Ts = source_steps_, h = hidden_, H = values_.cols();
  float* projected = projected_queries_.data() + t * B * h;
  f32_gemm_packed(query, w_.w_q.cols(), B, w_.w_q.cols(), packed_q_t_.data(), h, projected, h);
  float* weights = weights_.data() + t * B * Ts;
  for (Index b = 0; b < B; ++b) {
    float* scores = weights + b * Ts;
    additive_scores(projected + b * h, 1, projected_keys_.data() + b * Ts * h, Ts, h, w_.w_v.data(),
                    scores, Ts);
    masked_softmax_row(scores, Ts, valid_lens_[static_cast<size_t>(b)]);
    float* out = context + b * H;
    std::fill(out, out + H, 0.0f);
    for (Index j = 0; j < Ts; ++j) {
      float weight = scores[j];
      if (dropout_.active()) weight *= dropout_.factor(static_cast<uint64_t>((t * B + b) * Ts + j));
      const float* v = values_.data() + (b * Ts + j) * H;
      for (Index c = 0; c < H; ++c) out[c] += weight * v[c];
    }
  }
}

// With dO = dcontext and F the dropout factors: dP = F * (dO v^T), dS = P * (dP - sum_j P dP)
// (0 where masked: a fill is a constant), dV += (P * F)^T dO, and through the tanh features
// d(W_q q)_b = sum_j dS_bj w_v (1 - f_bj^2), d(W_k k)_bj = dS_bj w_v (1 - f_bj^2),
// dw_v = sum dS_bj f_bj.
void DecoderAttention::step_backward(Index t, const float* dcontext, float* dquery) {
  const Index B = batch_, Ts = source_steps_, h = hidden_, H = values_.cols();
  if (d_values_.rows() == 0) {
    d_values_ = Matrix::Zero(B * Ts, H);
    d_projected_keys_ = Matrix::Zero(B * Ts, h);
    d_projected_queries_ = Matrix::Zero(steps_ * B, h);
    d_w_v_ = Vector::Zero(h);
    packed_q_ = pack(w_.w_q);
  }
  std::vector<float> d_weights(static_cast<size_t>(Ts)), d_scores(static_cast<size_t>(Ts));
  for (Index b = 0; b < B; ++b) {
    const float* p = weights(t) + b * Ts;
    const float* dout = dcontext + b * H;
    float delta = 0.0f;
    for (Index j = 0; j < Ts; ++j) {
      const float factor =
          dropout_.active() ? dropout_.factor(static_cast<uint64_t>((t * B + b) * Ts + j)) : 1.0f;
      const float* v = values_.data() + (b * Ts + j) * H;
      float* dv = d_values_.data() + (b * Ts + j) * H;
      float dp = 0.0f;
      const float pooled = p[j] * factor;
      for (Index c = 0; c < H; ++c) {
        dp += dout[c] * v[c];
        dv[c] += pooled * dout[c];
      }
      d_weights[static_cast<size_t>(j)] = factor * dp;
      delta += p[j] * factor * dp;
    }
    // Masked scores were replaced by the fill, a constant: no gradient reaches them.
    const Index valid = std::min(static_cast<Index>(valid_lens_[static_cast<size_t>(b)]), Ts);
    for (Index j = 0; j < Ts; ++j) {
      d_scores[static_cast<size_t>(j)] =
          j < valid ? p[j] * (d_weights[static_cast<size_t>(j)] - delta) : 0.0f;
    }
    const Index row = t * B + b;
    additive_scores_backward(d_scores.data(), Ts, projected_queries_.data() + row * h, 1,
                             projected_keys_.data() + b * Ts * h, Ts, h, w_.w_v.data(),
                             d_projected_queries_.data() + row * h,
                             d_projected_keys_.data() + b * Ts * h, d_w_v_.data());
  }
  // dquery = d(W_q q) W_q, [B, h] x [h, H].
  f32_gemm_packed(d_projected_queries_.data() + t * B * h, h, B, h, packed_q_.data(), w_.w_q.cols(),
                  dquery, w_.w_q.cols());
}

Matrix DecoderAttention::finish_backward(const MatrixRef& queries, MatrixMap dw_q, MatrixMap dw_k,
                                         Eigen::Map<Vector> dw_v) {
  const Matrix dqp_t = d_projected_queries_.transpose();
  const Matrix dkp_t = d_projected_keys_.transpose();
  dw_q += matmul(dqp_t, queries);
  dw_k += matmul(dkp_t, values_);
  dw_v += d_w_v_;
  return d_values_ + matmul(d_projected_keys_, w_.w_k);
}

}  // namespace attn::detail
