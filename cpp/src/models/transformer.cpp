#include "attn/transformer.hpp"

#include <string>

#include "attn/cross_entropy.hpp"
#include "checks.hpp"
#include "models/model_inputs.hpp"
#include "models/trainable_model.hpp"
#include "models/transformer_parameters.hpp"
#include "models/transformer_pass.hpp"

namespace attn {

namespace {

const TransformerConfig& checked(const TransformerConfig& c) {
  detail::check_sizes({{"src_vocab_size", c.src_vocab_size},
                       {"tgt_vocab_size", c.tgt_vocab_size},
                       {"num_hiddens", c.num_hiddens},
                       {"ffn_num_hiddens", c.ffn_num_hiddens},
                       {"num_heads", c.num_heads},
                       {"num_blks", c.num_blks}},
                      c.dropout);
  if (c.num_hiddens % c.num_heads != 0) {
    detail::fail("num_heads", "a divisor of num_hiddens " + std::to_string(c.num_hiddens),
                 std::to_string(c.num_heads));
  }
  return c;
}

void check_inputs(const TransformerConfig& c, TokenBatch src, const std::vector<int32_t>& lens,
                  TokenBatch tgt_input) {
  detail::check_tokens("src", src, -1, c.src_vocab_size);
  detail::check_lengths(lens, src.batch, src.steps);
  detail::check_tokens("tgt_input", tgt_input, src.batch, c.tgt_vocab_size);
}

// The loss of one pass, its gradients added into `gradients` (laid out like the parameters).
float loss_into(const TransformerConfig& config, const Transformer::Parameters& p, TokenBatch src,
                const std::vector<int32_t>& lens, TokenBatch tgt_input, TokenBatch tgt_output,
                int32_t pad, const detail::DropoutSites& dropout, float* gradients) {
  check_inputs(config, src, lens, tgt_input);
  detail::check_tokens("tgt_output", tgt_output, src.batch, config.tgt_vocab_size);
  detail::require_shape("tgt_output", {tgt_input.batch, tgt_input.steps},
                        {tgt_output.batch, tgt_output.steps});
  const detail::TransformerPass pass(config, p, src, lens.data(), tgt_input, dropout);
  const CrossEntropyResult loss =
      masked_cross_entropy(pass.logits(), tgt_output.data, pad, true, "tgt_output");
  pass.backward(loss.dlogits, gradients);
  return loss.loss;
}

Tensor3 batch_major(const Matrix& rows, Index batch) {
  Tensor3 out(batch, rows.rows() / batch, rows.cols());
  MatrixMap(out.data.data(), rows.rows(), rows.cols()) = rows;
  return out;
}

}  // namespace

template class TrainableModel<TransformerConfig, detail::TransformerParameters>;

Transformer::Transformer(const TransformerConfig& config) : TrainableModel(checked(config)) {}

TransformerOutput Transformer::forward(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                                       TokenBatch tgt_input,
                                       const EncoderDecoderForwardOptions& options) const {
  check_inputs(config_, src, src_valid_lens, tgt_input);
  TransformerOutput out;
  const detail::DropoutSites dropout(config_.dropout, options.training, options.dropout_seed);
  const detail::TransformerPass pass(config_, *parameters_, src, src_valid_lens.data(), tgt_input,
                                     dropout, &out.attention);
  out.logits = batch_major(pass.logits(), src.batch);
  return out;
}

EncoderDecoderLoss Transformer::loss_and_gradients(TokenBatch src,
                                                   const std::vector<int32_t>& src_valid_lens,
                                                   TokenBatch tgt_input, TokenBatch tgt_output,
                                                   const EncoderDecoderLossOptions& options) {
  std::vector<float> gradients = zero_gradients();
  const uint64_t seed = options.dropout_seed ? *options.dropout_seed : next_dropout_seed();
  const detail::DropoutSites dropout(config_.dropout, options.training, seed);
  const float loss = loss_into(config_, *parameters_, src, src_valid_lens, tgt_input, tgt_output,
                               options.pad, dropout, gradients.data());
  return {loss, parameters_->named(gradients.data())};
}

float Transformer::train_step(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                              TokenBatch tgt_input, TokenBatch tgt_output,
                              const EncoderDecoderTrainOptions& options) {
  detail::check_train_options(options);
  std::vector<float> gradients = zero_gradients();
  const uint64_t seed = options.dropout_seed ? *options.dropout_seed : next_dropout_seed();
  const detail::DropoutSites dropout(config_.dropout, /*training=*/true, seed);
  const float loss = loss_into(config_, *parameters_, src, src_valid_lens, tgt_input, tgt_output,
                               options.pad, dropout, gradients.data());
  clipped_adam_step(gradients, options.lr, options.clip);
  return loss;
}

TransformerTranslation Transformer::translate(TokenBatch src,
                                              const std::vector<int32_t>& src_valid_lens,
                                              const GreedyOptions& options) const {
  detail::check_tokens("src", src, -1, config_.src_vocab_size);
  detail::check_lengths(src_valid_lens, src.batch, src.steps);
  detail::check_greedy_options(options, config_.tgt_vocab_size);
  return detail::transformer_translate(config_, *parameters_, src, src_valid_lens.data(), options);
}

}  // namespace attn
