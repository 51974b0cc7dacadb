// The seam the wasm package uses to put its relaxed-SIMD loops in place of the core's
// (kernels/block_kernels.hpp): once installed, loops given to use_block_kernels are the ones the
// fused forward calls, for each tile height as the rows fall, and the core's own loops come back
// when they are reinstalled. The loops here count their calls and forward to the core's, so the
// output must also stay the same bits.

#include <catch2/catch.hpp>

#include "attn/attention.hpp"
#include "kernels/block_kernels.hpp"
#include "reference.hpp"

using attn::Index;
using attn::detail::BlockKernels;

namespace {

int score_calls[2], pool_calls[2];

template <int Rows>
void counting_score(const float* const* q, const float* packed, Index d, Index len, float* const* s,
                    float* max) {
  ++score_calls[Rows - 1];
  attn::detail::score_block<Rows>(q, packed, d, len, s, max);
}

template <int Rows>
void counting_pool(const float* const* p, const float* packed_v, Index stride, Index j0, Index len,
                   Index dv, const float* alpha, float* const* out) {
  ++pool_calls[Rows - 1];
  attn::detail::pool_block<Rows>(p, packed_v, stride, j0, len, dv, alpha, out);
}

// Puts the core's loops back however the test ends.
struct RestoreBuiltin {
  ~RestoreBuiltin() { attn::detail::use_block_kernels(attn::detail::builtin_block_kernels()); }
};

}  // namespace

TEST_CASE("The fused forward calls the block loops it is given, per tile height",
          "[fused][block-kernels]") {
  // 5 queries: two 2-row tiles and a 1-row tile; 300 keys: 3 key blocks of 128.
  const attn::Tensor3 q = ref::random_tensor(1, 5, 24, 1);
  const attn::Tensor3 k = ref::random_tensor(1, 300, 24, 2);
  const attn::Tensor3 v = ref::random_tensor(1, 300, 20, 3);
  const attn::Tensor3 before = attn::scaled_dot_product_attention(q, k, v, {}, false).output;

  const RestoreBuiltin restore;
  attn::detail::use_block_kernels(
      {{counting_score<1>, counting_score<2>}, {counting_pool<1>, counting_pool<2>}});
  const attn::Tensor3 counted = attn::scaled_dot_product_attention(q, k, v, {}, false).output;
  CHECK(score_calls[0] == 3);
  CHECK(score_calls[1] == 6);
  CHECK(pool_calls[0] == 3);
  CHECK(pool_calls[1] == 6);
  CHECK(counted.data == before.data);

  attn::detail::use_block_kernels(attn::detail::builtin_block_kernels());
  attn::scaled_dot_product_attention(q, k, v, {}, false);
  CHECK(score_calls[1] == 6);  // no longer called
}
