#pragma once
// A decoder-only language model in the two shapes today's small models take: GPT-2's (learned
// positions, LayerNorm, a GELU MLP, Conv1D weights) and the Llama family's (rotary positions,
// RMSNorm, SwiGLU, grouped-query heads). Pre-norm blocks,
//   x = embed(tokens) (+ wpe[position] with learned positions)
//   per layer:  x = x + attention(norm1(x)),  x = x + mlp(norm2(x))   (no MLP when
//               intermediate_size = 0: an attention-only model)
//   logits = norm_f(x) W_unembed^T   (W_unembed the token embedding when tied, else lm_head),
// with causal scaled dot-product attention of scale 1/sqrt(head_dim) through the fused kernel
// (grouped-query heads, rotary queries and keys, a sliding window). GELU is GPT-2's tanh form;
// SwiGLU is down(silu(gate(x)) * up(x)).
//
// Parameters carry Hugging Face's names and layouts (format Gpt2: GPT2LMHeadModel, Conv1D
// weights [in, out] with q, k, v side by side in c_attn; format Llama: LlamaForCausalLM,
// nn.Linear weights [out, in]), so a checkpoint's state dict loads as it is.
//
// Dropout (dropout > 0, in loss_and_gradients and train_step only), GPT-2's three kinds at one
// rate: on the embeddings (site 0), and in layer l on the attention weights (site 1 + 3l), on
// the attention's output before the residual add (2 + 3l) and on the MLP's (3 + 3l). Each call
// draws a fresh stream s from the model's seed; site k drops from mix(s, k) as attn/dropout.hpp
// says (attention weights numbered as [B, heads, T, T]).

#include <cstdint>
#include <memory>
#include <vector>

#include "attn/encoder_decoder.hpp"
#include "attn/optim.hpp"
#include "attn/state_dict.hpp"
#include "attn/tensor.hpp"
#include "attn/trainable_model.hpp"

namespace attn {

enum class CheckpointFormat { Gpt2, Llama };
enum class PositionKind { Learned, Rotary, None };
enum class NormKind { Layer, Rms };
enum class MlpKind { Gelu, SwiGlu };

struct CausalLMConfig {
  CheckpointFormat format = CheckpointFormat::Gpt2;
  Index vocab_size = 0;
  Index hidden_size = 0;
  Index num_layers = 1;
  Index num_heads = 1;
  Index num_kv_heads = 0;       // 0: num_heads; otherwise a divisor of num_heads
  Index intermediate_size = 0;  // 0: no MLP (attention only)
  Index max_positions = 0;      // learned positions: the table's rows; else 0 (no limit)
  PositionKind positions = PositionKind::Learned;
  float rotary_base = 10000.0f;
  NormKind norm = NormKind::Layer;
  float norm_eps = 1e-5f;
  MlpKind mlp = MlpKind::Gelu;
  bool bias = true;  // biases on the projections (GPT-2) or none (Llama)
  bool tie_embeddings = true;
  Index window = 0;      // > 0: each query sees itself and the window - 1 keys before it
  float dropout = 0.0f;  // in [0, 1): training only, at the sites above
  uint64_t seed = 0;     // the initialisation: GPT-2's, N(0, 0.02^2), the output projections
                         // N(0, (0.02 / sqrt(2 num_layers))^2), biases 0, norms 1 (and 0)

  // The presets: GPT-2's and Llama's shapes with sizes to fill in (vocab_size, hidden_size, ...).
  static CausalLMConfig gpt2();
  static CausalLMConfig llama();
};

struct CausalLMOutput {
  Tensor3 logits;  // [B, T, vocab]
  // One [B * num_heads, T, T] map per layer ([B, num_heads, T, T]) when requested.
  std::vector<Tensor3> attention;
};

struct CausalLMLoss {
  float loss = 0.0f;
  // In state-dict order; a tied model's unembedding gradient is added into the embedding's.
  std::vector<NamedTensor> gradients;
};

// torch.optim.AdamW with decoupled weight decay on the parameters of two or more dimensions
// (matrices and embeddings, nanoGPT's groups), after clip_grad_norm_ when clip > 0.
struct AdamWOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  float clip = 0.0f;
};

struct GenerateOptions {
  Index max_new_tokens = 1;  // >= 0
  // 0: greedy (the most likely token); > 0: a draw from softmax(logits / temperature), limited
  // to the top_k most likely tokens (0: all) and then to the most likely ones whose
  // probabilities before them sum to less than top_p (in (0, 1]), as Hugging Face's warpers do.
  float temperature = 1.0f;
  Index top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;  // the draws: the same seed gives the same tokens
  int32_t eos = -1;   // >= 0: a row ends at its first eos, padded with eos after it
  // Empty, or [num_layers, num_heads] factors on each head's attention weights, as forward()'s
  // head_mask: generation with heads ablated.
  std::vector<float> head_mask;
};

struct Generation {
  Index batch = 0, steps = 0;    // steps = the prompt's T0 + max_new_tokens
  std::vector<int32_t> tokens;   // [batch, steps]: the prompt, then the new tokens
  std::vector<int32_t> lengths;  // [batch]: tokens up to and including the first new eos
};

namespace detail {
struct CausalLMParameters;  // the flat parameter buffer and where each tensor lives in it
class DropoutSites;
}  // namespace detail

class CausalLM : public TrainableModel<CausalLMConfig, detail::CausalLMParameters> {
 public:
  using Parameters = detail::CausalLMParameters;

  // Throws std::invalid_argument naming the field that does not fit.
  explicit CausalLM(const CausalLMConfig& config);

  // The parameters (parameters()) are in Hugging Face's order and names; a tied model's state
  // dict also lists lm_head.weight (the embedding's values), as Hugging Face's does.
  std::vector<NamedTensor> state_dict() const;
  // All or nothing; a tied model accepts lm_head.weight only with the embedding's values.
  // Throws std::invalid_argument naming a missing, extra or mis-shaped entry.
  void load_state_dict(const std::vector<NamedTensor>& entries);

  // tokens [B, T]: ids in [0, vocab_size), T <= max_positions with learned positions.
  // head_mask, empty or [num_layers, num_heads] finite numbers, multiplies each head's attention
  // weights (and so its output) as Hugging Face's head_mask does: 0 ablates a head.
  CausalLMOutput forward(TokenBatch tokens, bool need_attention = false,
                         const std::vector<float>& head_mask = {}) const;

  // tokens [B, T + 1]: the mean next-token cross-entropy of tokens[:, 1:] given tokens[:, :T],
  // targets equal to pad left out (pad < 0: none), and every parameter's gradient; with dropout,
  // as in training (a fresh stream per call).
  CausalLMLoss loss_and_gradients(TokenBatch tokens, int32_t pad = -1);

  // One AdamW step on loss_and_gradients' gradients; returns the loss before the step.
  float train_step(TokenBatch tokens, const AdamWOptions& options, int32_t pad = -1);

  // Continues prompt [B, T0] by max_new_tokens tokens, each layer's keys and values kept in a KV
  // cache (grouped heads, rotary keys, the window), so each new token costs one position's work.
  // Throws std::invalid_argument naming the option or token that does not fit.
  Generation generate(TokenBatch prompt, const GenerateOptions& options) const;

 private:
  // A training call's dropout: a fresh stream when the config drops anything.
  detail::DropoutSites training_dropout();
};

}  // namespace attn
