#pragma once
// What every trainable model of the core (Seq2Seq, Transformer, CausalLM) holds and does alike:
// its configuration, its parameters as one flat buffer under a state dict's names
// (models/flat_parameters.hpp), Adam's state across training steps, and the dropout seeds of
// successive training calls. Each model keeps only its passes and its decoding.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/optim.hpp"
#include "attn/state_dict.hpp"

namespace attn {

template <typename Config, typename Parameters>
class TrainableModel {
 public:
  const Config& config() const { return config_; }

  // The state-dict entries, in order, with their shapes.
  const std::vector<ParameterSpec>& parameters() const;
  std::vector<NamedTensor> state_dict() const;

  // All or nothing: every entry parameters() lists exactly once with its shape, and no other.
  // Throws std::invalid_argument naming the entry, leaving the model unchanged. The optimiser's
  // state is kept (as loading into a PyTorch module keeps its optimiser's).
  void load_state_dict(const std::vector<NamedTensor>& entries);

  int64_t optimizer_steps() const { return adam_.steps(); }

 protected:
  // `config` is checked by the model first. `canonical`, when given, maps a state-dict name to
  // the model's own before matching (Seq2Seq reads d2l's other spellings).
  explicit TrainableModel(const Config& config,
                          std::string (*canonical)(const std::string&) = nullptr);
  ~TrainableModel();
  TrainableModel(TrainableModel&&) noexcept;
  TrainableModel& operator=(TrainableModel&&) noexcept;

  // Zeros laid out like the parameters, for a pass's gradients.
  std::vector<float> zero_gradients() const;
  // The end of a training step: the gradients' global norm clipped to clip (when > 0), the
  // tensors of two or more dimensions decayed by 1 - lr * weight_decay (AdamW's decoupled decay,
  // before the update as torch.optim.AdamW applies it), then one Adam step with learning rate lr.
  void clipped_adam_step(std::vector<float>& gradients, float lr, float clip,
                         float weight_decay = 0.0f);
  // The dropout seed of the next training call that is given none: mix(config.seed, calls).
  uint64_t next_dropout_seed();

  Config config_;
  std::unique_ptr<Parameters> parameters_;
  Adam adam_;

 private:
  std::string (*canonical_)(const std::string&);
  uint64_t dropout_calls_ = 0;
};

}  // namespace attn
