// The padded cross-entropy (d2l's Seq2Seq.loss) against a double reference, its gradient against
// finite differences, and its argument checks.

#include <catch2/catch.hpp>
#include <vector>

#include "attn/cross_entropy.hpp"
#include "gradient_reference.hpp"
#include "recurrent_reference.hpp"

using attn::Index;

TEST_CASE("cross-entropy averages over the non-pad labels of the whole batch", "[cross_entropy]") {
  const Index N = 7, V = 5;
  const int32_t pad = 1;
  // Logits near 90 make exp overflow unless the row max is subtracted.
  attn::Matrix logits = ref::random_matrix(N, V, 5, -3.0f, 3.0f);
  logits.row(2).array() += 90.0f;
  const std::vector<int32_t> labels{0, 1, 4, 1, 3, 2, 1};
  const auto got = attn::masked_cross_entropy(logits, labels.data(), pad, true);
  CHECK(got.count == 4);

  const ref::Mat ld = ref::to_double(logits);
  const double want = ref::masked_cross_entropy(ld, labels, pad);
  CHECK_THAT(got.loss, Catch::Matchers::WithinRel(want, 1e-5));
  const auto grad = ref::numeric_gradient(
      ld.v,
      [&](const std::vector<double>& v) {
        ref::Mat m = ld;
        m.v = v;
        return ref::masked_cross_entropy(m, labels, pad);
      },
      1e-5);
  ref::check_gradient(got.dlogits.data(), grad, {N, V}, "dlogits");
  for (Index c = 0; c < V; ++c) CHECK(got.dlogits(1, c) == 0.0f);  // a pad row passes nothing

  // A pad outside the vocabulary leaves nothing out: the plain mean.
  const auto all = attn::masked_cross_entropy(logits, labels.data(), -1, false);
  CHECK(all.count == N);
  CHECK(all.dlogits.size() == 0);
  CHECK_THAT(all.loss, Catch::Matchers::WithinRel(ref::masked_cross_entropy(ld, labels, -1), 1e-5));
}

TEST_CASE("cross-entropy rejects labels out of range and batches of only pad", "[cross_entropy]") {
  const attn::Matrix logits = attn::Matrix::Zero(2, 3);
  const std::vector<int32_t> out_of_range{0, 3}, only_pad{2, 2};
  CHECK_THROWS_WITH(attn::masked_cross_entropy(logits, out_of_range.data(), 0, false, "tgt_output"),
                    "tgt_output: expected token ids in [0, 3), got 3 at index 1");
  CHECK_THROWS_WITH(attn::masked_cross_entropy(logits, only_pad.data(), 2, false),
                    "labels: expected at least one label other than pad 2, got only pad");
}
