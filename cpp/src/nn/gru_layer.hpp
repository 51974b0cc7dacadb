#pragma once
// One GRU layer stepped over T steps of a batch, keeping what backpropagation through time
// needs. The multi-layer GRU runs each layer over the whole sequence; the attention decoder
// interleaves layers step by step (its first layer's input depends on the previous step's top
// state), so both drive this tape a step at a time. Every matrix product is batched over the
// batch: per step one [B, H] x [H, 3H] product forward and one [B, 3H] x [3H, H] backward.

#include <vector>

#include "attn/gru.hpp"
#include "attn/tensor.hpp"

namespace attn::detail {

// Gradient views into caller-owned buffers; accumulate_gradients adds to them.
struct GruLayerGradientViews {
  MatrixMap dweight_ih;
  MatrixMap dweight_hh;
  Eigen::Map<Vector> dbias_ih;
  Eigen::Map<Vector> dbias_hh;
};
GruLayerGradientViews views_of(GruLayerGradients& gradients);

class GruLayerTape {
 public:
  // h0 [B, H] row-major, or null for zeros.
  GruLayerTape(const GruLayerWeights& weights, Index batch, Index steps, const float* h0);

  Index hidden() const { return hidden_; }
  Index batch() const { return batch_; }
  const GruLayerWeights& weights() const { return weights_; }

  // x [rows, in] -> x W_ih^T + b_ih [rows, 3H]: all steps' input projections in one product.
  Matrix project_input(const MatrixRef& x) const;

  // Step t from gi = x_t W_ih^T + b_ih [B, 3H], after steps 0..t-1.
  void step(Index t, const float* gi);

  // h after step t [B, H]; state(-1) is h0.
  const float* state(Index t) const { return states_.data() + (t + 1) * batch_ * hidden_; }
  // Every step's output h_t, [T * B, H] (row t * B + b).
  Eigen::Map<const Matrix> outputs() const;
  // Every step's h_{t-1}, [T * B, H].
  Eigen::Map<const Matrix> previous_states() const;

  // Backward of step t, steps taken from the last down: dh = dL/dh_t [B, H] by every path.
  // Records the gradient of step t's input projection gi (input_projection_gradient()) and writes
  // dL/dh_{t-1} through this step into dh_prev [B, H].
  void step_backward(Index t, const float* dh, float* dh_prev);

  // dL/d(x W_ih^T + b_ih) of every step, [T * B, 3H]: times W_ih it is dL/dx.
  const Matrix& input_projection_gradient() const { return dgi_; }

  // Adds the parameter gradients, given the layer's inputs x [T * B, in] of every step:
  // dW_ih += dGI^T x, dW_hh += dGH^T H_prev, db_ih += sum dGI, db_hh += sum dGH.
  void accumulate_gradients(const MatrixRef& x, GruLayerGradientViews gradients) const;

 private:
  Index row_work() const;  // the elementwise work of one batch row of a step, for run_ranges

  GruLayerWeights weights_;
  Index batch_, steps_, hidden_;
  std::vector<float> packed_ih_t_, packed_hh_t_, packed_hh_;  // GEMM panels of W_ih^T, W_hh^T, W_hh
  Matrix states_;                                             // [(T + 1) * B, H]: h0, then h_t
  Matrix gates_;      // [T * B, 4H]: r, z, n and W_hn h + b_hn of each step
  Matrix gh_;         // [B, 3H] scratch: h W_hh^T + b_hh
  Matrix dgi_, dgh_;  // [T * B, 3H]
};

}  // namespace attn::detail
