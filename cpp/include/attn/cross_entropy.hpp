#pragma once
// Cross-entropy over logits with a padding label left out: d2l's Seq2Seq.loss,
//   l_i = logsumexp(logits_i) - logits_i[labels_i],   loss = sum_i l_i m_i / sum_i m_i,
// m_i = (labels_i != pad): the mean over the non-pad positions of the whole batch.

#include <cstdint>

#include "attn/tensor.hpp"

namespace attn {

struct CrossEntropyResult {
  float loss = 0.0f;
  Index count = 0;  // positions counted (labels other than pad)
  Matrix dlogits;   // d loss / d logits [N, V] when requested (0 on pad rows), else empty
};

// logits [N, V], labels [N] (each in [0, V)). A pad outside [0, V) leaves nothing out.
// Throws std::invalid_argument naming `argument` for a label out of range, or when every label
// is pad (the mean of nothing: d2l would return NaN).
CrossEntropyResult masked_cross_entropy(const MatrixRef& logits, const int32_t* labels, int32_t pad,
                                        bool need_gradient, const char* argument = "labels");

}  // namespace attn
