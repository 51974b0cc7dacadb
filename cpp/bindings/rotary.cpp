// Rotary position embeddings (attn/rotary.hpp) for web/lib/rotary.js, which checks every
// argument and owns the buffers (binding.hpp's TensorArg and Status, as embind.cpp's functions).

#include "attn/rotary.hpp"

#include <emscripten/bind.h>

#include <cstdint>

#include "binding.hpp"

namespace {

using namespace binding;

// x and out: batch * heads matrices [n, d] (out may be x: JS rotates in place). positions:
// positionsCount int32 values in the heap, n or batch * n of them, or none (0, 0) for offset,
// offset + 1, ... dim: the rotating features (JS passes d by default). backward: the rotation by
// the opposite angles (apply_rotary_backward).
Status applyRotary(TensorArg x, int heads, uintptr_t positions, int positionsCount, int offset,
                   float base, int dim, bool interleaved, bool backward, TensorArg out) {
  return guarded([&] {
    attn::RotaryOptions options;
    const auto* first = reinterpret_cast<const int32_t*>(positions);
    if (positionsCount > 0) options.positions.assign(first, first + positionsCount);
    options.offset = offset;
    options.base = base;
    options.dim = dim;
    options.interleaved = interleaved;
    if (backward) {
      attn::apply_rotary_backward(x.in(), heads, options, out.out());
    } else {
      attn::apply_rotary(x.in(), heads, options, out.out());
    }
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(rotary) { emscripten::function("applyRotary", &applyRotary); }
