// One step of the fused forward (kernels/fused_attention.cpp, tile_block) on its own: a block of
// 64 queries against a block of 128 keys (the step under a sliding window; unmasked attention has
// taken 512 keys a step since 2026-11-29, after the engines runs that timed this), d = dv = 64,
// unmasked, two query rows at a time, each pair through the score loop (with the rows' max), the
// online-softmax step (the exp of every score, the running max and sum) and the pooling loop.
// Built as a module with no imports (CMakeLists.txt, microkernel_simd128's twin) so that
// scripts/bench/engines/engines.js can time the step and each of its three parts alone in every
// browser, and see which one an engine runs slower than the micro-kernel loop would predict.

#include <cstdint>

#include "kernels/kernel_table.hpp"
#include "kernels/row_kernels.hpp"

namespace {

using attn::Index;

constexpr Index kQueries = 64, kKeys = 128, kDepth = 64;

// The step's operands, laid out as the fused kernel has them: Q row-major, K and V packed.
struct Block {
  float q[kQueries * kDepth];
  float packed_k[kKeys * kDepth];
  float packed_v[kKeys * kDepth];
  float out[kQueries * kDepth];
  float scores[2][kKeys];
  float row_max[kQueries], row_sum[kQueries];
};

Block block;

// The loops are called through a kernel table, as the fused kernel calls them
// (kernel_table.hpp): compiled as functions of their own, not inlined into the step, which
// changes how an engine allocates their registers. Volatile, so that the compiler cannot see
// through it.
attn::detail::KernelTable table = attn::detail::kernel_table_of_this_compilation();
attn::detail::KernelTable* volatile loops = &table;

}  // namespace

// Fills the operands with small deterministic values; returns where the output is, so that the
// caller can read it.
extern "C" __attribute__((export_name("block_init"))) float* block_init() {
  uint32_t state = 1;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  };
  for (float& x : block.q) x = next();
  for (float& x : block.packed_k) x = next() * 0.125f;  // the scale 1/sqrt(d) rides with K
  for (float& x : block.packed_v) x = next();
  for (Index i = 0; i < kQueries; ++i) block.row_max[i] = attn::detail::kNegativeInfinity;
  return block.out;
}

// `reps` steps of the parts in `parts` (1: scores, 2: softmax step, 4: pooling; 7: the whole
// step). Each part alone runs on what the buffers hold from before, so init then one whole step
// first gives every part its real operands.
extern "C" __attribute__((export_name("block_step"))) void block_step(int parts, int reps) {
  using namespace attn::detail;
  for (int rep = 0; rep < reps; ++rep) {
    for (Index i0 = 0; i0 < kQueries; i0 += 2) {
      const float* q[2] = {block.q + i0 * kDepth, block.q + (i0 + 1) * kDepth};
      float* s[2] = {block.scores[0], block.scores[1]};
      float max[2] = {0.0f, 0.0f}, alpha[2] = {1.0f, 1.0f};
      if (parts & 1) loops->score[1](q, block.packed_k, kDepth, kKeys, s, max);
      for (int r = 0; (parts & 2) && r < 2; ++r) {
        alpha[r] = f32_online_softmax_step(s[r], kKeys, max[r], false, block.row_max[i0 + r],
                                           block.row_sum[i0 + r]);
      }
      float* out[2] = {block.out + i0 * kDepth, block.out + (i0 + 1) * kDepth};
      const float* exps[2] = {s[0], s[1]};
      if (parts & 4) loops->pool[1](exps, block.packed_v, kKeys, 0, kKeys, kDepth, alpha, out);
    }
  }
}
