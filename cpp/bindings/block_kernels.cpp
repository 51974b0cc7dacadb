// The one binding into the core's internals: web/lib/relaxed.js hands over the relaxed-SIMD
// block loops (cpp/relaxed), as indices of this module's function table where it has put them.
// In wasm a function pointer is such an index; a call through it checks the function's type, so
// a wrong entry traps instead of running with mismatched arguments.

#include "kernels/block_kernels.hpp"

#include <emscripten/bind.h>

#include <cstdint>

namespace {

using attn::detail::PoolBlockFunction;
using attn::detail::ScoreBlockFunction;

void useBlockKernels(uintptr_t score1, uintptr_t score2, uintptr_t pool1, uintptr_t pool2) {
  attn::detail::use_block_kernels(
      {{reinterpret_cast<ScoreBlockFunction>(score1), reinterpret_cast<ScoreBlockFunction>(score2)},
       {reinterpret_cast<PoolBlockFunction>(pool1), reinterpret_cast<PoolBlockFunction>(pool2)}});
}

}  // namespace

EMSCRIPTEN_BINDINGS(block_kernels) { emscripten::function("useBlockKernels", &useBlockKernels); }
