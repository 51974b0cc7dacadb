#include "kernel_table.hpp"

namespace attn::detail {

namespace {

KernelTable& current() {
  static KernelTable table = builtin_kernel_table();
  return table;
}

}  // namespace

const KernelTable& kernel_table() { return current(); }

void use_kernel_table(const KernelTable& table) { current() = table; }

KernelTable builtin_kernel_table() {
  return {{score_block<1>, score_block<2>}, {pool_block<1>, pool_block<2>}, gemm_panels};
}

}  // namespace attn::detail
