#include "block_kernels.hpp"

namespace attn::detail {

namespace {

BlockKernels& current() {
  static BlockKernels kernels = builtin_block_kernels();
  return kernels;
}

}  // namespace

const BlockKernels& block_kernels() { return current(); }

void use_block_kernels(const BlockKernels& kernels) { current() = kernels; }

BlockKernels builtin_block_kernels() {
  return {{score_block<1>, score_block<2>}, {pool_block<1>, pool_block<2>}};
}

}  // namespace attn::detail
