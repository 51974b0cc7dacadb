// The one binding into the core's internals: web/lib/relaxed.js hands over the relaxed-SIMD
// loops (cpp/relaxed), as indices of this module's function table where it has put them. In
// wasm a function pointer is such an index; a call through it checks the function's type, so a
// wrong entry traps instead of running with mismatched arguments.

#include "kernels/kernel_table.hpp"

#include <emscripten/bind.h>

#include <cstdint>

namespace {

using namespace attn::detail;

void useKernelTable(uintptr_t score1, uintptr_t score2, uintptr_t pool1, uintptr_t pool2,
                    uintptr_t gemm) {
  use_kernel_table(
      {{reinterpret_cast<ScoreBlockFunction>(score1), reinterpret_cast<ScoreBlockFunction>(score2)},
       {reinterpret_cast<PoolBlockFunction>(pool1), reinterpret_cast<PoolBlockFunction>(pool2)},
       reinterpret_cast<GemmPanelsFunction>(gemm)});
}

}  // namespace

EMSCRIPTEN_BINDINGS(kernel_table) { emscripten::function("useKernelTable", &useKernelTable); }
