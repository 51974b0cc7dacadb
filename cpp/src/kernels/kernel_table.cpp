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

KernelTable builtin_kernel_table() { return kernel_table_of_this_compilation(); }

}  // namespace attn::detail
