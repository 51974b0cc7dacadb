#pragma once
// The relaxed-SIMD loops (cpp/relaxed) in place of the core's, on every thread of a wasm build
// (cpp/bindings/relaxed_kernels.cpp says how). Used by the package's binding (kernel_table.cpp)
// and by the wasm micro-kernel test (tests/cpp/relaxed_setup.cpp).

#include <cstddef>

namespace binding {

// Instantiates the relaxed module (its bytes, copied) on the calling thread, makes the core
// call its loops, and has every pool worker started later install them as it starts. Call once,
// before the thread count is set.
void install_relaxed_kernels(const unsigned char* bytes, size_t size);

}  // namespace binding
