#pragma once
// Where the core finds the loops its matrix products run in (product_loops.hpp): its own by
// default, or, in the wasm package, the same loops compiled with relaxed SIMD's fused
// multiply-add in a module of their own (cpp/relaxed), which emcc's toolchain cannot build into
// the main one (docs/relaxed-simd.md). Functions of that module, put in this module's
// function table, are called through these pointers.

#include "product_loops.hpp"

namespace attn::detail {

using ScoreBlockFunction = decltype(&score_block<1>);
using PoolBlockFunction = decltype(&pool_block<1>);
using GemmPanelsFunction = decltype(&gemm_panels);
using ModifyScoresFunction = decltype(&modify_scores);
using ExpShiftedSumFunction = decltype(&exp_shifted_sum<kPooledLowest>);

struct KernelTable {
  ScoreBlockFunction score[2];  // [0] for 1-row tiles, [1] for 2-row tiles
  PoolBlockFunction pool[2];
  GemmPanelsFunction gemm_panels;
  ModifyScoresFunction modify_scores;
  ExpShiftedSumFunction exp_shifted_sum;       // weights below 2^-100 of the max are 0
  ExpShiftedSumFunction exp_shifted_sum_full;  // down to float's normal range
};

// The one list of the table's loops: X(member, loop of product_loops.hpp, name). Every place
// that fills, swaps or names the table expands it (kernel_table_of_this_compilation below, the
// wasm binding that installs the relaxed loops, cpp/bindings/relaxed_kernels.cpp, and the one
// that names them, kernelVariants in cpp/bindings/kernel_table.cpp); names are XNNPACK's style,
// element type, loop and tile (rows x columns), and the instruction set is added where the table
// is described (attn.microkernels, web/lib/index.js).
#define ATTN_KERNEL_VARIANTS(X)                                                 \
  X(score[0], score_block<1>, "f32_score_block_1x16")                           \
  X(score[1], score_block<2>, "f32_score_block_2x16")                           \
  X(pool[0], pool_block<1>, "f32_pool_block_1x16")                              \
  X(pool[1], pool_block<2>, "f32_pool_block_2x16")                              \
  X(gemm_panels, gemm_panels, "f32_gemm_panels_2x16")                           \
  X(modify_scores, modify_scores, "f32_modify_scores_1x4")                      \
  X(exp_shifted_sum, exp_shifted_sum<kPooledLowest>, "f32_exp_shifted_sum_1x4") \
  X(exp_shifted_sum_full, exp_shifted_sum<kSoftmaxLowest>, "f32_exp_shifted_sum_full_1x4")

// The list's loops as this translation unit compiled them: the core's own here, the relaxed
// ones in cpp/relaxed (inline, so that each compilation gets its own).
inline KernelTable kernel_table_of_this_compilation() {
  KernelTable table{};
#define ATTN_TABLE_ENTRY(member, loop, name) table.member = &loop;
  ATTN_KERNEL_VARIANTS(ATTN_TABLE_ENTRY)
#undef ATTN_TABLE_ENTRY
  return table;
}

// The loops the core calls now.
const KernelTable& kernel_table();

// Replaces them, for every later call (the wasm package does it once, while it loads). All must
// come from one compilation, so that a row's result does not depend on its tile's height nor on
// which product computed it.
void use_kernel_table(const KernelTable& table);

// The core's own loops.
KernelTable builtin_kernel_table();

}  // namespace attn::detail
