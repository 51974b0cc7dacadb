#include "model_inputs.hpp"

#include <cmath>

#include "attn/embedding.hpp"
#include "checks.hpp"

namespace attn::detail {

void check_tokens(const std::string& name, TokenBatch tokens, Index batch, Index vocab) {
  if (tokens.batch < 1 || tokens.steps < 1 || (batch >= 0 && tokens.batch != batch)) {
    fail(name,
         "shape [" + (batch >= 0 ? std::to_string(batch) : std::string("B >= 1")) + ", T >= 1]",
         shape_string({tokens.batch, tokens.steps}));
  }
  if (!tokens.data) fail(name, "token data", "a null pointer");
  check_token_ids(name, tokens.data, tokens.batch * tokens.steps, vocab);
}

void check_lengths(const std::vector<int32_t>& lens, Index batch, Index steps) {
  require_shape("src_valid_lens", {batch}, {static_cast<Index>(lens.size())});
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0 || lens[b] > steps) {
      fail("src_valid_lens", "lengths in [0, " + std::to_string(steps) + "]",
           std::to_string(lens[b]) + " at index " + std::to_string(b));
    }
  }
}

void check_greedy_options(const GreedyOptions& options, Index vocab) {
  const std::string ids = "a token id in [0, " + std::to_string(vocab) + ")";
  if (options.bos < 0 || options.bos >= vocab) fail("bos", ids, std::to_string(options.bos));
  if (options.eos < 0 || options.eos >= vocab) fail("eos", ids, std::to_string(options.eos));
  if (options.max_len < 1) fail("max_len", "a length >= 1", std::to_string(options.max_len));
}

void check_sizes(std::initializer_list<std::pair<const char*, Index>> sizes, float dropout) {
  for (const auto& [name, value] : sizes) {
    if (value <= 0) fail(name, "a size > 0", std::to_string(value));
  }
  if (!(dropout >= 0.0f && dropout < 1.0f)) {
    fail("dropout", "a probability in [0, 1)", number_string(dropout));
  }
}

bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint64_t mix(uint64_t seed, uint64_t count) {
  uint64_t z = seed ^ (count * 0xD1B54A32D192ED03ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Initializer::uniform(float* w, Index n, double bound) {
  for (Index i = 0; i < n; ++i) {
    w[i] = static_cast<float>((2.0 * random_.next_uniform() - 1.0) * bound);
  }
}

// Box-Muller; 1 - u lies in (0, 1], so the log is finite.
void Initializer::normal(float* w, Index n) {
  constexpr double kTwoPi = 6.283185307179586;
  for (Index i = 0; i < n; ++i) {
    const double u1 = 1.0 - random_.next_uniform(), u2 = random_.next_uniform();
    w[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
  }
}

void Initializer::fill(float* w, Index n, float value) { std::fill(w, w + n, value); }

void check_train_options(const EncoderDecoderTrainOptions& options) {
  require_positive_finite("lr", options.lr);
  if (!(options.clip >= 0.0f && std::isfinite(options.clip))) {
    fail("clip", "a finite number >= 0 (0: no clipping)", number_string(options.clip));
  }
}

}  // namespace attn::detail
