// The fused (flash-style) kernel behind scaled dot-product attention: without weights it walks
// the keys in blocks with an online softmax, so these cases are sized to cross its query and
// key blocks, leave odd rows and partial 16-wide tiles, and make the running max move between
// blocks. Each is checked against the double-precision reference, with and without weights
// (with weights each block's exp(s - running max) is kept and normalised at the end of the row).

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "attn/attention.hpp"
#include "reference.hpp"

using attn::AttentionOptions;
using attn::Index;
using attn::Tensor3;

namespace {

struct Case {
  Index batch, nq, nk, d, dv;
};

void check_both_paths(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                      const AttentionOptions& options) {
  std::optional<double> scale;
  if (options.scale) scale = *options.scale;
  const auto expected = ref::scaled_dot_product_attention(ref::to_double(q), ref::to_double(k),
                                                          ref::to_double(v), options.mask, scale);
  const auto fused = attn::scaled_dot_product_attention(q, k, v, options, false);
  ref::check_close(fused.output, expected.output, ref::kSum, "output without weights");
  const auto with_weights = attn::scaled_dot_product_attention(q, k, v, options, true);
  ref::check_close(with_weights.output, expected.output, ref::kSum, "output with weights");
  ref::check_close(with_weights.weights, expected.weights, ref::kTight, "weights");
}

void check_case(const Case& c, const AttentionOptions& options, uint32_t seed) {
  CAPTURE(c.batch, c.nq, c.nk, c.d, c.dv);
  check_both_paths(ref::random_tensor(c.batch, c.nq, c.d, seed),
                   ref::random_tensor(c.batch, c.nk, c.d, seed + 1),
                   ref::random_tensor(c.batch, c.nk, c.dv, seed + 2), options);
}

}  // namespace

TEST_CASE("The fused kernel matches the reference across query and key blocks", "[fused]") {
  // 64 queries and 512 keys per block (128 under a window), 16-wide tiles: sizes on, below and
  // past those edges.
  const Case cases[] = {{1, 1, 1, 1, 1},       {1, 2, 16, 16, 16},    {1, 3, 17, 5, 7},
                        {2, 65, 129, 64, 64},  {1, 130, 300, 24, 33}, {1, 63, 127, 8, 17},
                        {3, 7, 257, 3, 2},     {1, 200, 16, 64, 1},   {2, 9, 513, 8, 5},
                        {1, 70, 1100, 24, 33}, {1, 3, 512, 16, 16}};
  uint32_t seed = 100;
  for (const Case& c : cases) check_case(c, {}, seed += 3);
}

TEST_CASE("The fused kernel honours valid lengths that end inside a later key block", "[fused]") {
  AttentionOptions options;
  options.mask.valid_lens = {700, 1, 513};
  check_case({3, 9, 1100, 16, 20}, options, 200);
  options.mask.valid_lens = {0, 1100, 512};  // an empty row: uniform with d2l's fill
  check_case({3, 9, 1100, 16, 20}, options, 210);
}

TEST_CASE("The fused kernel is causal across blocks", "[fused]") {
  AttentionOptions options;
  options.mask.causal = true;
  check_case({2, 150, 150, 32, 24}, options, 300);
  check_case({1, 600, 600, 16, 8}, options, 310);
}

TEST_CASE("A row masked everywhere is NaN with fill -infinity, also past the first block",
          "[fused]") {
  AttentionOptions options;
  options.mask.valid_lens = {0, 600};
  options.mask.fill = -std::numeric_limits<float>::infinity();
  const Tensor3 q = ref::random_tensor(2, 3, 8, 400);
  const Tensor3 k = ref::random_tensor(2, 600, 8, 401);
  const Tensor3 v = ref::random_tensor(2, 600, 5, 402);
  const auto result = attn::scaled_dot_product_attention(q, k, v, options, false);
  for (Index i = 0; i < 3; ++i) {
    for (Index c = 0; c < 5; ++c) {
      CAPTURE(i, c);
      CHECK(std::isnan(result.output.at(0, i, c)));
      CHECK(std::isfinite(result.output.at(1, i, c)));
    }
  }
}

TEST_CASE(
    "With fill -infinity, keys masked through whole key blocks before the visible ones "
    "leave the row finite",
    "[fused]") {
  // Until a row meets a visible key its running max is -inf, where exp(s - max) is NaN: such
  // blocks must contribute nothing instead. Key padding hides the first 600 keys of batch row 0
  // (past the first 512-key block) and keys 100..1099 of row 1; a bool mask also hides the first
  // 550 keys from every query.
  const Index nk = 1100;
  std::vector<uint8_t> padding(2 * nk, 0);
  for (Index j = 0; j < 600; ++j) padding[static_cast<size_t>(j)] = 1;
  for (Index j = 100; j < nk; ++j) padding[static_cast<size_t>(nk + j)] = 1;
  std::vector<uint8_t> hidden(static_cast<size_t>(5 * nk), 0);
  for (Index i = 0; i < 5; ++i) {
    for (Index j = 0; j < 550; ++j) hidden[static_cast<size_t>(i * nk + j)] = 1;
  }
  AttentionOptions options;
  options.mask.fill = -std::numeric_limits<float>::infinity();
  options.mask.key_padding = padding.data();
  check_case({2, 5, nk, 8, 6}, options, 450);
  options.mask.key_padding = nullptr;
  options.mask.bool_mask = hidden.data();
  options.mask.bool_mask_batch = 1;
  check_case({2, 5, nk, 8, 6}, options, 460);
}

