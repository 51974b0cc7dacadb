// Block skipping in the fused kernels: key blocks whose weights are exactly 0 (hidden by valid
// lengths, causality, key padding or a boolean mask, with the row's max far above the fill) are
// left out. The results must be bit for bit those of the masked computation that runs every
// block (HiddenBlocks::Compute), on shapes that are not multiples of the 16-key tile, the
// 128-key block or the 64-query block; and the rows where skipping would not be exact (a fully
// masked row under d2l's fill, visible scores near the fill) must be computed in full.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/mask.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/seeded_dropout.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Mask;
using attn::Tensor3;
using attn::detail::HiddenBlocks;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Case {
  Index batch, heads, nq, nk, d, dv;
};

// Equal bits, or both NaN; the first difference is reported with its index and both values.
void require_same_bits(const Tensor3& got, const Tensor3& expected, const std::string& what) {
  REQUIRE(got.data.size() == expected.data.size());
  for (size_t t = 0; t < got.data.size(); ++t) {
    const float a = got.data[t], b = expected.data[t];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::memcmp(&a, &b, sizeof a) != 0) {
      FAIL(what << " differs at flat index " << t << ": skipping gives " << a
                << ", computing every block gives " << b);
    }
  }
}

struct Inputs {
  Tensor3 q, k, v, grad;
};

// K and V with kv_heads heads per batch row (0: as many as the queries').
Inputs inputs(const Case& c, uint32_t seed, Index kv_heads = 0) {
  const Index matrices = c.batch * c.heads, kv_matrices = c.batch * (kv_heads ? kv_heads : c.heads);
  return {ref::random_tensor(matrices, c.nq, c.d, seed),
          ref::random_tensor(kv_matrices, c.nk, c.d, seed + 1),
          ref::random_tensor(kv_matrices, c.nk, c.dv, seed + 2),
          ref::random_tensor(matrices, c.nq, c.dv, seed + 3)};
}

// The forward with and without weights, and the backward, skipping and computing every block,
// with the score modifiers and grouped K/V heads of `extras`.
void check_skipping_is_exact(const Case& c, const Mask& mask, uint32_t seed,
                             const attn::detail::FusedExtras& extras = {}) {
  CAPTURE(c.batch, c.heads, c.nq, c.nk, c.d, c.dv, mask.fill, seed, extras.kv_heads);
  attn::validate_mask(mask, c.batch, c.nq, c.nk, c.heads);
  const Inputs in = inputs(c, seed, extras.kv_heads);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
  const Index matrices = c.batch * c.heads;
  for (bool with_weights : {false, true}) {
    CAPTURE(with_weights);
    Tensor3 out[2], weights[2];
    const HiddenBlocks modes[2] = {HiddenBlocks::Skip, HiddenBlocks::Compute};
    for (int m = 0; m < 2; ++m) {
      out[m] = Tensor3(matrices, c.nq, c.dv);
      weights[m] = Tensor3(matrices, c.nq, c.nk);
      const attn::MutableBatch w = weights[m].view();
      attn::detail::attention_fused(in.q.view(), in.k.view(), in.v.view(), scale, mask, c.heads,
                                    attn::detail::Dropout(0.0f, 0), out[m].view(),
                                    with_weights ? &w : nullptr, modes[m], extras);
    }
    require_same_bits(out[0], out[1], "output");
    if (with_weights) require_same_bits(weights[0], weights[1], "weights");
  }
  Tensor3 grads[2][4];
  const HiddenBlocks modes[2] = {HiddenBlocks::Skip, HiddenBlocks::Compute};
  for (int m = 0; m < 2; ++m) {
    Tensor3& dq = grads[m][0] = Tensor3(matrices, c.nq, c.d);
    Tensor3& dk = grads[m][1] = Tensor3(in.k.batch, c.nk, c.d);
    Tensor3& dv = grads[m][2] = Tensor3(in.v.batch, c.nk, c.dv);
    Tensor3& out = grads[m][3] = Tensor3(matrices, c.nq, c.dv);
    const attn::MutableBatch out_view = out.view();
    attn::detail::attention_fused_backward(in.q.view(), in.k.view(), in.v.view(), in.grad.view(),
                                           scale, mask, c.heads, attn::detail::Dropout(0.0f, 0),
                                           dq.view(), dk.view(), dv.view(), &out_view, modes[m],
                                           extras);
  }
  require_same_bits(grads[0][0], grads[1][0], "dq");
  require_same_bits(grads[0][1], grads[1][1], "dk");
  require_same_bits(grads[0][2], grads[1][2], "dv");
  require_same_bits(grads[0][3], grads[1][3], "backward's output");
}

