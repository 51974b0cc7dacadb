#pragma once
// d2l's AdditiveAttention as the Bahdanau decoder uses it: at every step one query per batch row
// (the previous top hidden state) against the same keys = values (the encoder's top outputs),
// masked by the source valid lengths with d2l's fill -1e6, dropout on the weights when training.
//   features f_bj = tanh(W_q q_b + W_k k_bj),  scores s_bj = w_v . f_bj,
//   weights = masked_softmax(s),  context_b = sum_j dropout(weights)_bj v_bj.
// attn::additive_attention computes the same for a [B, nq, nk] batch, but re-projects the keys on
// every call; a decoder asks T times with one query each, so here W_k k is computed once per
// sequence and W_q q once per step for the whole batch, both kept for the backward. The scores
// from them are the shared additive_scores (attention/additive_features.hpp), then the masked
// softmax, dropout and pooling of one score row per batch row and step, the rows split across
// the pool.

#include <cstdint>
#include <vector>

#include "attn/mask.hpp"
#include "attn/tensor.hpp"
#include "kernels/seeded_dropout.hpp"

namespace attn::detail {

struct AdditiveWeights {
  ConstMatrixMap w_q;            // [h, H]
  ConstMatrixMap w_k;            // [h, H]
  Eigen::Map<const Vector> w_v;  // [h]
};

class DecoderAttention {
 public:
  // values [B * Ts, H] batch-major (row b * Ts + j), also the keys; valid_lens [B] in [0, Ts].
  // Weight (b, j) of step t is dropped by dropout.factor((t * B + b) * Ts + j).
  DecoderAttention(const AdditiveWeights& weights, Matrix values, Index batch, Index source_steps,
                   const int32_t* valid_lens, Index steps, const Dropout& dropout);

  // query [B, H] -> context [B, H]; the weights stay readable by weights(t).
  void step(Index t, const float* query, float* context);
  // The attention distribution of step t before dropout, [B, Ts].
  const float* weights(Index t) const { return weights_.data() + t * batch_ * source_steps_; }

  // Backward of step t (steps from the last down): dcontext [B, H] is the gradient of its
  // context. Writes dL/dquery into dquery [B, H] and records the rest.
  void step_backward(Index t, const float* dcontext, float* dquery);

  // After every step's backward: adds dL/dW_q, dL/dW_k, dL/dw_v into the given buffers and
  // returns dL/dvalues [B * Ts, H] (as values and as keys). queries [T * B, H]: every step's query.
  Matrix finish_backward(const MatrixRef& queries, MatrixMap dw_q, MatrixMap dw_k,
                         Eigen::Map<Vector> dw_v);

 private:
  Index row_work() const;  // one batch row's work in a step, for run_ranges
  // The keys = values of batch row b, [Ts, H].
  ConstMatrixMap source_values(Index b) const {
    return {values_.data() + b * source_steps_ * values_.cols(), source_steps_, values_.cols()};
  }
  // The dropout index of weight (b, 0) of step t: weights are numbered as [T, B, Ts].
  uint64_t weight_index(Index t, Index b) const {
    return static_cast<uint64_t>((t * batch_ + b) * source_steps_);
  }

  AdditiveWeights w_;
  Matrix values_;                             // [B * Ts, H]
  Matrix projected_keys_;                     // [B * Ts, h]
  std::vector<float> packed_q_t_, packed_q_;  // panels of W_q^T (forward) and W_q (backward)
  Index batch_, source_steps_, steps_, hidden_;
  Mask mask_;  // the source valid lengths
  Dropout dropout_;
  Matrix projected_queries_;  // [T * B, h]: W_q q of every step
  Matrix weights_;            // [T * B, Ts]
  // Backward state.
  Matrix d_values_, d_projected_keys_, d_projected_queries_;  // [B Ts, H], [B Ts, h], [T B, h]
  Vector d_w_v_;
  Matrix d_scores_, d_w_v_rows_;  // [B, Ts], [B, h]: one step's dS and each row's part of dw_v
};

}  // namespace attn::detail
