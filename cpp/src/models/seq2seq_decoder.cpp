#include "models/seq2seq_decoder.hpp"

#include <algorithm>

#include "kernels/gemm.hpp"

namespace attn::detail {

DecoderRun::DecoderRun(const Seq2SeqConfig& config, const Seq2Seq::Parameters& parameters,
                       const float* weights, const Matrix& encoder_outputs,
                       const Tensor3& encoder_states, const int32_t* valid_lens, Index steps,
                       bool training, uint64_t dropout_seed)
    : config_(config),
      parameters_(parameters),
      batch_(encoder_states.rows),
      source_steps_(encoder_outputs.rows() / encoder_states.rows),
      steps_(steps),
      hidden_(config.num_hiddens),
      embed_(config.embed_size),
      layer_weights_(parameters.gru(weights, parameters.decoder_rnn)),
      gru_dropout_(training ? config.dropout : 0.0f, dropout_seed + 1),
      context_column_(config.attention ? 0 : config.embed_size),
      embedding_column_(config.attention ? config.num_hiddens : 0) {
  const Index B = batch_, Ts = source_steps_, H = hidden_, L = config.num_layers;
  for (Index l = 0; l < L; ++l) {
    tapes_.emplace_back(layer_weights_[static_cast<size_t>(l)], B, steps,
                        encoder_states.view()[l].data());
    inputs_.emplace_back(steps * B, l == 0 ? H + embed_ : H);
  }
  if (config.attention) {
    // Keys = values = the encoder outputs, batch-major as d2l's permute(1, 0, 2) makes them.
    Matrix values(B * Ts, H);
    for (Index j = 0; j < Ts; ++j) {
      for (Index b = 0; b < B; ++b) values.row(b * Ts + j) = encoder_outputs.row(j * B + b);
    }
    attention_ = std::make_unique<DecoderAttention>(
        parameters.attention(weights), std::move(values), B, Ts, valid_lens, steps,
        Dropout(training ? config.dropout : 0.0f, dropout_seed + 2));
  } else {
    fixed_context_ = encoder_outputs.bottomRows(B);  // d2l: enc_output[-1]
  }
}

float DecoderRun::layer_dropout(Index layer, Index index) const {
  return gru_dropout_.factor(
      static_cast<uint64_t>((layer - 1) * steps_ * batch_ * hidden_ + index));
}

void DecoderRun::step(Index t, const float* embeddings) {
  const Index B = batch_, H = hidden_, L = config_.num_layers;
  auto x0 = inputs_[0].middleRows(t * B, B);
  x0.middleCols(embedding_column_, embed_) = ConstMatrixMap(embeddings, B, embed_);
  auto context = x0.middleCols(context_column_, H);
  if (attention_) {
    Matrix c(B, H);  // the query is the top layer's state after step t - 1
    attention_->step(t, tapes_.back().state(t - 1), c.data());
    context = c;
  } else {
    context = fixed_context_;
  }
  for (Index l = 0; l < L; ++l) {
    GruLayerTape& tape = tapes_[static_cast<size_t>(l)];
    Matrix& inputs = inputs_[static_cast<size_t>(l)];
    if (l > 0) {
      auto x = inputs.middleRows(t * B, B);
      x = ConstMatrixMap(tapes_[static_cast<size_t>(l - 1)].state(t), B, H);
      if (gru_dropout_.active()) {
        for (Index i = 0; i < B * H; ++i) x.data()[i] *= layer_dropout(l, t * B * H + i);
      }
    }
    const Matrix gi = tape.project_input(inputs.middleRows(t * B, B));
    tape.step(t, gi.data());
  }
}

// Steps from the last down; within a step, layers from the top down, so that every state's
// gradient is complete (from the output, the layer above, the next step, and as the next
// step's attention query) before its step is differentiated.
DecoderRun::Gradients DecoderRun::backward(const MatrixRef& d_top, float* gradients) {
  const Index B = batch_, H = hidden_, L = config_.num_layers, T = steps_;
  std::vector<std::vector<float>> packed_ih;  // W_ih_l as panels, for dx = dGI W_ih
  for (const auto& w : layer_weights_) packed_ih.push_back(pack(w.weight_ih));

  std::vector<Matrix> carry(static_cast<size_t>(L), Matrix::Zero(B, H));  // dL/dh_{l, t}
  Matrix from_above(B, H), dh(B, H), dquery(B, H);
  Matrix d_inputs0(T * B, H + embed_);
  Matrix d_fixed_context = Matrix::Zero(B, H);
  for (Index t = T - 1; t >= 0; --t) {
    for (Index l = L - 1; l >= 0; --l) {
      GruLayerTape& tape = tapes_[static_cast<size_t>(l)];
      Matrix& c = carry[static_cast<size_t>(l)];
      dh = c;
      if (l == L - 1) dh += d_top.middleRows(t * B, B);
      if (l < L - 1) dh += from_above;
      tape.step_backward(t, dh.data(), c.data());
      // dL/d(this step's input) = dGI W_ih.
      const Index in = inputs_[static_cast<size_t>(l)].cols();
      float* dx = l == 0 ? d_inputs0.data() + t * B * in : from_above.data();
      f32_gemm_packed(tape.input_projection_gradient().data() + t * B * 3 * H, 3 * H, B, 3 * H,
                      packed_ih[static_cast<size_t>(l)].data(), in, dx, in);
      if (l > 0 && gru_dropout_.active()) {
        for (Index i = 0; i < B * H; ++i) from_above.data()[i] *= layer_dropout(l, t * B * H + i);
      }
    }
    const auto d_context = d_inputs0.middleRows(t * B, B).middleCols(context_column_, H);
    if (attention_) {
      const Matrix dc = d_context;
      attention_->step_backward(t, dc.data(), dquery.data());
      carry.back() += dquery;
    } else {
      d_fixed_context += d_context;
    }
  }

  Gradients out;
  out.d_embeddings = d_inputs0.middleCols(embedding_column_, embed_);
  out.d_encoder_states = Tensor3(L, B, H);
  for (Index l = 0; l < L; ++l) {
    out.d_encoder_states.view()[l] = carry[static_cast<size_t>(l)];
    const auto& ids = parameters_.decoder_rnn[static_cast<size_t>(l)];
    tapes_[static_cast<size_t>(l)].accumulate_gradients(
        inputs_[static_cast<size_t>(l)],
        {parameters_.matrix(gradients, ids[0]), parameters_.matrix(gradients, ids[1]),
         parameters_.vector(gradients, ids[2]), parameters_.vector(gradients, ids[3])});
  }
  const Index Ts = source_steps_;
  out.d_encoder_outputs = Matrix::Zero(Ts * B, H);
  if (attention_) {
    // The queries: the top layer's state before each step.
    const Matrix d_values = attention_->finish_backward(
        tapes_.back().previous_states(), parameters_.matrix(gradients, parameters_.attention_w_q),
        parameters_.matrix(gradients, parameters_.attention_w_k),
        parameters_.vector(gradients, parameters_.attention_w_v));
    for (Index j = 0; j < Ts; ++j) {
      for (Index b = 0; b < B; ++b) out.d_encoder_outputs.row(j * B + b) = d_values.row(b * Ts + j);
    }
  } else {
    out.d_encoder_outputs.bottomRows(B) = d_fixed_context;
  }
  return out;
}

}  // namespace attn::detail