std::vector<int32_t> random_lengths(size_t count, Index nk, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int32_t> length(0, static_cast<int32_t>(nk));
  std::vector<int32_t> lengths(count);
  for (int32_t& len : lengths) len = length(random);
  return lengths;
}

}  // namespace

TEST_CASE("Skipping blocks past the causal diagonal is exact", "[skipping]") {
  for (float fill : {-1e6f, kNegInf}) {
    Mask mask;
    mask.causal = true;
    mask.fill = fill;
    check_skipping_is_exact({2, 1, 301, 301, 24, 20}, mask, 10);
    check_skipping_is_exact({1, 1, 150, 333, 16, 33}, mask, 20);  // nq < nk
    check_skipping_is_exact({1, 2, 333, 150, 8, 5}, mask, 30);    // nq > nk
  }
}

TEST_CASE("Skipping blocks past valid lengths is exact, empty rows included", "[skipping]") {
  for (float fill : {-1e6f, kNegInf}) {
    Mask mask;
    mask.fill = fill;
    // 0: a fully masked row, uniform under -1e6 (every key counts) and NaN under -inf.
    mask.valid_lens = {77, 0, 333, 129, 128};
    check_skipping_is_exact({5, 1, 70, 333, 24, 17}, mask, 40);
    mask.valid_lens = random_lengths(3 * 150, 333, 50);  // one per query
    check_skipping_is_exact({3, 1, 150, 333, 16, 24}, mask, 60);
    mask.valid_lens = {200, 17};  // shared by each batch row's 3 heads
    mask.causal = true;
    check_skipping_is_exact({2, 3, 141, 260, 8, 8}, mask, 70);
  }
}

TEST_CASE("Skipping blocks hidden by key padding or a boolean mask is exact", "[skipping]") {
  const Index nk = 400, nq = 90;
  // Key padding: trailing from 140, a middle run 100..290 that hides the block 128..255 whole,
  // leading 0..260 (blocks before any visible key are computed: the max is unknown then), and
  // none.
  std::vector<uint8_t> padding(static_cast<size_t>(4 * nk), 0);
  for (Index j = 0; j < nk; ++j) {
    padding[static_cast<size_t>(j)] = j >= 140;
    padding[static_cast<size_t>(nk + j)] = j >= 100 && j < 290;
    padding[static_cast<size_t>(2 * nk + j)] = j < 260;
  }
  // A boolean mask that hides random whole key blocks from random rows, and random keys.
  std::mt19937 random(80);
  std::vector<uint8_t> hidden(static_cast<size_t>(4 * nq * nk), 0);
  for (Index row = 0; row < 4 * nq; ++row) {
    for (Index j0 = 0; j0 < nk; j0 += 128) {
      const bool whole = random() % 2 == 0;
      for (Index j = j0; j < std::min(nk, j0 + 128); ++j) {
        hidden[static_cast<size_t>(row * nk + j)] = whole || random() % 5 == 0;
      }
    }
  }
  for (float fill : {-1e6f, kNegInf}) {
    Mask mask;
    mask.fill = fill;
    mask.key_padding = padding.data();
    check_skipping_is_exact({4, 1, nq, nk, 16, 24}, mask, 90);
    mask.bool_mask = hidden.data();
    mask.bool_mask_batch = 4;
    check_skipping_is_exact({4, 1, nq, nk, 16, 24}, mask, 100);
    mask.key_padding = nullptr;
    mask.bool_mask_batch = 1;  // one [nq, nk] mask for every matrix
    check_skipping_is_exact({2, 2, nq, nk, 8, 3}, mask, 110);
  }
}

