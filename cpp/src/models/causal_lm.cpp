#include "attn/causal_lm.hpp"

#include <cmath>
#include <string>

#include "attn/cross_entropy.hpp"
#include "checks.hpp"
#include "models/causal_lm_decoder.hpp"
#include "models/causal_lm_parameters.hpp"
#include "models/causal_lm_pass.hpp"
#include "models/dropout_sites.hpp"
#include "models/model_inputs.hpp"
#include "models/trainable_model.hpp"
#include "state_dict_match.hpp"

namespace attn {

namespace {

std::string count(Index n) { return std::to_string(n); }

const CausalLMConfig& checked(const CausalLMConfig& c) {
  detail::check_sizes({{"vocab_size", c.vocab_size},
                       {"hidden_size", c.hidden_size},
                       {"num_layers", c.num_layers},
                       {"num_heads", c.num_heads}},
                      c.dropout);
  if (c.hidden_size % c.num_heads != 0) {
    detail::fail("num_heads", "a divisor of hidden_size " + count(c.hidden_size),
                 count(c.num_heads));
  }
  if (c.num_kv_heads < 0 || (c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads != 0)) {
    detail::fail("num_kv_heads", "0 (num_heads) or a divisor of num_heads " + count(c.num_heads),
                 count(c.num_kv_heads));
  }
  if (c.intermediate_size < 0) {
    detail::fail("intermediate_size", "an integer >= 0 (0: no MLP)", count(c.intermediate_size));
  }
  if (c.window < 0) detail::fail("window", "an integer >= 0 (0: none)", count(c.window));
  detail::require_positive_finite("norm_eps", c.norm_eps);
  // Hugging Face has a name for neither.
  if (c.format == CheckpointFormat::Gpt2 && c.mlp == MlpKind::SwiGlu && c.intermediate_size > 0) {
    detail::fail("mlp", "'gelu' in the gpt2 format (SwiGLU needs the llama format)", "'swiglu'");
  }
  if (c.format == CheckpointFormat::Llama && c.positions == PositionKind::Learned) {
    detail::fail("positions", "'rotary' or 'none' in the llama format", "'learned'");
  }
  if (c.positions == PositionKind::Learned && c.max_positions < 1) {
    detail::fail("max_positions", "an integer >= 1 with learned positions", count(c.max_positions));
  }
  if (c.positions == PositionKind::Rotary) {
    detail::require_positive_finite("rotary_base", c.rotary_base);
    if ((c.hidden_size / c.num_heads) % 2 != 0) {
      detail::fail("num_heads", "an even head_dim (hidden_size / num_heads) with rotary positions",
                   count(c.num_heads) + " heads of " + count(c.hidden_size / c.num_heads));
    }
  }
  return c;
}

void check_tokens(const CausalLMConfig& c, const char* name, TokenBatch tokens, Index steps) {
  detail::check_tokens(name, tokens, -1, c.vocab_size);
  if (c.positions == PositionKind::Learned && steps > c.max_positions) {
    detail::fail(name, "at most max_positions " + count(c.max_positions) + " positions",
                 count(steps));
  }
}

// tokens [B, T + 1] -> the inputs tokens[:, :T] and the targets tokens[:, 1:].
struct NextTokens {
  std::vector<int32_t> inputs, targets;
  TokenBatch batch;
};

NextTokens next_tokens(const CausalLMConfig& c, TokenBatch tokens) {
  if (tokens.steps < 2) {
    detail::fail("tokens", "[B, T + 1] with T >= 1 (inputs and their next tokens)",
                 detail::shape_string({tokens.batch, tokens.steps}));
  }
  const Index steps = tokens.steps - 1;
  check_tokens(c, "tokens", tokens, steps);
  NextTokens out;
  for (Index b = 0; b < tokens.batch; ++b) {
    const int32_t* row = tokens.data + b * tokens.steps;
    out.inputs.insert(out.inputs.end(), row, row + steps);
    out.targets.insert(out.targets.end(), row + 1, row + 1 + steps);
  }
  out.batch = {out.inputs.data(), tokens.batch, steps};
  return out;
}

float loss_into(const CausalLMConfig& c, const CausalLM::Parameters& p, TokenBatch tokens,
                int32_t pad, const detail::DropoutSites& dropout, float* gradients) {
  const NextTokens next = next_tokens(c, tokens);
  const detail::CausalLMPass pass(c, p, next.batch, dropout);
  const CrossEntropyResult loss =
      masked_cross_entropy(pass.logits(), next.targets.data(), pad, true, "tokens");
  pass.backward(loss.dlogits, gradients);
  return loss.loss;
}

void check_adamw(const AdamWOptions& o) {
  detail::require_positive_finite("lr", o.lr);
  if (!(o.weight_decay >= 0.0f && std::isfinite(o.weight_decay))) {
    detail::fail("weight_decay", "a finite number >= 0", detail::number_string(o.weight_decay));
  }
  if (!(o.clip >= 0.0f && std::isfinite(o.clip))) {
    detail::fail("clip", "a finite number >= 0 (0: no clipping)", detail::number_string(o.clip));
  }
}

// Empty, or [num_layers, num_heads] finite numbers.
void check_head_mask(const CausalLMConfig& c, const std::vector<float>& head_mask) {
  if (head_mask.empty()) return;
  const Index layers = c.num_layers, heads = c.num_heads;
  if (static_cast<Index>(head_mask.size()) != layers * heads) {
    detail::fail("head_mask", "[num_layers, num_heads] = " + count(layers * heads) + " numbers",
                 count(static_cast<Index>(head_mask.size())));
  }
  for (size_t i = 0; i < head_mask.size(); ++i) {
    if (!std::isfinite(head_mask[i])) {
      detail::fail("head_mask", "finite numbers",
                   "a non-finite number at layer " + count(static_cast<Index>(i) / heads) +
                       ", head " + count(static_cast<Index>(i) % heads));
    }
  }
}

void check_generate(const CausalLMConfig& c, TokenBatch prompt, const GenerateOptions& o) {
  if (o.max_new_tokens < 0) {
    detail::fail("max_new_tokens", "an integer >= 0", count(o.max_new_tokens));
  }
  check_tokens(c, "prompt", prompt, prompt.steps);
  if (c.positions == PositionKind::Learned && prompt.steps + o.max_new_tokens > c.max_positions) {
    detail::fail("max_new_tokens",
                 "at most max_positions " + count(c.max_positions) + " - the prompt's " +
                     count(prompt.steps) + " positions",
                 count(o.max_new_tokens));
  }
  if (!(o.temperature >= 0.0f && std::isfinite(o.temperature))) {
    detail::fail("temperature", "a finite number >= 0 (0: greedy)",
                 detail::number_string(o.temperature));
  }
  if (o.top_k < 0) detail::fail("top_k", "an integer >= 0 (0: every token)", count(o.top_k));
  check_head_mask(c, o.head_mask);
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) {
    detail::fail("top_p", "a number in (0, 1]", detail::number_string(o.top_p));
  }
  if (o.eos < -1 || o.eos >= c.vocab_size) {
    detail::fail("eos", "a token id in [0, " + count(c.vocab_size) + ") or -1 (none)",
                 std::to_string(o.eos));
  }
}

}  // namespace