TEST_CASE("Logits that grow block after block are rescaled correctly", "[fused]") {
  // Key j scores about j/4 against every query, so each key block raises the running max by ~128
  // and everything pooled before it must be scaled down by exp(-128) and more; logits reach ~400,
  // where exp overflows float unless the max is subtracted.
  const Index nk = 1600, d = 4;
  Tensor3 q(1, 5, d, 1.0f), k(1, nk, d), v = ref::random_tensor(1, nk, 6, 500);
  for (Index j = 0; j < nk; ++j) {
    for (Index t = 0; t < d; ++t) k.at(0, j, t) = static_cast<float>(j) / 4.0f;
  }
  AttentionOptions options;
  options.scale = 0.25f;
  check_both_paths(q, k, v, options);
}

TEST_CASE("Logits of 1e4 over many blocks stay finite and exact", "[fused]") {
  Tensor3 q = ref::random_tensor(1, 4, 16, 600, -100.0f, 100.0f);
  Tensor3 k = ref::random_tensor(1, 1100, 16, 601, -100.0f, 100.0f);
  const Tensor3 v = ref::random_tensor(1, 1100, 16, 602);
  AttentionOptions options;
  options.scale = 1.0f;  // |q.k| reaches ~1e4: one-hot rows, finite and exact
  const auto expected = ref::scaled_dot_product_attention(ref::to_double(q), ref::to_double(k),
                                                          ref::to_double(v), options.mask, 1.0);
  const auto got = attn::scaled_dot_product_attention(q, k, v, options, false);
  ref::check_close(got.output, expected.output, ref::kSum, "output");
}

TEST_CASE("A query's output is the same bits alone as beside other queries", "[fused]") {
  // Queries go through the kernel two at a time, an odd last one (and a decode step's single
  // query) through a one-row tile: a row's sums must not depend on which tile it lands in.
  const Index nq = 5, nk = 150, d = 24, dv = 20;
  const Tensor3 q = ref::random_tensor(1, nq, d, 400), k = ref::random_tensor(1, nk, d, 401);
  const Tensor3 v = ref::random_tensor(1, nk, dv, 402);
  const auto together = attn::scaled_dot_product_attention(q, k, v, {}, false);
  for (Index i = 0; i < nq; ++i) {
    CAPTURE(i);
    Tensor3 alone(1, 1, d);
    std::copy(q.data.begin() + i * d, q.data.begin() + (i + 1) * d, alone.data.begin());
    const auto single = attn::scaled_dot_product_attention(alone, k, v, {}, false);
    for (Index c = 0; c < dv; ++c) CHECK(single.output.data[c] == together.output.data[i * dv + c]);
  }
}

TEST_CASE("Weights down to 2^-100 of the max count, and only those below it are dropped",
          "[fused][backward]") {
  // The fused forward and backward drop weights below 2^-100 of a row's max (kPooledLowest,
  // product_loops.hpp: a subnormal product costs x86 a microcode assist). Closed forms, d = 1,
  // scale 1: key 0 scores 0 and pools the value 0, keys 1..nk-1 score -gap and pool their index.
  // At gap = 35 (weights e^-35 = 2^-50.5) the output is e^-35 sum(j) / (1 + (nk - 1) e^-35),
  // made of small weights alone, and dV_j = e^-35 / (1 + ...) * dO; at gap = 80 (2^-115.4) they
  // are dropped: output 0 and dV_j = 0 for j > 0 (dropping changes an output by at most
  // nk 2^-100 max|v|).
  const Index nk = 1100;  // past the forward's first key block of 512
  for (const double gap : {35.0, 80.0}) {
    CAPTURE(gap);
    Tensor3 q(1, 1, 1, 1.0f), k(1, nk, 1, static_cast<float>(-gap)), v(1, nk, 1);
    k.data[0] = 0.0f;
    for (Index j = 0; j < nk; ++j) v.data[static_cast<size_t>(j)] = static_cast<float>(j);
    AttentionOptions options;
    options.scale = 1.0f;
    const double weight = std::exp(-gap), denominator = 1.0 + static_cast<double>(nk - 1) * weight;
    const bool kept = gap < 100.0 * std::log(2.0);
    const double sum = static_cast<double>(nk - 1) * static_cast<double>(nk) / 2.0;
    const double output = kept ? weight * sum / denominator : 0.0;
    const auto got = attn::scaled_dot_product_attention(q, k, v, options, false);
    CHECK(got.output.data[0] == Approx(output).epsilon(1e-5).margin(0.0));
    const Tensor3 grad_output(1, 1, 1, 1.0f);
    const auto grads = attn::scaled_dot_product_attention_backward(q, k, v, grad_output, options);
    CHECK(grads.dv.data[0] == Approx(1.0 / denominator).epsilon(1e-6));
    for (const Index j : {Index{1}, Index{600}, nk - 1}) {
      CAPTURE(j);
      CHECK(grads.dv.data[static_cast<size_t>(j)] ==
            Approx(kept ? weight / denominator : 0.0).epsilon(1e-5).margin(0.0));
    }
  }
}