TEST_CASE("Rows whose visible scores lie near the fill are computed in full", "[skipping]") {
  // An additive mask of -1e6 puts every visible score within a few units of d2l's fill: hidden
  // keys then have weights of order exp(-5), not 0, and no block may be skipped or trimmed.
  const Index nq = 40, nk = 300;
  std::vector<float> additive(static_cast<size_t>(nq * nk), 0.0f);
  for (Index i = 0; i < nq; i += 2) {
    for (Index j = 0; j < nk; ++j) additive[static_cast<size_t>(i * nk + j)] = -1e6f;
  }
  Mask mask;
  mask.additive = additive.data();
  mask.additive_batch = 1;
  mask.valid_lens = {70, 150};
  check_skipping_is_exact({2, 1, nq, nk, 16, 16}, mask, 120);
  mask.valid_lens.clear();
  mask.causal = true;
  check_skipping_is_exact({2, 1, nq, nk, 16, 16}, mask, 130);

  // Hidden keys of the rows near the fill do carry weight (the fill is not far below the max).
  const Tensor3 q = ref::random_tensor(2, nq, 16, 140), k = ref::random_tensor(2, nk, 16, 141);
  const Tensor3 v = ref::random_tensor(2, nk, 16, 142);
  attn::AttentionOptions options;
  options.mask = mask;
  const auto got = attn::scaled_dot_product_attention(q, k, v, options, true);
  for (Index b = 0; b < 2; ++b) {
    for (Index i = 0; i < nq; i += 2) {
      for (Index j = i + 1; j < nk; ++j) {
        CAPTURE(b, i, j);
        REQUIRE(got.weights.at(b, i, j) > 0.0f);
      }
    }
  }
}

TEST_CASE("Skipped key blocks are never read", "[skipping]") {
  // NaN values in keys past a row's valid length reach the output when every block is computed
  // (0 * NaN), and must not when the wholly hidden blocks are skipped: keys 128.. lie in blocks
  // hidden from every row (valid length 50 computes keys up to 64 only).
  const Case c{1, 1, 33, 300, 16, 8};
  Inputs in = inputs(c, 150);
  for (Index j = 128; j < c.nk; ++j) {
    for (Index t = 0; t < c.dv; ++t) in.v.at(0, j, t) = std::numeric_limits<float>::quiet_NaN();
  }
  Mask mask;
  mask.valid_lens = {50};
  const Inputs& input = in;
  Tensor3 skipped(1, c.nq, c.dv), computed(1, c.nq, c.dv);
  attn::detail::attention_fused(input.q.view(), input.k.view(), input.v.view(), 0.25f, mask, 1,
                                attn::detail::Dropout(0.0f, 0), skipped.view(), nullptr,
                                HiddenBlocks::Skip);
  attn::detail::attention_fused(input.q.view(), input.k.view(), input.v.view(), 0.25f, mask, 1,
                                attn::detail::Dropout(0.0f, 0), computed.view(), nullptr,
                                HiddenBlocks::Compute);
  for (size_t t = 0; t < skipped.data.size(); ++t) {
    CAPTURE(t);
    REQUIRE(std::isfinite(skipped.data[t]));
    REQUIRE(std::isnan(computed.data[t]));
  }
}

TEST_CASE("Skipping blocks outside a sliding window is exact", "[skipping][window]") {
  for (float fill : {-1e6f, kNegInf}) {
    Mask mask;
    mask.fill = fill;
    mask.causal = true;
    mask.window_left = 5;  // narrower than a 16-key tile
    check_skipping_is_exact({1, 2, 401, 401, 16, 12}, mask, 200);
    mask.window_left = 150;  // wider than a 128-key block
    check_skipping_is_exact({2, 1, 333, 333, 8, 8}, mask, 210);
    mask.causal = false;
    mask.window_left = 40;
    mask.window_right = 70;
    check_skipping_is_exact({1, 1, 300, 420, 8, 8}, mask, 220);  // nq < nk
    mask.valid_lens = {250, 0};  // one empty row: uniform under -1e6, NaN under -inf
    check_skipping_is_exact({2, 1, 300, 300, 8, 8}, mask, 230);
  }
}

TEST_CASE("Skipping stays exact under score modifiers and grouped K/V heads",
          "[skipping][window]") {
  const float slopes[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
  const float sinks[4] = {0.0f, 2.0f, -1.0f, 30.0f};
  attn::detail::FusedExtras extras;
  extras.kv_heads = 2;
  Mask mask;
  mask.causal = true;
  mask.window_left = 100;
  check_skipping_is_exact({1, 4, 290, 290, 8, 8}, mask, 300, extras);
  extras.modifiers.softcap = 5.0f;
  extras.modifiers.alibi_slopes = slopes;
  extras.modifiers.sinks = sinks;
  check_skipping_is_exact({1, 4, 290, 290, 8, 8}, mask, 310, extras);
  extras.kv_heads = 1;
  mask.window_left = -1;
  mask.valid_lens = {0, 170};
  check_skipping_is_exact({2, 4, 150, 300, 8, 8}, mask, 320, extras);
}

TEST_CASE("Key blocks left of every row's window are never read", "[skipping][window]") {
  // With a window of 20 keys, the block of queries 320..383 sees keys 300.. only: NaN values in
  // keys 0..255 (whole 128-key blocks, and 64-key chunks of the backward, left of every row's
  // window) must not reach its output or gradients when skipped, and do when every block is
  // computed. (The block of queries 256..319 meets key block 128 first, when no max is known.)
  const Case c{1, 1, 364, 364, 8, 8};
  Inputs in = inputs(c, 400);
  for (Index j = 0; j < 256; ++j) {
    for (Index t = 0; t < c.dv; ++t) in.v.at(0, j, t) = std::numeric_limits<float>::quiet_NaN();
  }
  Mask mask;
  mask.causal = true;
  mask.window_left = 20;
  const Index first = 320;  // rows that see no NaN value
  Tensor3 out[2];
  const HiddenBlocks modes[2] = {HiddenBlocks::Skip, HiddenBlocks::Compute};
  for (int m = 0; m < 2; ++m) {
    out[m] = Tensor3(1, c.nq, c.dv);
    attn::detail::attention_fused(in.q.view(), in.k.view(), in.v.view(), 0.25f, mask, 1,
                                  attn::detail::Dropout(0.0f, 0), out[m].view(), nullptr, modes[m]);
  }
  for (Index i = first; i < c.nq; ++i) {
    CAPTURE(i);
    REQUIRE(std::isfinite(out[0].at(0, i, 0)));
    REQUIRE(std::isnan(out[1].at(0, i, 0)));
  }
  // The backward's strip of 64 queries from 320 starts its keys at chunk 256.
  Tensor3 dq(1, c.nq, c.d), dk(1, c.nk, c.d), dv(1, c.nk, c.dv);
  attn::detail::attention_fused_backward(in.q.view(), in.k.view(), in.v.view(), in.grad.view(),
                                         0.25f, mask, 1, attn::detail::Dropout(0.0f, 0), dq.view(),
                                         dk.view(), dv.view(), nullptr);
  for (Index i = 320; i < c.nq; ++i) {
    CAPTURE(i);
    REQUIRE(std::isfinite(dq.at(0, i, 0)));
  }
}
