#include "models/seq2seq_pass.hpp"

#include "attn/embedding.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"

namespace attn::detail {

namespace {

ConstBatch time_major_view(const Matrix& m, Index steps, Index batch) {
  return {m.data(), steps, batch, m.cols()};
}

// logits [rows, V] = top [rows, H] dense.weight^T + dense.bias.
Matrix dense(const Seq2Seq::Parameters& p, const float* weights, const MatrixRef& top) {
  Matrix logits = matmul_transposed(top, p.matrix(weights, p.dense_weight));
  add_bias_rows(logits, p.vector(weights, p.dense_bias).data());
  return logits;
}

GruForward run_encoder_gru(const Seq2SeqConfig& config, const Seq2Seq::Parameters& p,
                           const float* weights, const Matrix& embedded, Index steps, Index batch,
                           bool training, uint64_t dropout_seed) {
  return GruForward(p.gru(weights, p.encoder_rnn), time_major_view(embedded, steps, batch), {},
                    {config.dropout, training, dropout_seed});
}

}  // namespace

std::vector<int32_t> time_major(TokenBatch tokens) {
  std::vector<int32_t> out(static_cast<size_t>(tokens.batch * tokens.steps));
  for (Index b = 0; b < tokens.batch; ++b) {
    for (Index t = 0; t < tokens.steps; ++t) {
      out[static_cast<size_t>(t * tokens.batch + b)] = tokens.data[b * tokens.steps + t];
    }
  }
  return out;
}

GruEncoderRun::GruEncoderRun(const Seq2SeqConfig& config, const Seq2Seq::Parameters& p,
                             const float* weights, TokenBatch src, bool training,
                             uint64_t dropout_seed)
    : ids(time_major(src)),
      gru(run_encoder_gru(config, p, weights,
                          embedding(p.matrix(weights, p.encoder_embedding), ids.data(),
                                    static_cast<Index>(ids.size()), "src"),
                          src.steps, src.batch, training, dropout_seed)) {
  const Tensor3 out = gru.output();
  outputs = ConstMatrixMap(out.data.data(), out.batch * out.rows, out.cols);
  states = gru.h_n();
}

Seq2SeqPass::Seq2SeqPass(const Seq2SeqConfig& config, const Seq2Seq::Parameters& parameters,
                         const float* weights, TokenBatch src, const int32_t* src_valid_lens,
                         TokenBatch tgt_input, bool training, uint64_t dropout_seed)
    : config_(config),
      parameters_(parameters),
      weights_(weights),
      batch_(src.batch),
      source_steps_(src.steps),
      target_steps_(tgt_input.steps),
      encoder_(config, parameters, weights, src, training, dropout_seed),
      target_ids_(time_major(tgt_input)),
      decoder_(config, parameters, weights, encoder_.outputs, encoder_.states, src_valid_lens,
               tgt_input.steps, training, dropout_seed) {
  const Matrix embedded =
      embedding(parameters.matrix(weights, parameters.decoder_embedding), target_ids_.data(),
                static_cast<Index>(target_ids_.size()), "tgt_input");
  for (Index t = 0; t < target_steps_; ++t) {
    decoder_.step(t, embedded.data() + t * batch_ * config.embed_size);
  }
  logits_ = dense(parameters, weights, decoder_.top_outputs());
}

Tensor3 Seq2SeqPass::batch_major_logits() const {
  const Index B = batch_, T = target_steps_, V = logits_.cols();
  Tensor3 out(B, T, V);
  for (Index t = 0; t < T; ++t) {
    for (Index b = 0; b < B; ++b) out.view()[b].row(t) = logits_.row(t * B + b);
  }
  return out;
}

Tensor3 Seq2SeqPass::attention() const {
  if (!config_.attention) return {};
  const Index B = batch_, T = target_steps_, Ts = source_steps_;
  Tensor3 out(B, T, Ts);
  for (Index t = 0; t < T; ++t) {
    const ConstMatrixMap w(decoder_.attention_weights(t), B, Ts);
    for (Index b = 0; b < B; ++b) out.view()[b].row(t) = w.row(b);
  }
  return out;
}

void Seq2SeqPass::backward(const Matrix& dlogits, float* gradients) {
  const Seq2Seq::Parameters& p = parameters_;
  const auto top = decoder_.top_outputs();
  accumulate_weight_gradient(dlogits, top, p.matrix(gradients, p.dense_weight),
                             p.vector(gradients, p.dense_bias).data());
  const Matrix d_top = matmul(dlogits, p.matrix(weights_, p.dense_weight));

  const DecoderRun::Gradients d = decoder_.backward(d_top, gradients);
  embedding_backward(target_ids_.data(), static_cast<Index>(target_ids_.size()), d.d_embeddings,
                     p.matrix(gradients, p.decoder_embedding));

  const GruGradients e = encoder_.gru.backward(
      time_major_view(d.d_encoder_outputs, source_steps_, batch_), d.d_encoder_states.view());
  for (size_t l = 0; l < e.layers.size(); ++l) {
    const auto& ids = p.encoder_rnn[l];
    p.matrix(gradients, ids[0]) += e.layers[l].dweight_ih;
    p.matrix(gradients, ids[1]) += e.layers[l].dweight_hh;
    p.vector(gradients, ids[2]) += e.layers[l].dbias_ih;
    p.vector(gradients, ids[3]) += e.layers[l].dbias_hh;
  }
  embedding_backward(encoder_.ids.data(), static_cast<Index>(encoder_.ids.size()),
                     ConstMatrixMap(e.dx.data.data(), e.dx.batch * e.dx.rows, e.dx.cols),
                     p.matrix(gradients, p.encoder_embedding));
}

Seq2SeqTranslation greedy_translate(const Seq2SeqConfig& config, const Seq2Seq::Parameters& p,
                                    TokenBatch src, const int32_t* src_valid_lens,
                                    const Seq2SeqTranslateOptions& options) {
  const float* weights = p.values.data();
  const Index B = src.batch, Ts = src.steps, T = options.max_len;
  GruEncoderRun encoder(config, p, weights, src, /*training=*/false, 0);
  DecoderRun decoder(config, p, weights, encoder.outputs, encoder.states, src_valid_lens, T,
                     /*training=*/false, 0);

  Seq2SeqTranslation out;
  out.batch = B;
  out.max_len = T;
  out.tokens.assign(static_cast<size_t>(B * T), options.eos);
  out.lengths.assign(static_cast<size_t>(B), static_cast<int32_t>(T));
  if (config.attention) out.attention = Tensor3(B, T, Ts);
  std::vector<bool> finished(static_cast<size_t>(B), false);
  std::vector<int32_t> current(static_cast<size_t>(B), options.bos);
  const auto embedding_weight = p.matrix(weights, p.decoder_embedding);
  for (Index t = 0; t < T; ++t) {
    const Matrix embedded = embedding(embedding_weight, current.data(), B, "bos");
    decoder.step(t, embedded.data());
    const Matrix logits = dense(p, weights, ConstMatrixMap(decoder.top(t), B, config.num_hiddens));
    for (Index b = 0; b < B; ++b) {
      Index best = 0;
      logits.row(b).maxCoeff(&best);  // the first of equal maxima, as torch.argmax
      current[static_cast<size_t>(b)] = static_cast<int32_t>(best);
      if (finished[static_cast<size_t>(b)]) continue;
      out.tokens[static_cast<size_t>(b * T + t)] = static_cast<int32_t>(best);
      if (config.attention) {
        out.attention.view()[b].row(t) = ConstMatrixMap(decoder.attention_weights(t), B, Ts).row(b);
      }
      if (best == options.eos) {
        finished[static_cast<size_t>(b)] = true;
        out.lengths[static_cast<size_t>(b)] = static_cast<int32_t>(t + 1);
      }
    }
  }
  return out;
}

}  // namespace attn::detail
