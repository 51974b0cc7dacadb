// For the wasm micro-kernel test (scripts/test-wasm-microkernels.sh): with ATTN_RELAXED_MODULE
// naming the relaxed-SIMD module, the kernel table takes its loops before any test runs, as the
// package does when it loads (cpp/bindings/relaxed_kernels.hpp), so that the same tests check
// the relaxed variants. Without it, the core's own loops.

#include <emscripten.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "relaxed_kernels.hpp"

namespace {

// The module's size (0 when ATTN_RELAXED_MODULE is not set), then its bytes.
EM_JS(int, relaxed_module_size, (), {
  var path = process.env.ATTN_RELAXED_MODULE;
  return path ? require('fs').statSync(path).size : 0;
});
EM_JS(void, read_relaxed_module, (unsigned char* into, int size), {
  HEAPU8.set(require('fs').readFileSync(process.env.ATTN_RELAXED_MODULE).subarray(0, size), into);
});

[[maybe_unused]] const bool installed = [] {
  const int size = relaxed_module_size();
  if (size == 0) return false;
  std::vector<unsigned char> bytes(static_cast<size_t>(size));
  read_relaxed_module(bytes.data(), size);
  binding::install_relaxed_kernels(bytes.data(), bytes.size());
  if (attn::detail::kernel_table().gemm_panels ==
      attn::detail::builtin_kernel_table().gemm_panels) {
    std::fputs("relaxed_setup: the kernel table still holds the core's loops\n", stderr);
    std::abort();
  }
  return true;
}();

}  // namespace
