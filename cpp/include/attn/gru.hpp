#pragma once
// torch.nn.GRU(input_size, hidden_size, num_layers, dropout) over a time-major batch
// (batch_first=False), with backpropagation through time. Per layer and step, PyTorch's equations
// and layout (gates stacked r, z, n in weight_ih_l{k} [3H, in], weight_hh_l{k} [3H, H],
// bias_ih_l{k} [3H], bias_hh_l{k} [3H]):
//   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
//   z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
//   n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
//   h' = (1 - z) * n + z * h
// Layer k > 0 reads layer k - 1's outputs, through inverted dropout when training.

#include <cstdint>
#include <memory>
#include <vector>

#include "attn/tensor.hpp"

namespace attn {

// One layer's parameters, viewed (not owned) in PyTorch's layout.
struct GruLayerWeights {
  ConstMatrixMap weight_ih;          // [3H, in]
  ConstMatrixMap weight_hh;          // [3H, H]
  Eigen::Map<const Vector> bias_ih;  // [3H]
  Eigen::Map<const Vector> bias_hh;  // [3H]
};

// Views of owned parameters; they must outlive every use of the result.
GruLayerWeights gru_layer_weights(const Matrix& weight_ih, const Matrix& weight_hh,
                                  const Vector& bias_ih, const Vector& bias_hh);

struct GruLayerGradients {
  Matrix dweight_ih, dweight_hh;
  Vector dbias_ih, dbias_hh;
};

struct GruOptions {
  float dropout = 0.0f;  // between layers, in [0, 1); applied only when training
  bool training = false;
  uint64_t seed = 0;  // the dropout stream: the same seed drops the same units
};

// Gradients of sum(output * d_output) + sum(h_n * d_h_n).
struct GruGradients {
  Tensor3 dx;   // [T, B, in]
  Tensor3 dh0;  // [L, B, H]
  std::vector<GruLayerGradients> layers;
};

// One forward pass, kept for its backward.
class GruForward {
 public:
  // x [T, B, in] time-major (row t * B + b); h0 [L, B, H], or an empty view (batch 0) for zeros.
  // The weights are viewed, not copied: they must outlive this object.
  // Throws std::invalid_argument naming the argument whose shape does not fit.
  GruForward(std::vector<GruLayerWeights> layers, ConstBatch x, ConstBatch h0,
             const GruOptions& options = {});
  ~GruForward();
  GruForward(GruForward&&) noexcept;
  GruForward& operator=(GruForward&&) noexcept;

  Tensor3 output() const;  // [T, B, H]: the top layer's h at every step
  Tensor3 h_n() const;     // [L, B, H]: every layer's last h

  // d_output [T, B, H]; d_h_n [L, B, H] or an empty view for zeros. May be called again with
  // other output gradients (it overwrites the tapes' gradient buffers, not the forward's record).
  GruGradients backward(ConstBatch d_output, ConstBatch d_h_n);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn
