#include "attn/gru.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "checks.hpp"
#include "kernels/activation_kernels.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"
#include "kernels/seeded_dropout.hpp"
#include "nn/gru_layer.hpp"
#include "parallel/split.hpp"

namespace attn {

namespace detail {

GruLayerGradientViews views_of(GruLayerGradients& g) {
  return {MatrixMap(g.dweight_ih.data(), g.dweight_ih.rows(), g.dweight_ih.cols()),
          MatrixMap(g.dweight_hh.data(), g.dweight_hh.rows(), g.dweight_hh.cols()),
          Eigen::Map<Vector>(g.dbias_ih.data(), g.dbias_ih.size()),
          Eigen::Map<Vector>(g.dbias_hh.data(), g.dbias_hh.size())};
}

GruLayerTape::GruLayerTape(const GruLayerWeights& weights, Index batch, Index steps,
                           const float* h0)
    : weights_(weights),
      batch_(batch),
      steps_(steps),
      hidden_(weights.weight_hh.cols()),
      packed_ih_t_(pack_transposed(weights.weight_ih)),
      packed_hh_t_(pack_transposed(weights.weight_hh)),
      states_((steps + 1) * batch, hidden_),
      gates_(steps * batch, 4 * hidden_),
      gh_(batch, 3 * hidden_) {
  if (h0) {
    states_.topRows(batch) = ConstMatrixMap(h0, batch, hidden_);
  } else {
    states_.topRows(batch).setZero();
  }
}

Matrix GruLayerTape::project_input(const MatrixRef& x) const {
  Matrix gi = matmul_transposed_packed(x, packed_ih_t_, 3 * hidden_);
  add_bias_rows(gi, weights_.bias_ih.data());
  return gi;
}

// Per batch row about 20 operations for each of its 3H gates (the sigmoid and tanh loops).
Index GruLayerTape::row_work() const { return 60 * hidden_; }

void GruLayerTape::step(Index t, const float* gi) {
  const Index H = hidden_;
  const float* h_prev = state(t - 1);
  f32_gemm_packed(h_prev, H, batch_, H, packed_hh_t_.data(), 3 * H, gh_.data(), 3 * H);
  float* h = states_.data() + (t + 1) * batch_ * H;
  run_ranges(batch_, row_work(), [&](Index begin, Index end) {
    for (Index b = begin; b < end; ++b) {
      const float* gib = gi + b * 3 * H;
      float* ghb = gh_.data() + b * 3 * H;
      const float* hp = h_prev + b * H;
      for (Index j = 0; j < 3 * H; ++j) ghb[j] += weights_.bias_hh[j];
      // gates: [r, z, n, hn], each H wide; r and z first hold their pre-activations.
      float* gates = gates_.data() + (t * batch_ + b) * 4 * H;
      float *r = gates, *z = gates + H, *n = gates + 2 * H, *hn = gates + 3 * H;
      for (Index j = 0; j < 2 * H; ++j) gates[j] = gib[j] + ghb[j];
      f32_sigmoid(gates, gates, 2 * H);
      for (Index j = 0; j < H; ++j) {
        hn[j] = ghb[2 * H + j];
        n[j] = gib[2 * H + j] + r[j] * hn[j];
      }
      f32_tanh(n, n, H);
      float* hb = h + b * H;
      for (Index j = 0; j < H; ++j) hb[j] = (1.0f - z[j]) * n[j] + z[j] * hp[j];
    }
  });
}

Eigen::Map<const Matrix> GruLayerTape::outputs() const {
  return {states_.data() + batch_ * hidden_, steps_ * batch_, hidden_};
}

Eigen::Map<const Matrix> GruLayerTape::previous_states() const {
  return {states_.data(), steps_ * batch_, hidden_};
}

// With dh = dL/dh': dn = dh (1 - z), dz = dh (h - n), and through the nonlinearities
//   d(n pre-activation) = dn (1 - n^2)        -> gi_n, and r * it -> gh_n
//   d(r pre) = d(n pre) hn r (1 - r)           -> gi_r and gh_r
//   d(z pre) = dz z (1 - z)                    -> gi_z and gh_z
//   dh_prev = dh z + dGH W_hh.
void GruLayerTape::step_backward(Index t, const float* dh, float* dh_prev) {
  const Index H = hidden_;
  if (dgi_.rows() == 0) {
    dgi_.resize(steps_ * batch_, 3 * H);
    dgh_.resize(steps_ * batch_, 3 * H);
    packed_hh_ = pack(weights_.weight_hh);
  }
  const float* h_prev = state(t - 1);
  run_ranges(batch_, row_work(), [&](Index begin, Index end) {
    for (Index b = begin; b < end; ++b) {
      const Index row = t * batch_ + b;
      const float* gates = gates_.data() + row * 4 * H;
      const float* dhb = dh + b * H;
      const float* hp = h_prev + b * H;
      float* dgi = dgi_.data() + row * 3 * H;
      float* dgh = dgh_.data() + row * 3 * H;
      float* dhp = dh_prev + b * H;
      for (Index j = 0; j < H; ++j) {
        const float r = gates[j], z = gates[H + j], n = gates[2 * H + j], hn = gates[3 * H + j];
        const float dn_pre = dhb[j] * (1.0f - z) * (1.0f - n * n);
        const float dr_pre = dn_pre * hn * r * (1.0f - r);
        const float dz_pre = dhb[j] * (hp[j] - n) * z * (1.0f - z);
        dgi[j] = dgh[j] = dr_pre;
        dgi[H + j] = dgh[H + j] = dz_pre;
        dgi[2 * H + j] = dn_pre;
        dgh[2 * H + j] = dn_pre * r;
        dhp[j] = dhb[j] * z;
      }
    }
  });
  f32_gemm_panels(dgh_.data() + t * batch_ * 3 * H, 3 * H, batch_, 3 * H, packed_hh_.data(),
                  kPanel * 3 * H, H, dh_prev, H, /*accumulate=*/true);
}

void GruLayerTape::accumulate_gradients(const MatrixRef& x, GruLayerGradientViews g) const {
  accumulate_weight_gradient(dgi_, x, g.dweight_ih, g.dbias_ih.data());
  accumulate_weight_gradient(dgh_, previous_states(), g.dweight_hh, g.dbias_hh.data());
}

}  // namespace detail

GruLayerWeights gru_layer_weights(const Matrix& weight_ih, const Matrix& weight_hh,
                                  const Vector& bias_ih, const Vector& bias_hh) {
  return {ConstMatrixMap(weight_ih.data(), weight_ih.rows(), weight_ih.cols()),
          ConstMatrixMap(weight_hh.data(), weight_hh.rows(), weight_hh.cols()),
          Eigen::Map<const Vector>(bias_ih.data(), bias_ih.size()),
          Eigen::Map<const Vector>(bias_hh.data(), bias_hh.size())};
}

struct GruForward::Impl {
  std::vector<GruLayerWeights> layers;
  std::vector<detail::GruLayerTape> tapes;
  std::vector<Matrix> inputs;  // each layer's input of every step [T * B, in] (after dropout)
  detail::Dropout dropout;
  Index steps, batch;

