// The one binding into the core's internals: web/lib/relaxed.js hands over the relaxed-SIMD
// module's bytes (relaxed_kernels.hpp installs them), and web/lib/index.js reads the names of
// the kernel table's loops for attn.microkernels.

#include "kernels/kernel_table.hpp"

#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "relaxed_kernels.hpp"

namespace {

// Call once, right after the module loads and before the thread count is set.
void installRelaxedKernels(uintptr_t bytes, size_t size) {
  binding::install_relaxed_kernels(reinterpret_cast<const unsigned char*>(bytes), size);
}

// The kernel table's loops by name, comma-separated, in the list's order (web/lib adds the
// instruction set).
std::string kernelVariants() {
  std::string names;
#define ATTN_VARIANT_NAME(member, loop, name) names += names.empty() ? name : "," name;
  ATTN_KERNEL_VARIANTS(ATTN_VARIANT_NAME)
#undef ATTN_VARIANT_NAME
  return names;
}

}  // namespace

EMSCRIPTEN_BINDINGS(kernel_table) {
  emscripten::function("installRelaxedKernels", &installRelaxedKernels);
  emscripten::function("kernelVariants", &kernelVariants);
}
