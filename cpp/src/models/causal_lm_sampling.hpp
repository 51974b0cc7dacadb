#pragma once
// The next token of a language model from its logits: greedy, or drawn from the tempered softmax
// restricted as Hugging Face's warpers restrict it (temperature, then top-k, then top-p).

#include <cstdint>

#include "attn/causal_lm.hpp"

namespace attn::detail {

// The token chosen from logits [vocab] with u uniform in [0, 1): at temperature 0 the argmax
// (the first of equal maxima); otherwise a draw from softmax(logits / temperature) over the
// top_k most likely tokens (0: every token), and of those the most likely ones whose
// probabilities before them sum to less than top_p, renormalised.
int32_t sample_token(const float* logits, Index vocab, const GenerateOptions& options, double u);

}  // namespace attn::detail
