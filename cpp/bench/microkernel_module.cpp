// The micro-kernel loop (microkernel_loop.hpp) as a module of its own, built twice: with relaxed
// SIMD's fused multiply-add by clang-16 (relaxed_microkernel.wasm, cmake/relaxed.cmake), which
// scripts/bench/shared/microkernel.js times beside the fused attention that uses the same
// multiply-adds (cpp/relaxed), and with SIMD128's multiply and add by emcc
// (microkernel_simd128.wasm, as the package's SIMD build compiles it), so that
// scripts/bench/engines/engines.js can time both in a browser, with two other forms of the loop
// beside it (microkernel_variants.hpp).

#include "microkernel_loop.hpp"
#include "microkernel_variants.hpp"

extern "C" __attribute__((export_name("microkernel_loop"))) float microkernel_module_loop(
    const float* a, const float* b, attn::Index d, int calls) {
  return microkernel_loop(a, b, d, calls);
}

// Other forms of the same loop (microkernel_variants.hpp), for engines.js --variants.
extern "C" __attribute__((export_name("microkernel_loop_indexed"))) float microkernel_loop_indexed(
    const float* a, const float* b, attn::Index d, int calls) {
  return variants::indexed(a, b, d, calls);
}

extern "C" __attribute__((export_name("microkernel_loop_shuffle"))) float microkernel_loop_shuffle(
    const float* a, const float* b, attn::Index d, int calls) {
  return variants::shuffle(a, b, d, calls);
}
