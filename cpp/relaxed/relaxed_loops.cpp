// The loops of the core's matrix products (kernels/product_loops.hpp) compiled with relaxed
// SIMD, so that the micro-kernel's multiply-adds become f32x4.relaxed_madd (one fused
// instruction on CPUs with FMA). Built by clang-16 and wasm-ld-16 alone (cmake/relaxed.cmake)
// into a module that imports the main module's memory and has no data of its own. Its one
// export fills a kernel table (kernels/kernel_table.hpp) with its own loops, as indices of its
// own function table (exported too): cpp/bindings/relaxed_kernels.cpp moves them into the main
// module's table on every thread.

#include "kernels/kernel_table.hpp"

extern "C" __attribute__((export_name("kernel_table"))) void kernel_table(
    attn::detail::KernelTable* out) {
  *out = attn::detail::kernel_table_of_this_compilation();
}
