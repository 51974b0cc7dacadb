// The seam the wasm package uses to put its relaxed-SIMD loops in place of the core's
// (kernels/kernel_table.hpp): once installed, loops given to use_kernel_table are the ones the
// fused forward (for each tile height as the rows fall, and its exp) and the GEMM call, and the
// core's own loops come back when they are reinstalled. The loops here count their calls and
// forward to the core's, so the results must also stay the same bits.

#include <catch2/catch.hpp>

#include "attn/attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/kernel_table.hpp"
#include "reference.hpp"

using attn::Index;

namespace {

int score_calls[2], pool_calls[2], gemm_calls, exp_calls;

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

void counting_gemm(const float* a, Index lda, Index m, Index depth, const float* packed,
                   Index panel_stride, Index n, float* c, Index ldc, bool accumulate) {
  ++gemm_calls;
  attn::detail::gemm_panels(a, lda, m, depth, packed, panel_stride, n, c, ldc, accumulate);
}

float counting_exp(float* s, Index n, float max) {
  ++exp_calls;
  return attn::detail::exp_shifted_sum<attn::detail::kPooledLowest>(s, n, max);
}

// Puts the core's loops back however the test ends.
struct RestoreBuiltin {
  ~RestoreBuiltin() { attn::detail::use_kernel_table(attn::detail::builtin_kernel_table()); }
};

}  // namespace

TEST_CASE("The fused forward and the GEMM call the loops they are given, per tile height",
          "[fused][kernel-table]") {
  // 5 queries: two 2-row tiles and a 1-row tile; 1100 keys: 3 key blocks of 512 (unmasked).
  const attn::Tensor3 q = ref::random_tensor(1, 5, 24, 1);
  const attn::Tensor3 k = ref::random_tensor(1, 1100, 24, 2);
  const attn::Tensor3 v = ref::random_tensor(1, 1100, 20, 3);
  const attn::Tensor3 before = attn::scaled_dot_product_attention(q, k, v, {}, false).output;
  const attn::Matrix product_before = attn::detail::matmul_transposed(q.view()[0], k.view()[0]);

  const RestoreBuiltin restore;
  // The core's loops but the counted ones: a loop added to the table needs no entry here.
  attn::detail::KernelTable counting = attn::detail::builtin_kernel_table();
  counting.score[0] = counting_score<1>;
  counting.score[1] = counting_score<2>;
  counting.pool[0] = counting_pool<1>;
  counting.pool[1] = counting_pool<2>;
  counting.gemm_panels = counting_gemm;
  counting.exp_shifted_sum = counting_exp;
  attn::detail::use_kernel_table(counting);
  const attn::Tensor3 counted = attn::scaled_dot_product_attention(q, k, v, {}, false).output;
  CHECK(score_calls[0] == 3);
  CHECK(score_calls[1] == 6);
  CHECK(pool_calls[0] == 3);
  CHECK(pool_calls[1] == 6);
  CHECK(exp_calls == 15);  // each of the 5 rows, once per key block
  CHECK(counted.data == before.data);
  CHECK(gemm_calls == 0);
  const attn::Matrix product = attn::detail::matmul_transposed(q.view()[0], k.view()[0]);
  CHECK(gemm_calls == 1);
  CHECK(product == product_before);

  attn::detail::use_kernel_table(attn::detail::builtin_kernel_table());
  attn::scaled_dot_product_attention(q, k, v, {}, false);
  attn::detail::matmul_transposed(q.view()[0], k.view()[0]);
  CHECK(score_calls[1] == 6);  // no longer called
  CHECK(gemm_calls == 1);
}
