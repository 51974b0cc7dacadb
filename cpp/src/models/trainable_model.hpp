#pragma once
// TrainableModel's members (attn/trainable_model.hpp), for the file of each model to instantiate
// with its complete Parameters type.

#include "attn/trainable_model.hpp"
#include "models/model_inputs.hpp"

namespace attn {

template <typename Config, typename Parameters>
TrainableModel<Config, Parameters>::TrainableModel(const Config& config,
                                                   std::string (*canonical)(const std::string&))
    : config_(config),
      parameters_(std::make_unique<Parameters>(config_)),
      adam_(std::vector<Index>{parameters_->total}),
      canonical_(canonical) {}

template <typename Config, typename Parameters>
TrainableModel<Config, Parameters>::~TrainableModel() = default;
template <typename Config, typename Parameters>
TrainableModel<Config, Parameters>::TrainableModel(TrainableModel&&) noexcept = default;
template <typename Config, typename Parameters>
TrainableModel<Config, Parameters>& TrainableModel<Config, Parameters>::operator=(
    TrainableModel&&) noexcept = default;

template <typename Config, typename Parameters>
const std::vector<ParameterSpec>& TrainableModel<Config, Parameters>::parameters() const {
  return parameters_->specs;
}

template <typename Config, typename Parameters>
std::vector<NamedTensor> TrainableModel<Config, Parameters>::state_dict() const {
  return parameters_->named(parameters_->values.data());
}

template <typename Config, typename Parameters>
void TrainableModel<Config, Parameters>::load_state_dict(const std::vector<NamedTensor>& entries) {
  parameters_->load(entries, canonical_);
}

template <typename Config, typename Parameters>
std::vector<float> TrainableModel<Config, Parameters>::zero_gradients() const {
  return std::vector<float>(parameters_->values.size(), 0.0f);
}

template <typename Config, typename Parameters>
void TrainableModel<Config, Parameters>::clipped_adam_step(std::vector<float>& gradients, float lr,
                                                           float clip, float weight_decay) {
  Parameters& p = *parameters_;
  const Index total = p.total;
  if (clip > 0.0f) clip_grad_norm({{gradients.data(), total}}, clip);
  if (weight_decay > 0.0f) {
    const float keep = 1.0f - lr * weight_decay;
    for (size_t id = 0; id < p.specs.size(); ++id) {
      if (p.specs[id].shape.size() >= 2) p.vector(p.values.data(), static_cast<Index>(id)) *= keep;
    }
  }
  adam_.step({{p.values.data(), total}}, {{gradients.data(), total}}, lr);
}

template <typename Config, typename Parameters>
uint64_t TrainableModel<Config, Parameters>::next_dropout_seed() {
  return detail::mix(config_.seed, ++dropout_calls_);
}

}  // namespace attn
