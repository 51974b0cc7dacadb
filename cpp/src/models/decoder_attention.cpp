#include "models/decoder_attention.hpp"

#include <algorithm>

#include "attention/additive_features.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"
#include "kernels/masked_softmax.hpp"
#include "models/source_mask.hpp"
#include "parallel/split.hpp"

namespace attn::detail {

namespace {

// One batch row's pooling, context [H] = sum_j dropout(w)_j v_j (j in order), and its backward:
// ds_j = F_j (dcontext . v_j) and dv_j += w_j F_j dcontext. Written out rather than through
// softmax_and_pool, whose products allocate, because each runs inside a task of a split.
void pool_row(const float* w, ConstMatrixMap v, const Dropout& dropout, uint64_t first_weight,
              float* context) {
  std::fill(context, context + v.cols(), 0.0f);
  for (Index j = 0; j < v.rows(); ++j) {
    const float wj = dropout.active() ? w[j] * dropout.factor(first_weight + j) : w[j];
    const float* vj = v.data() + j * v.cols();
    for (Index c = 0; c < v.cols(); ++c) context[c] += wj * vj[c];
  }
}

void pool_row_backward(const float* w, ConstMatrixMap v, const float* dcontext,
                       const Dropout& dropout, uint64_t first_weight, float* ds, float* dv) {
  for (Index j = 0; j < v.rows(); ++j) {
    const float factor = dropout.active() ? dropout.factor(first_weight + j) : 1.0f;
    const float* vj = v.data() + j * v.cols();
    float* dvj = dv + j * v.cols();
    float dot = 0.0f;
    for (Index c = 0; c < v.cols(); ++c) dot += dcontext[c] * vj[c];
    ds[j] = dot * factor;
    const float wj = w[j] * factor;
    for (Index c = 0; c < v.cols(); ++c) dvj[c] += wj * dcontext[c];
  }
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

// The batch rows are independent given the step's projected queries: runs of them go to the
// pool's threads, each writing its own rows of the weights, context and gradients.
Index DecoderAttention::row_work() const {
  return source_steps_ * (10 * hidden_ + 2 * values_.cols());
}

void DecoderAttention::step(Index t, const float* query, float* context) {
  const Index B = batch_, Ts = source_steps_, h = hidden_, H = values_.cols();
  float* projected = projected_queries_.data() + t * B * h;
  f32_gemm_packed(query, w_.w_q.cols(), B, w_.w_q.cols(), packed_q_t_.data(), h, projected, h);
  run_ranges(B, row_work(), [&](Index begin, Index end) {
    for (Index b = begin; b < end; ++b) {
      float* weights = weights_.data() + (t * B + b) * Ts;
      additive_scores(projected + b * h, 1, projected_keys_.data() + b * Ts * h, Ts, h,
                      w_.w_v.data(), weights, Ts);
      masked_softmax_rows(MatrixMap(weights, 1, Ts), {mask_, b, B, 1});
      pool_row(weights, source_values(b), dropout_, weight_index(t, b), context + b * H);
    }
  });
}

// Through the pooling and the masked softmax (dP, dS, dV), then the tanh features:
// d(W_q q)_b = sum_j dS_bj w_v (1 - f_bj^2), d(W_k k)_bj = dS_bj w_v (1 - f_bj^2),
// dw_v = sum dS_bj f_bj (per batch row, then added over the rows in order).
void DecoderAttention::step_backward(Index t, const float* dcontext, float* dquery) {
  const Index B = batch_, Ts = source_steps_, h = hidden_, H = values_.cols();
  if (d_values_.rows() == 0) {
    d_values_ = Matrix::Zero(B * Ts, H);
    d_projected_keys_ = Matrix::Zero(B * Ts, h);
    d_projected_queries_ = Matrix::Zero(steps_ * B, h);
    d_w_v_ = Vector::Zero(h);
    d_scores_.resize(B, Ts);
    d_w_v_rows_.resize(B, h);
    packed_q_ = pack(w_.w_q);
  }
  d_w_v_rows_.setZero();
  run_ranges(B, 2 * row_work(), [&](Index begin, Index end) {
    for (Index b = begin; b < end; ++b) {
      const Index row = t * B + b;
      const float* weights = weights_.data() + row * Ts;
      float* ds = d_scores_.data() + b * Ts;
      pool_row_backward(weights, source_values(b), dcontext + b * H, dropout_, weight_index(t, b),
                        ds, d_values_.data() + b * Ts * H);
      masked_softmax_backward_rows(ConstMatrixMap(weights, 1, Ts), MatrixMap(ds, 1, Ts),
                                   {mask_, b, B, 1});
      additive_scores_backward(ds, Ts, projected_queries_.data() + row * h, 1,
                               projected_keys_.data() + b * Ts * h, Ts, h, w_.w_v.data(),
                               d_projected_queries_.data() + row * h,
                               d_projected_keys_.data() + b * Ts * h, d_w_v_rows_.data() + b * h);
    }
  });
  for (Index b = 0; b < B; ++b) d_w_v_ += d_w_v_rows_.row(b).transpose();
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
