#pragma once
// nn.Embedding: a lookup of rows of a [vocab, dim] weight, and its backward (a scatter-add).

#include <cstdint>
#include <string>

#include "attn/tensor.hpp"

namespace attn {

// Throws std::invalid_argument naming `argument` when ids[i] lies outside [0, vocab): e.g.
// "src: expected token ids in [0, 12), got 15 at index 3".
void check_token_ids(const std::string& argument, const int32_t* ids, Index count, Index vocab);

// weight [vocab, dim], ids [count] -> [count, dim], row i = weight[ids[i]].
// Throws std::invalid_argument (see check_token_ids) for an id out of range.
Matrix embedding(const MatrixRef& weight, const int32_t* ids, Index count,
                 const std::string& argument = "ids");

// Gradient of sum(embedding(weight, ids) * dy) with respect to the weight, added into dweight
// [vocab, dim]: row ids[i] receives dy[i] (a token seen twice receives both rows). The ids are
// those of the forward, already checked.
void embedding_backward(const int32_t* ids, Index count, const MatrixRef& dy,
                        Eigen::Ref<Matrix> dweight);

}  // namespace attn
