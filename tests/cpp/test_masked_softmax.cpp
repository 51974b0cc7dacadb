// Masked softmax over scores [B, nq, nk]: valid lengths, boolean, causal, additive and key
// padding masks.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/softmax.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Mask;
using attn::Tensor3;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("d2l's example: one valid length per batch row hides the keys past it",
          "[masked_softmax]") {
  // masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))
  const Tensor3 scores = ref::random_tensor(2, 2, 4, 1, 0.0f, 1.0f);
  Mask mask;
  mask.valid_lens = {2, 3};
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  for (Index i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(p.at(0, i, 2) == 0.0f);
    CHECK(p.at(0, i, 3) == 0.0f);
    CHECK(p.at(1, i, 3) == 0.0f);
    CHECK(p.at(0, i, 0) > 0.0f);
    CHECK(p.at(1, i, 2) > 0.0f);
  }
  ref::check_rows_sum_to_one(p);
}

TEST_CASE("d2l's example: one valid length per query [B, nq]", "[masked_softmax]") {
  // masked_softmax(torch.rand(2, 2, 4), torch.tensor([[1, 3], [2, 4]]))
  const Tensor3 scores = ref::random_tensor(2, 2, 4, 2, 0.0f, 1.0f);
  Mask mask;
  mask.valid_lens = {1, 3, 2, 4};
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  CHECK(p.at(0, 0, 0) == 1.0f);
  for (Index j = 1; j < 4; ++j) CHECK(p.at(0, 0, j) == 0.0f);
  CHECK(p.at(0, 1, 3) == 0.0f);
  CHECK(p.at(1, 0, 2) == 0.0f);
  CHECK(p.at(1, 0, 3) == 0.0f);
  for (Index j = 0; j < 4; ++j) CHECK(p.at(1, 1, j) > 0.0f);
  ref::check_rows_sum_to_one(p);
}

TEST_CASE("Masked weights are exactly zero even when their scores are the largest",
          "[masked_softmax]") {
  Tensor3 scores = ref::random_tensor(3, 4, 6, 3);
  for (Index b = 0; b < 3; ++b)
    for (Index i = 0; i < 4; ++i) scores.at(b, i, 5) = 50.0f;  // would dominate if visible
  Mask mask;
  mask.valid_lens = {5, 1, 3};
  const Tensor3 p = attn::masked_softmax(scores, mask);
  for (Index b = 0; b < 3; ++b)
    for (Index i = 0; i < 4; ++i)
      for (Index j = mask.valid_lens[static_cast<size_t>(b)]; j < 6; ++j) {
        CAPTURE(b, i, j);
        CHECK(p.at(b, i, j) == 0.0f);
      }
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
}

TEST_CASE("A valid length of 0 with the default fill -1e6 gives uniform weights",
          "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 3, 5, 4, -3.0f, 3.0f);
  Mask mask;
  mask.valid_lens = {0, 5};
  REQUIRE(mask.fill == -1e6f);
  const Tensor3 p = attn::masked_softmax(scores, mask);
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 5; ++j) {
      CAPTURE(i, j);
      CHECK_THAT(p.at(0, i, j), Catch::Matchers::WithinRel(0.2, 1e-6));
    }
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
}

TEST_CASE("A valid length of 0 with fill -infinity gives NaN, as in PyTorch", "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 3, 5, 5);
  Mask mask;
  mask.valid_lens = {0, 2};
  mask.fill = -kInf;
  const Tensor3 p = attn::masked_softmax(scores, mask);
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 5; ++j) {
      CAPTURE(i, j);
      CHECK(std::isnan(p.at(0, i, j)));
    }
  // The other batch row is unaffected: masked keys get exactly 0.
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  CHECK(p.at(1, 0, 2) == 0.0f);
}

TEST_CASE("A boolean mask broadcast over the batch hides the positions set to 1",
          "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(3, 3, 5, 6);
  const std::vector<uint8_t> hidden = {0, 1, 0, 0, 1,  //
                                       1, 1, 0, 1, 0,  //
                                       0, 0, 0, 0, 0};
  Mask mask;
  mask.bool_mask = hidden.data();
  mask.bool_mask_batch = 1;
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  for (Index b = 0; b < 3; ++b)
    for (Index i = 0; i < 3; ++i)
      for (Index j = 0; j < 5; ++j)
        if (hidden[static_cast<size_t>(i * 5 + j)]) CHECK(p.at(b, i, j) == 0.0f);
  ref::check_rows_sum_to_one(p);
}

TEST_CASE("A boolean mask with one block per batch row masks each row separately",
          "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 3, 4, 7);
  std::vector<uint8_t> hidden(2 * 3 * 4);
  const auto u = ref::uniform(hidden.size(), 8, 0.0f, 1.0f);
  for (size_t i = 0; i < hidden.size(); ++i) hidden[i] = u[i] < 0.4f;
  for (Index r = 0; r < 6; ++r) hidden[static_cast<size_t>(r * 4 + r % 4)] = 0;  // none empty
  Mask mask;
  mask.bool_mask = hidden.data();
  mask.bool_mask_batch = 2;
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  for (size_t i = 0; i < hidden.size(); ++i)
    if (hidden[i]) CHECK(p.data[i] == 0.0f);
}

