#pragma once

#include "attn/tensor.hpp"

namespace attn {

// Sinusoidal positional encoding [n, d]: P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(same).
// Throws std::invalid_argument if n or d is negative.
Matrix positional_encoding(Index n, Index d);

}  // namespace attn
