// nn.Embedding: rows looked up by id, the backward's scatter-add against finite differences of
// a double reference, and out-of-range ids rejected with the argument named.

#include <catch2/catch.hpp>
#include <vector>

#include "attn/embedding.hpp"
#include "gradient_reference.hpp"

using attn::Index;

TEST_CASE("embedding looks up the weight's rows by id", "[embedding]") {
  const attn::Matrix weight = ref::random_matrix(5, 3, 1);
  const std::vector<int32_t> ids{4, 0, 4, 2};
  const attn::Matrix out = attn::embedding(weight, ids.data(), 4);
  REQUIRE(out.rows() == 4);
  for (Index i = 0; i < 4; ++i) CHECK(out.row(i) == weight.row(ids[static_cast<size_t>(i)]));
}

TEST_CASE("embedding's backward adds each row's gradient into its id's row", "[embedding]") {
  const Index vocab = 6, dim = 3;
  const attn::Matrix weight = ref::random_matrix(vocab, dim, 2);
  const std::vector<int32_t> ids{1, 5, 1, 0, 1};
  const Index n = static_cast<Index>(ids.size());
  const attn::Matrix dy = ref::random_matrix(n, dim, 3);
  attn::Matrix dweight = attn::Matrix::Constant(vocab, dim, 0.5f);  // added to, not overwritten
  attn::embedding_backward(ids.data(), n, dy, dweight);

  const ref::Mat dyd = ref::to_double(dy);
  const auto loss = [&](const std::vector<double>& w) {
    double sum = 0.0;
    for (Index i = 0; i < n; ++i) {
      for (Index c = 0; c < dim; ++c) sum += w[static_cast<size_t>(ids[i] * dim + c)] * dyd(i, c);
    }
    return sum;
  };
  std::vector<double> expected = ref::numeric_gradient(ref::to_double(weight).v, loss);
  for (double& x : expected) x += 0.5;
  ref::check_gradient(dweight.data(), expected, {vocab, dim}, "dweight");
}

TEST_CASE("embedding rejects ids outside the vocabulary, naming the argument", "[embedding]") {
  const attn::Matrix weight = attn::Matrix::Zero(4, 2);
  const std::vector<int32_t> ids{0, 3, 4};
  CHECK_THROWS_WITH(attn::embedding(weight, ids.data(), 3, "src"),
                    "src: expected token ids in [0, 4), got 4 at index 2");
  const std::vector<int32_t> negative{-1};
  CHECK_THROWS_WITH(attn::embedding(weight, negative.data(), 1),
                    "ids: expected token ids in [0, 4), got -1 at index 0");
}