CausalLMConfig CausalLMConfig::gpt2() { return {}; }

CausalLMConfig CausalLMConfig::llama() {
  CausalLMConfig c;
  c.format = CheckpointFormat::Llama;
  c.positions = PositionKind::Rotary;
  c.norm = NormKind::Rms;
  c.norm_eps = 1e-6f;
  c.mlp = MlpKind::SwiGlu;
  c.bias = false;
  c.tie_embeddings = false;
  return c;
}

template class TrainableModel<CausalLMConfig, detail::CausalLMParameters>;

CausalLM::CausalLM(const CausalLMConfig& config) : TrainableModel(checked(config)) {}

std::vector<NamedTensor> CausalLM::state_dict() const {
  const Parameters& p = *parameters_;
  std::vector<NamedTensor> entries = TrainableModel::state_dict();
  if (config_.tie_embeddings) {
    NamedTensor unembedding = entries[static_cast<size_t>(p.embedding)];
    unembedding.name = p.unembedding_name;
    entries.push_back(std::move(unembedding));
  }
  return entries;
}

void CausalLM::load_state_dict(const std::vector<NamedTensor>& entries) {
  Parameters& p = *parameters_;
  if (!config_.tie_embeddings) {
    TrainableModel::load_state_dict(entries);
    return;
  }
  // A tied checkpoint may list the unembedding (Hugging Face's state_dict does; its
  // safetensors files do not): it must then be the embedding itself.
  std::vector<NamedTensor> own;
  const NamedTensor* unembedding = nullptr;
  for (const NamedTensor& entry : entries) {
    if (entry.name == p.unembedding_name) {
      unembedding = &entry;
    } else {
      own.push_back(entry);
    }
  }
  const std::string& embedding = p.specs[static_cast<size_t>(p.embedding)].name;
  if (unembedding) {
    for (const NamedTensor& entry : own) {
      if (entry.name == embedding &&
          (entry.shape != unembedding->shape || entry.data != unembedding->data)) {
        detail::fail(p.unembedding_name, "the values of " + embedding + " (tied embeddings)",
                     "other values");
      }
    }
  }
  TrainableModel::load_state_dict(own);
}

CausalLMOutput CausalLM::forward(TokenBatch tokens, bool need_attention,
                                 const std::vector<float>& head_mask) const {
  check_tokens(config_, "tokens", tokens, tokens.steps);
  check_head_mask(config_, head_mask);
  CausalLMOutput out;
  const detail::DropoutSites no_dropout(0.0f, false, 0);
  const detail::CausalLMPass pass(config_, *parameters_, tokens, no_dropout,
                                  need_attention ? &out.attention : nullptr,
                                  head_mask.empty() ? nullptr : head_mask.data());
  out.logits = Tensor3(tokens.batch, tokens.steps, config_.vocab_size);
  MatrixMap(out.logits.data.data(), pass.logits().rows(), pass.logits().cols()) = pass.logits();
  return out;
}

CausalLMLoss CausalLM::loss_and_gradients(TokenBatch tokens, int32_t pad) {
  std::vector<float> gradients = zero_gradients();
  const float loss =
      loss_into(config_, *parameters_, tokens, pad, training_dropout(), gradients.data());
  return {loss, parameters_->named(gradients.data())};
}

detail::DropoutSites CausalLM::training_dropout() {
  // A stream is drawn only when something drops, so a model without dropout keeps its count.
  return {config_.dropout, true, config_.dropout > 0.0f ? next_dropout_seed() : 0};
}

Generation CausalLM::generate(TokenBatch prompt, const GenerateOptions& options) const {
  check_generate(config_, prompt, options);
  return detail::causal_lm_generate(config_, *parameters_, prompt, options);
}

float CausalLM::train_step(TokenBatch tokens, const AdamWOptions& options, int32_t pad) {
  check_adamw(options);
  std::vector<float> gradients = zero_gradients();
  const float loss =
      loss_into(config_, *parameters_, tokens, pad, training_dropout(), gradients.data());
  adam_.set_options({options.beta1, options.beta2, options.eps});  // checks them
  clipped_adam_step(gradients, options.lr, options.clip, options.weight_decay);
  return loss;
}

}  // namespace attn
