#include "attn/seq2seq.hpp"

#include <cmath>
#include <string>

#include "attn/cross_entropy.hpp"
#include "attn/embedding.hpp"
#include "checks.hpp"
#include "models/model_inputs.hpp"
#include "models/seq2seq_parameters.hpp"
#include "models/seq2seq_pass.hpp"
#include "models/trainable_model.hpp"
#include "state_dict_match.hpp"

namespace attn {

namespace {

const Seq2SeqConfig& checked(const Seq2SeqConfig& c) {
  detail::check_sizes({{"src_vocab_size", c.src_vocab_size},
                       {"tgt_vocab_size", c.tgt_vocab_size},
                       {"embed_size", c.embed_size},
                       {"num_hiddens", c.num_hiddens},
                       {"num_layers", c.num_layers}},
                      c.dropout);
  return c;
}

// d2l's current Seq2SeqEncoder wraps nn.GRU in d2l.GRU, whose parameters read
// "encoder.rnn.rnn.weight_ih_l0": the same tensor as "encoder.rnn.weight_ih_l0".
std::string canonical_name(const std::string& name) {
  for (const char* module : {"encoder.rnn.rnn.", "decoder.rnn.rnn."}) {
    const std::string prefix(module);
    if (name.compare(0, prefix.size(), prefix) == 0) {
      return prefix.substr(0, prefix.size() - 4) + name.substr(prefix.size());
    }
  }
  return name;
}

}  // namespace

detail::Seq2SeqParameters::Seq2SeqParameters(const Seq2SeqConfig& c) {
  const Index E = c.embed_size, H = c.num_hiddens, L = c.num_layers;
  encoder_embedding = add("encoder.embedding.weight", {c.src_vocab_size, E});
  encoder_rnn = add_gru("encoder.rnn.", E, H, L);
  if (c.attention) {  // d2l's AdditiveAttention registers W_k, W_q, w_v in that order
    attention_w_k = add("decoder.attention.W_k.weight", {H, H});
    attention_w_q = add("decoder.attention.W_q.weight", {H, H});
    attention_w_v = add("decoder.attention.w_v.weight", {1, H});
  }
  decoder_embedding = add("decoder.embedding.weight", {c.tgt_vocab_size, E});
  decoder_rnn = add_gru("decoder.rnn.", E + H, H, L);
  dense_weight = add("decoder.dense.weight", {c.tgt_vocab_size, H});
  dense_bias = add("decoder.dense.bias", {c.tgt_vocab_size});
  allocate();

  detail::Initializer init(c.seed);
  for (size_t id = 0; id < specs.size(); ++id) {
    const ParameterSpec& spec = specs[id];
    float* w = values.data() + offsets[id];
    const Index n = detail::element_count(spec.shape);
    const bool gru = spec.name.find(".rnn.") != std::string::npos;
    if (detail::ends_with(spec.name, "embedding.weight")) {
      init.normal(w, n);  // nn.Embedding
    } else if (gru && spec.name.find(".weight_") != std::string::npos) {
      // init_seq2seq: xavier_uniform_, bound sqrt(6 / (fan_in + fan_out)).
      init.uniform(w, n, std::sqrt(6.0 / static_cast<double>(spec.shape[0] + spec.shape[1])));
    } else if (gru) {
      init.uniform(w, n, 1.0 / std::sqrt(static_cast<double>(H)));  // nn.GRU's biases
    } else {
      // nn.Linear's reset_parameters: kaiming_uniform_(a = sqrt(5)) for the weight and the
      // bias's U(+-1/sqrt(fan_in)) share the bound 1/sqrt(in).
      init.uniform(w, n, 1.0 / std::sqrt(static_cast<double>(H)));
    }
  }
}

std::vector<Seq2Seq::Parameters::GruIds> Seq2Seq::Parameters::add_gru(const std::string& prefix,
                                                                      Index input, Index hidden,
                                                                      Index layers) {
  std::vector<GruIds> out;
  for (Index l = 0; l < layers; ++l) {
    const std::string k = "_l" + std::to_string(l);
    const Index in = l == 0 ? input : hidden;
    out.push_back({add(prefix + "weight_ih" + k, {3 * hidden, in}),
                   add(prefix + "weight_hh" + k, {3 * hidden, hidden}),
                   add(prefix + "bias_ih" + k, {3 * hidden}),
                   add(prefix + "bias_hh" + k, {3 * hidden})});
  }
  return out;
}

template class TrainableModel<Seq2SeqConfig, detail::Seq2SeqParameters>;

Seq2Seq::Seq2Seq(const Seq2SeqConfig& config) : TrainableModel(checked(config), canonical_name) {}

Seq2SeqOutput Seq2Seq::forward(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                               TokenBatch tgt_input, const Seq2SeqForwardOptions& options) const {
  detail::check_tokens("src", src, -1, config_.src_vocab_size);
  detail::check_lengths(src_valid_lens, src.batch, src.steps);
  detail::check_tokens("tgt_input", tgt_input, src.batch, config_.tgt_vocab_size);
  const detail::Seq2SeqPass pass(config_, *parameters_, parameters_->values.data(), src,
                                 src_valid_lens.data(), tgt_input, options.training,
                                 options.dropout_seed);
  return {pass.batch_major_logits(), pass.attention()};
}

namespace {

// The loss of one pass, its gradients added into `gradients` (laid out like the parameters).
float loss_into(const Seq2SeqConfig& config, const Seq2Seq::Parameters& p, TokenBatch src,
                const std::vector<int32_t>& lens, TokenBatch tgt_input, TokenBatch tgt_output,
                int32_t pad, bool training, uint64_t dropout_seed, float* gradients) {
  detail::check_tokens("src", src, -1, config.src_vocab_size);
  detail::check_lengths(lens, src.batch, src.steps);
  detail::check_tokens("tgt_input", tgt_input, src.batch, config.tgt_vocab_size);
  detail::check_tokens("tgt_output", tgt_output, src.batch, config.tgt_vocab_size);
  detail::require_shape("tgt_output", {tgt_input.batch, tgt_input.steps},
                        {tgt_output.batch, tgt_output.steps});
  const std::vector<int32_t> labels = detail::time_major(tgt_output);
  detail::Seq2SeqPass pass(config, p, p.values.data(), src, lens.data(), tgt_input, training,
                           dropout_seed);
  const CrossEntropyResult loss =
      masked_cross_entropy(pass.logits(), labels.data(), pad, true, "tgt_output");
  pass.backward(loss.dlogits, gradients);
  return loss.loss;
}

}  // namespace

Seq2SeqLoss Seq2Seq::loss_and_gradients(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                                        TokenBatch tgt_input, TokenBatch tgt_output,
                                        const Seq2SeqLossOptions& options) {
  std::vector<float> gradients = zero_gradients();
  const uint64_t seed = options.dropout_seed ? *options.dropout_seed : next_dropout_seed();
  const float loss = loss_into(config_, *parameters_, src, src_valid_lens, tgt_input, tgt_output,
                               options.pad, options.training, seed, gradients.data());
  return {loss, parameters_->named(gradients.data())};
}

float Seq2Seq::train_step(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                          TokenBatch tgt_input, TokenBatch tgt_output,
                          const Seq2SeqTrainOptions& options) {
  detail::check_train_options(options);
  std::vector<float> gradients = zero_gradients();
  const uint64_t seed = options.dropout_seed ? *options.dropout_seed : next_dropout_seed();
  const float loss = loss_into(config_, *parameters_, src, src_valid_lens, tgt_input, tgt_output,
                               options.pad, /*training=*/true, seed, gradients.data());
  clipped_adam_step(gradients, options.lr, options.clip);
  return loss;
}

Seq2SeqTranslation Seq2Seq::translate(TokenBatch src, const std::vector<int32_t>& src_valid_lens,
                                      const Seq2SeqTranslateOptions& options) const {
  detail::check_tokens("src", src, -1, config_.src_vocab_size);
  detail::check_lengths(src_valid_lens, src.batch, src.steps);
  detail::check_greedy_options(options, config_.tgt_vocab_size);
  return detail::greedy_translate(config_, *parameters_, src, src_valid_lens.data(), options);
}

}  // namespace attn
