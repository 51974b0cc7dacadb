#include "models/decoder_attention.hpp"

#include "attention/additive_features.hpp"
#include "attention/softmax_pooling.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn::detail {

namespace {

// The source valid lengths as a mask with d2l's fill (a row with nothing valid is uniform).
Mask source_mask(const int32_t* valid_lens, Index batch) {
  Mask mask;
  mask.valid_lens.assign(valid_lens, valid_lens + batch);
  return mask;
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
      mask_(source_mask(valid_lens, batch)),
      dropout_(dropout),
      projected_queries_(steps * batch, hidden_),
      weights_(steps * batch, source_steps) {}

void DecoderAttention::step(Index t, const float* query, float* context) {
  const Index B = batch_, Ts = source_steps_, h = hidden_, H = values_.cols();
  float* projected = projected_queries_.data() + t * B * h;
  f32_gemm_packed(query, w_.w_q.cols(), B, w_.w_q.cols(), packed_q_t_.data(), h, projected, h);
  for (Index b = 0; b < B; ++b) {
    float* scores = weights_.data() + (t * B + b) * Ts;
    additive_scores(projected + b * h, 1, projected_keys_.data() + b * Ts * h, Ts, h, w_.w_v.data(),
                    scores, Ts);
    softmax_and_pool(MatrixMap(scores, 1, Ts), source_values(b), {mask_, b, B, 1}, dropout_,
                     weight_index(t, b), MatrixMap(context + b * H, 1, H));
  }
}

// Through softmax_and_pool_backward (dP, dS, dV), then the tanh features:
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
  Matrix d_scores(1, Ts);
  for (Index b = 0; b < B; ++b) {
    const Index row = t * B + b;
    softmax_and_pool_backward(ConstMatrixMap(weights_.data() + row * Ts, 1, Ts), source_values(b),
                              ConstMatrixMap(dcontext + b * H, 1, H), {mask_, b, B, 1}, dropout_,
                              weight_index(t, b), MatrixMap(d_scores.data(), 1, Ts),
                              MatrixMap(d_values_.data() + b * Ts * H, Ts, H));
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
  accumulate_weight_gradient(d_projected_queries_, queries, dw_q, nullptr);
  accumulate_weight_gradient(d_projected_keys_, values_, dw_k, nullptr);
  dw_v += d_w_v_;
  return d_values_ + matmul(d_projected_keys_, w_.w_k);
}

}  // namespace attn::detail
