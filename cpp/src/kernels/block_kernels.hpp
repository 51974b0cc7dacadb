#pragma once
// Where the fused forward finds its block loops (attention_blocks.hpp): the core's own by
// default, or, in the wasm package, the same loops compiled with relaxed SIMD's fused
// multiply-add in a module of their own (cpp/relaxed), which emcc's toolchain cannot build into
// the main one (DESIGN.md, toolchain facts). Hence flat signatures: pointers and integers only,
// the row pointers passed as arrays, so that a function of another wasm instance, put in this
// module's function table, can be called through them.

#include "attention_blocks.hpp"

namespace attn::detail {

using ScoreBlockFunction = decltype(&score_block<1>);
using PoolBlockFunction = decltype(&pool_block<1>);

// One entry per tile height: [0] for 1-row tiles, [1] for 2-row tiles.
struct BlockKernels {
  ScoreBlockFunction score[2];
  PoolBlockFunction pool[2];
};

// The loops the fused forward calls now.
const BlockKernels& block_kernels();

// Replaces them, for every later call (the wasm package does it once, while it loads). Both tile
// heights must come from one compilation, so that a row's result does not depend on whether it
// had a partner.
void use_block_kernels(const BlockKernels& kernels);

// The core's own loops.
BlockKernels builtin_block_kernels();

}  // namespace attn::detail