  // The factor layer `layer` >= 1 multiplies entry `index` of its input by. Each layer draws
  // from its own run of the stream, so no two layers share a mask.
  float factor(Index layer, Index index) const {
    const Index per_layer = steps * batch * tapes[0].hidden();
    return dropout.factor(static_cast<uint64_t>((layer - 1) * per_layer + index));
  }
};

GruForward::GruForward(std::vector<GruLayerWeights> layers, ConstBatch x, ConstBatch h0,
                       const GruOptions& options) {
  if (layers.empty()) detail::fail("layers", "at least one layer", "none");
  if (!(options.dropout >= 0.0f && options.dropout < 1.0f)) {
    detail::fail("dropout", "a probability in [0, 1)", detail::number_string(options.dropout));
  }
  const Index L = static_cast<Index>(layers.size());
  const Index H = layers[0].weight_hh.cols();
  for (Index l = 0; l < L; ++l) {
    const std::string suffix = "_l" + std::to_string(l);
    const Index in = l == 0 ? x.cols : H;
    detail::require_shape("weight_ih" + suffix, {3 * H, in}, detail::shape_of(layers[l].weight_ih));
    detail::require_shape("weight_hh" + suffix, {3 * H, H}, detail::shape_of(layers[l].weight_hh));
    detail::require_shape("bias_ih" + suffix, {3 * H}, {layers[l].bias_ih.size()});
    detail::require_shape("bias_hh" + suffix, {3 * H}, {layers[l].bias_hh.size()});
  }
  if (h0.batch != 0) detail::require_shape("h0", {L, x.rows, H}, detail::shape_of(h0));

  const Index T = x.batch, B = x.rows;
  impl_ = std::make_unique<Impl>(
      Impl{std::move(layers),
           {},
           {},
           detail::Dropout(options.training ? options.dropout : 0.0f, options.seed),
           T,
           B});
  Impl& s = *impl_;
  s.tapes.reserve(static_cast<size_t>(L));
  for (Index l = 0; l < L; ++l) {
    if (l == 0) {
      s.inputs.emplace_back(ConstMatrixMap(x.data, T * B, x.cols));
    } else {
      Matrix input = s.tapes.back().outputs();
      if (s.dropout.active()) {
        for (Index i = 0; i < input.size(); ++i) input.data()[i] *= s.factor(l, i);
      }
      s.inputs.push_back(std::move(input));
    }
    s.tapes.emplace_back(s.layers[l], B, T, h0.batch ? h0[l].data() : nullptr);
    detail::GruLayerTape& tape = s.tapes.back();
    const Matrix gi = tape.project_input(s.inputs.back());
    for (Index t = 0; t < T; ++t) tape.step(t, gi.data() + t * B * 3 * H);
  }
}

GruForward::~GruForward() = default;
GruForward::GruForward(GruForward&&) noexcept = default;
GruForward& GruForward::operator=(GruForward&&) noexcept = default;

Tensor3 GruForward::output() const {
  const auto& top = impl_->tapes.back();
  Tensor3 out(impl_->steps, impl_->batch, top.hidden());
  MatrixMap(out.data.data(), impl_->steps * impl_->batch, top.hidden()) = top.outputs();
  return out;
}

Tensor3 GruForward::h_n() const {
  const Index L = static_cast<Index>(impl_->tapes.size()), B = impl_->batch;
  const Index H = impl_->tapes[0].hidden();
  Tensor3 out(L, B, H);
  for (Index l = 0; l < L; ++l) {
    out.view()[l] = ConstMatrixMap(impl_->tapes[l].state(impl_->steps - 1), B, H);
  }
  return out;
}

GruGradients GruForward::backward(ConstBatch d_output, ConstBatch d_h_n) {
  Impl& s = *impl_;
  const Index L = static_cast<Index>(s.tapes.size()), T = s.steps, B = s.batch;
  const Index H = s.tapes[0].hidden();
  detail::require_shape("d_output", {T, B, H}, detail::shape_of(d_output));
  if (d_h_n.batch != 0) detail::require_shape("d_h_n", {L, B, H}, detail::shape_of(d_h_n));

  std::vector<detail::GruLayerTape>& tapes = s.tapes;  // they record the backward's gate gradients
  GruGradients out;
  out.dh0 = Tensor3(L, B, H);
  out.layers.resize(static_cast<size_t>(L));
  Matrix d_out = ConstMatrixMap(d_output.data, T * B, H);
  Matrix dh(B, H), dh_prev(B, H);
  for (Index l = L - 1; l >= 0; --l) {
    detail::GruLayerTape& tape = tapes[static_cast<size_t>(l)];
    if (d_h_n.batch != 0) {
      dh_prev = d_h_n[l];
    } else {
      dh_prev.setZero();
    }
    for (Index t = T - 1; t >= 0; --t) {
      dh = d_out.middleRows(t * B, B) + dh_prev;
      tape.step_backward(t, dh.data(), dh_prev.data());
    }
    out.dh0.view()[l] = dh_prev;

    const GruLayerWeights& w = s.layers[static_cast<size_t>(l)];
    GruLayerGradients& g = out.layers[static_cast<size_t>(l)];
    g.dweight_ih = Matrix::Zero(w.weight_ih.rows(), w.weight_ih.cols());
    g.dweight_hh = Matrix::Zero(3 * H, H);
    g.dbias_ih = Vector::Zero(3 * H);
    g.dbias_hh = Vector::Zero(3 * H);
    tape.accumulate_gradients(s.inputs[static_cast<size_t>(l)], detail::views_of(g));

    Matrix dx = detail::matmul(tape.input_projection_gradient(), w.weight_ih);
    if (l > 0 && s.dropout.active()) {
      for (Index i = 0; i < dx.size(); ++i) dx.data()[i] *= s.factor(l, i);
    }
    if (l == 0) {
      out.dx = Tensor3(T, B, dx.cols());
      MatrixMap(out.dx.data.data(), T * B, dx.cols()) = dx;
    } else {
      d_out = std::move(dx);
    }
  }
  return out;
}

}  // namespace attn
