#pragma once
// d2l's PositionWiseFFN on two projections, which may carry packed panels (greedy decoding packs
// its weights once for all its steps); position_wise_ffn is this after its checks.

#include "attn/tensor.hpp"
#include "nn/projection.hpp"

namespace attn::detail {

// relu(dense1(x)), the hidden layer.
Matrix ffn_hidden(const MatrixRef& x, const Projection& dense1);

// dense2(relu(dense1(x))); `hidden`, when non-null, receives the hidden layer.
Matrix feed_forward(const MatrixRef& x, const Projection& dense1, const Projection& dense2,
                    Matrix* hidden = nullptr);

}  // namespace attn::detail
