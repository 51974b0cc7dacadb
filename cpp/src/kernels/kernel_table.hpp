#pragma once
// Where the core finds the loops its matrix products run in (product_loops.hpp): its own by
// default, or, in the wasm package, the same loops compiled with relaxed SIMD's fused
// multiply-add in a module of their own (cpp/relaxed), which emcc's toolchain cannot build into
// the main one (DESIGN.md, toolchain facts). Functions of that module, put in this module's
// function table, are called through these pointers.

#include "product_loops.hpp"

namespace attn::detail {

using ScoreBlockFunction = decltype(&score_block<1>);
using PoolBlockFunction = decltype(&pool_block<1>);
using GemmPanelsFunction = decltype(&gemm_panels);

struct KernelTable {
  ScoreBlockFunction score[2];  // [0] for 1-row tiles, [1] for 2-row tiles
  PoolBlockFunction pool[2];
  GemmPanelsFunction gemm_panels;
};

// The loops the core calls now.
const KernelTable& kernel_table();

// Replaces them, for every later call (the wasm package does it once, while it loads). All must
// come from one compilation, so that a row's result does not depend on its tile's height nor on
// which product computed it.
void use_kernel_table(const KernelTable& table);

// The core's own loops.
KernelTable builtin_kernel_table();

}  // namespace attn::detail