TEST_CASE("A causal mask lets query i see only keys j <= i", "[masked_softmax]") {
  for (auto [nq, nk] : {std::pair<Index, Index>{4, 4}, {3, 6}, {5, 2}}) {
    CAPTURE(nq, nk);
    const Tensor3 scores = ref::random_tensor(2, nq, nk, 9);
    Mask mask;
    mask.causal = true;
    const Tensor3 p = attn::masked_softmax(scores, mask);
    ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
    for (Index b = 0; b < 2; ++b)
      for (Index i = 0; i < nq; ++i)
        for (Index j = 0; j < nk; ++j)
          if (j > i) CHECK(p.at(b, i, j) == 0.0f);
    CHECK(p.at(0, 0, 0) == 1.0f);
  }
}

TEST_CASE("An additive mask is added to the scores before the softmax", "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 3, 4, 10);
  std::vector<float> bias = ref::uniform(3 * 4, 11, -2.0f, 2.0f);
  bias[1] = -kInf;  // PyTorch's float masks use -inf to hide a position
  bias[6] = -1e9f;
  Mask mask;
  mask.additive = bias.data();
  mask.additive_batch = 1;
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  CHECK(p.at(0, 0, 1) == 0.0f);
  CHECK(p.at(1, 1, 2) == 0.0f);

  // A bias of log(w) turns equal scores into the distribution w.
  Tensor3 zeros(1, 1, 3);
  const std::vector<float> log_w = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
  Mask log_mask;
  log_mask.additive = log_w.data();
  log_mask.additive_batch = 1;
  const Tensor3 w = attn::masked_softmax(zeros, log_mask);
  ref::check_close(w, [] {
    ref::Batch e(1, 1, 3);
    e.v = {0.5, 0.25, 0.25};
    return e;
  }());
}

TEST_CASE("An additive mask with one block per batch row is added row by row", "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(3, 2, 5, 12);
  const std::vector<float> bias = ref::uniform(3 * 2 * 5, 13, -3.0f, 3.0f);
  Mask mask;
  mask.additive = bias.data();
  mask.additive_batch = 3;
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
}

TEST_CASE("Key padding hides the padded keys of each batch row", "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 3, 5, 14);
  const std::vector<uint8_t> padding = {0, 0, 0, 1, 1,  //
                                        0, 1, 0, 0, 1};
  Mask mask;
  mask.key_padding = padding.data();
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  for (Index b = 0; b < 2; ++b)
    for (Index i = 0; i < 3; ++i)
      for (Index j = 0; j < 5; ++j)
        if (padding[static_cast<size_t>(b * 5 + j)]) CHECK(p.at(b, i, j) == 0.0f);
  ref::check_rows_sum_to_one(p);
}

TEST_CASE("Combined masks hide a position if any of them hides it", "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 4, 6, 15);
  const std::vector<uint8_t> hidden = {0, 0, 1, 0, 0, 0,  //
                                       0, 0, 0, 0, 0, 1,  //
                                       0, 1, 0, 0, 0, 0,  //
                                       0, 0, 0, 0, 0, 0};
  const std::vector<uint8_t> padding = {0, 0, 0, 0, 0, 1,  //
                                        0, 0, 0, 1, 0, 0};
  const std::vector<float> bias = ref::uniform(4 * 6, 16, -1.0f, 1.0f);
  Mask mask;
  mask.valid_lens = {5, 6};
  mask.bool_mask = hidden.data();
  mask.bool_mask_batch = 1;
  mask.key_padding = padding.data();
  mask.causal = true;
  mask.additive = bias.data();
  mask.additive_batch = 1;
  mask.fill = -kInf;  // with -inf the order of "add" and "replace" cannot matter
  const Tensor3 p = attn::masked_softmax(scores, mask);
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
  // Spot checks, one per mask kind.
  CHECK(p.at(0, 0, 1) == 0.0f);  // causal
  CHECK(p.at(0, 2, 1) == 0.0f);  // bool mask
  CHECK(p.at(1, 3, 3) == 0.0f);  // key padding
  CHECK(p.at(0, 3, 0) > 0.0f);
}

TEST_CASE("Masked softmax with an empty mask is the plain softmax", "[masked_softmax]") {
  const Tensor3 scores = ref::random_tensor(2, 3, 7, 17, -5.0f, 5.0f);
  const Tensor3 p = attn::masked_softmax(scores, Mask{});
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), Mask{}));
  ref::check_rows_sum_to_one(p);
}

TEST_CASE("masked_softmax_in_place gives the same result as masked_softmax", "[masked_softmax]") {
  Tensor3 scores = ref::random_tensor(2, 3, 4, 18);
  Mask mask;
  mask.valid_lens = {3, 1, 2, 4, 4, 0};
  const Tensor3 p = attn::masked_softmax(scores, mask);
  attn::masked_softmax_in_place(scores.view(), mask);
  CHECK(scores.data == p.data);
}

TEST_CASE("Masked softmax of scores near 1e4 is finite and correct", "[masked_softmax]") {
  Tensor3 scores(1, 2, 4);
  scores.data = {1e4f, 9999.0f, 1e4f, -1e4f, -1e4f, -9999.5f, 1e4f, 1e4f};
  Mask mask;
  mask.valid_lens = {3};
  const Tensor3 p = attn::masked_softmax(scores, mask);
  for (float x : p.data) CHECK(std::isfinite(x));
  ref::check_close(p, ref::masked_softmax(ref::to_double(scores), mask));
}
