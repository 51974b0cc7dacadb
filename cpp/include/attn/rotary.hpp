#pragma once
// Rotary position embeddings (RoPE; Su et al., "RoFormer", 2021): each pair of features of a
// query or key row is rotated by an angle proportional to the row's position, so that the dot
// product of a rotated query and key depends on their positions only through their difference.
// docs/rotary.md has the two pairings, the formulas and examples.

#include <cstdint>
#include <vector>

#include "attn/tensor.hpp"

namespace attn {

struct RotaryOptions {
  // Empty: the positions offset, offset + 1, ..., offset + n - 1 for every matrix. Otherwise n
  // entries (the same positions for every batch row) or batch * n (row b's n positions at b * n),
  // each >= 0.
  std::vector<int32_t> positions;
  Index offset = 0;  // the first position when `positions` is empty; >= 0
  float base = 10000.0f;
  // The features that rotate: the first `dim` of each row (even, <= d); 0 means all d. The
  // others pass through unchanged, as in GPT-NeoX's partial rotary.
  Index dim = 0;
  // false: pairs (k, k + dim/2), Hugging Face Llama's rotate_half; true: adjacent pairs
  // (2k, 2k + 1), GPT-J's and Meta's original Llama.
  bool interleaved = false;
};

// Rotates x, which holds batch * heads matrices [n, d] back to back (a [B, H, n, d] tensor;
// heads = 1 for [B, n, d]), into out, shaped like x; out may be x itself (not a part of it).
// Pair k < dim/2 of the row at position p turns by the angle p * base^(-2k/dim):
//   half-split:  out[k] = x[k] cos - x[k + dim/2] sin,
//                out[k + dim/2] = x[k + dim/2] cos + x[k] sin
//   interleaved: out[2k] = x[2k] cos - x[2k + 1] sin,
//                out[2k + 1] = x[2k + 1] cos + x[2k] sin
// The angles and their cosines and sines are computed in double (exact to float's rounding for
// positions up to 2^20 and beyond). Throws std::invalid_argument naming heads (not >= 1 or not
// dividing x.batch), out (not shaped like x), dim (odd, negative or > d), positions (neither n
// nor batch * n entries, or one negative), base (not finite and > 0) or offset (negative).
void apply_rotary(ConstBatch x, Index heads, const RotaryOptions& options, MutableBatch out);

// The gradient of apply_rotary: grad (shaped like x) rotated by the opposite angles, which is
// the rotation's transpose and its inverse. Same arguments and errors as apply_rotary.
void apply_rotary_backward(ConstBatch grad, Index heads, const RotaryOptions& options,
                           MutableBatch out);

// apply_rotary into a new tensor shaped like x.
Tensor3 apply_rotary(const Tensor3& x, Index heads, const RotaryOptions& options = {});

}  // namespace attn
