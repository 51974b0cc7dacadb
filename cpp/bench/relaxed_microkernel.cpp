// The micro-kernel loop (microkernel_loop.hpp) with relaxed SIMD's fused multiply-add, as a
// module of its own (cmake/relaxed.cmake): scripts/bench/microkernel.js times it beside the
// fused attention that uses the same multiply-adds (cpp/relaxed).

#include "microkernel_loop.hpp"

extern "C" __attribute__((export_name("microkernel_loop"))) float relaxed_microkernel_loop(
    const float* a, const float* b, attn::Index d, int calls) {
  return microkernel_loop(a, b, d, calls);
}
