// attn::KVCache: positions appended a few at a time (crossing its 16-position panels, the
// kernel's 512-key blocks, its capacity, so that it grows, and the 1024-key chunks a long cache
// is attended in) and attended by 1-4 queries that are causal against the newest positions,
// checked against a double-precision reference over the same keys and values; truncate, clear,
// and errors that leave the cache as it was.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/kv_cache.hpp"
#include "reference.hpp"

using attn::Index;
using attn::KVCache;

namespace {

struct Shape {
  Index batch, heads, d, dv;
  Index sequences() const { return batch * heads; }
};

// Every position appended so far, per sequence, in plain row-major form.
struct History {
  Shape shape;
  std::vector<std::vector<float>> keys, values;  // [sequence][position * d (dv) + c]

  explicit History(Shape s)
      : shape(s),
        keys(static_cast<size_t>(s.sequences())),
        values(static_cast<size_t>(s.sequences())) {}

  // Draws t positions, appends them to the cache and to the history.
  void append(KVCache& cache, Index t, uint32_t seed) {
    const attn::Tensor3 k = ref::random_tensor(shape.sequences(), t, shape.d, seed);
    const attn::Tensor3 v = ref::random_tensor(shape.sequences(), t, shape.dv, seed + 1);
    cache.append(k.data.data(), {shape.batch, shape.heads, t, shape.d}, v.data.data(),
                 {shape.batch, shape.heads, t, shape.dv});
    for (Index s = 0; s < shape.sequences(); ++s) {
      const auto at = [&](const attn::Tensor3& x) { return x.data.begin() + s * t * x.cols; };
      auto& key = keys[static_cast<size_t>(s)];
      auto& value = values[static_cast<size_t>(s)];
      key.insert(key.end(), at(k), at(k) + t * shape.d);
      value.insert(value.end(), at(v), at(v) + t * shape.dv);
    }
  }

  void truncate(Index n) {
    for (auto& key : keys) key.resize(static_cast<size_t>(n * shape.d));
    for (auto& value : values) value.resize(static_cast<size_t>(n * shape.dv));
  }

  // Query i of nq sees the first length - nq + i + 1 positions; softmax and pooling in double.
  std::vector<double> attend(const attn::Tensor3& q, Index nq, double scale) const {
    std::vector<double> out(static_cast<size_t>(shape.sequences() * nq * shape.dv), 0.0);
    for (Index s = 0; s < shape.sequences(); ++s) {
      const auto& key = keys[static_cast<size_t>(s)];
      const auto& value = values[static_cast<size_t>(s)];
      const Index length = static_cast<Index>(key.size()) / shape.d;
      for (Index i = 0; i < nq; ++i) {
        const Index visible = length - nq + i + 1;
        std::vector<double> scores(static_cast<size_t>(visible));
        double max = -ref::kInf, sum = 0.0;
        for (Index j = 0; j < visible; ++j) {
          double dot = 0.0;
          for (Index c = 0; c < shape.d; ++c) {
            dot += static_cast<double>(q.at(s, i, c)) * key[static_cast<size_t>(j * shape.d + c)];
          }
          scores[static_cast<size_t>(j)] = dot * scale;
          max = std::max(max, dot * scale);
        }
        for (double& x : scores) sum += x = std::exp(x - max);
        for (Index j = 0; j < visible; ++j) {
          for (Index c = 0; c < shape.dv; ++c) {
            out[static_cast<size_t>((s * nq + i) * shape.dv + c)] +=
                scores[static_cast<size_t>(j)] / sum * value[static_cast<size_t>(j * shape.dv + c)];
          }
        }
      }
    }
    return out;
  }
};

std::vector<float> attend(const KVCache& cache, const Shape& shape, const attn::Tensor3& q,
                          Index nq, std::optional<float> scale = std::nullopt) {
  std::vector<float> out(static_cast<size_t>(shape.sequences() * nq * shape.dv));
  cache.attend(q.data.data(), {shape.batch, shape.heads, nq, shape.d}, out.data(), scale);
  return out;
}

void check_attend(const KVCache& cache, const History& history, Index nq, uint32_t seed) {
  const Shape& shape = history.shape;
  CAPTURE(cache.length(), nq);
  const attn::Tensor3 q = ref::random_tensor(shape.sequences(), nq, shape.d, seed);
  const std::vector<float> got = attend(cache, shape, q, nq);
  const std::vector<double> expected =
      history.attend(q, nq, 1.0 / std::sqrt(static_cast<double>(shape.d)));
  ref::check_close(got.data(), expected.data(), expected.size(), ref::kSum, "attend");
}

}  // namespace

TEST_CASE("A KV cache attends causally over positions appended in chunks, as it grows",
          "[kv_cache]") {
  const Shape shape{2, 3, 20, 12};
  KVCache cache({shape.batch, shape.heads, shape.d, shape.dv, 5});
  History history(shape);
  REQUIRE(cache.length() == 0);
  uint32_t seed = 1;
  // Chunks that cross the 16-position panels, the capacity of 5 and the 512-key blocks.
  for (Index t : {4, 1, 7, 30, 1, 150, 2, 1, 350, 1}) {
    const Index old_capacity = cache.capacity();
    history.append(cache, t, seed += 10);
    REQUIRE(cache.length() == static_cast<Index>(history.keys[0].size()) / shape.d);
    if (cache.length() > old_capacity) CHECK(cache.capacity() >= 2 * old_capacity);
    CHECK(cache.capacity() >= cache.length());
    for (Index nq = 1; nq <= std::min<Index>(4, cache.length()); ++nq) {
      check_attend(cache, history, nq, seed + static_cast<uint32_t>(nq));
    }
  }
  check_attend(cache, history, 37, seed + 100);  // more queries than the decode sizes work too
}

TEST_CASE("A long cache attends in key chunks whose partial softmaxes merge to the reference",
          "[kv_cache]") {
  // Past 1024 positions a sequence's keys split into chunks of 1024, merged in order. Lengths
  // 1024 (one full chunk), 1025 (the second chunk's one position is hidden from all queries but
  // the last of four) and 2100 (a third, partial chunk).
  const Shape shape{1, 2, 8, 6};
  KVCache cache({shape.batch, shape.heads, shape.d, shape.dv, 0});
  History history(shape);
  uint32_t seed = 700;
  for (Index t : {1024, 1, 1075}) {
    history.append(cache, t, seed += 10);
    for (Index nq = 1; nq <= 4; ++nq)
      check_attend(cache, history, nq, seed + static_cast<uint32_t>(nq));
  }
}

TEST_CASE("value_dim defaults to head_dim and the scale to 1 / sqrt(head_dim)", "[kv_cache]") {
  const Shape shape{1, 2, 8, 8};
  KVCache cache({shape.batch, shape.heads, shape.d, 0, 0});
  REQUIRE(cache.config().value_dim == 8);
  History history(shape);
  history.append(cache, 19, 300);
  const attn::Tensor3 q = ref::random_tensor(shape.sequences(), 2, shape.d, 301);
  const std::vector<float> got = attend(cache, shape, q, 2, 0.7f);
  const std::vector<double> expected = history.attend(q, 2, 0.7);
  ref::check_close(got.data(), expected.data(), expected.size(), ref::kSum, "scale 0.7");
  check_attend(cache, history, 3, 302);
}

TEST_CASE("truncate and clear drop the newest positions, and appends then overwrite them",
          "[kv_cache]") {
  const Shape shape{1, 2, 16, 24};
  KVCache cache({shape.batch, shape.heads, shape.d, shape.dv, 64});
  History history(shape);
  history.append(cache, 40, 400);
  cache.truncate(21);
  history.truncate(21);
  REQUIRE(cache.length() == 21);
  check_attend(cache, history, 2, 401);
  history.append(cache, 9, 402);  // overwrites positions 21..29 of the same panel
  check_attend(cache, history, 4, 403);
  cache.truncate(30);  // the whole length: nothing changes
  check_attend(cache, history, 1, 404);
  cache.clear();
  history.truncate(0);
  REQUIRE(cache.length() == 0);
  history.append(cache, 3, 405);
  check_attend(cache, history, 3, 406);
}

TEST_CASE("KV cache errors name the argument and leave the cache as it was", "[kv_cache]") {
  const Shape shape{2, 3, 4, 5};
  KVCache cache({shape.batch, shape.heads, shape.d, shape.dv, 8});
  History history(shape);
  history.append(cache, 6, 500);
  const attn::Tensor3 q = ref::random_tensor(shape.sequences(), 2, shape.d, 501);
  const std::vector<float> before = attend(cache, shape, q, 2);
  const std::vector<float> data(1000, 1.0f);
  using Catch::Matchers::Contains;

  CHECK_THROWS_WITH(cache.append(data.data(), {2, 3, 1, 5}, data.data(), {2, 3, 1, 5}),
                    Contains("k: expected shape [2, 3, *, 4], got [2, 3, 1, 5]"));
  CHECK_THROWS_WITH(cache.append(data.data(), {2, 3, 2, 4}, data.data(), {2, 3, 1, 5}),
                    Contains("v: expected shape [2, 3, 2, 5], got [2, 3, 1, 5]"));
  CHECK_THROWS_WITH(cache.append(data.data(), {3, 4}, data.data(), {3, 5}),
                    Contains("k: expected shape [2, 3, *, 4], got [3, 4]"));
  std::vector<float> out(1000);
  CHECK_THROWS_WITH(cache.attend(data.data(), {2, 1, 1, 4}, out.data()),
                    Contains("q: expected shape [2, 3, *, 4], got [2, 1, 1, 4]"));
  CHECK_THROWS_WITH(cache.attend(data.data(), {2, 3, 7, 4}, out.data()),
                    Contains("q: expected at most length() = 6 queries, got 7"));
  CHECK_THROWS_WITH(cache.attend(q.data.data(), {2, 3, 2, 4}, out.data(), NAN),
                    Contains("scale: expected a finite number"));
  CHECK_THROWS_WITH(cache.truncate(7), Contains("n: expected a length in [0, 6], got 7"));
  CHECK_THROWS_WITH(cache.truncate(-1), Contains("n: expected a length in [0, 6], got -1"));
  CHECK_THROWS_AS(cache.truncate(7), std::invalid_argument);

  REQUIRE(cache.length() == 6);
  REQUIRE(cache.capacity() == 8);
  const std::vector<float> after = attend(cache, shape, q, 2);
  CHECK(std::memcmp(before.data(), after.data(), before.size() * sizeof(float)) == 0);

  CHECK_THROWS_WITH(KVCache({0, 1, 4, 4, 0}), Contains("batch: expected a size > 0, got 0"));
  CHECK_THROWS_WITH(KVCache({1, 1, 0, 4, 0}), Contains("head_dim: expected a size > 0, got 0"));
  CHECK_THROWS_WITH(KVCache({1, 1, 4, -1, 0}), Contains("value_dim: expected a size >= 0"));
  CHECK_THROWS_WITH(KVCache({1, 1, 4, 4, -2}), Contains("capacity: expected a size >= 0"));
}

TEST_CASE("A KV cache that would pass 4 GiB throws length_error and stays usable", "[kv_cache]") {
  // 2^25 positions of 64 + 64 floats are 32 GiB: refused before anything is allocated.
  CHECK_THROWS_AS(KVCache({1, 1, 64, 64, Index{1} << 25}), std::length_error);
  CHECK_THROWS_WITH(KVCache({1, 1, 64, 64, Index{1} << 25}),
                    Catch::Matchers::Contains("capacity: 33554432 positions would take"));
  // 2^24 sequences: one position needs 16 (a panel) x 16 key floats and 16 value floats each,
  // 18 GiB. The storage is checked before k and v are read, so a small buffer stands in.
  KVCache wide({Index{1} << 16, Index{1} << 8, 16, 1, 0});
  const std::vector<float> data(16, 1.0f);
  CHECK_THROWS_WITH(wide.append(data.data(), {Index{1} << 16, Index{1} << 8, 1, 16}, data.data(),
                                {Index{1} << 16, Index{1} << 8, 1, 1}),
                    Catch::Matchers::Contains("k: 1 positions would take") &&
                        Catch::Matchers::Contains("more than the 4 GiB"));
  CHECK(wide.length() == 0);
  CHECK(wide.capacity() == 0);
}

TEST_CASE("reserve_append grows as append would, without appending", "[kv_cache]") {
  const Shape shape{1, 2, 8, 8};
  KVCache cache({shape.batch, shape.heads, shape.d, shape.dv, 4});
  History history(shape);
  history.append(cache, 3, 600);
  cache.reserve_append(1);  // fits: nothing moves
  CHECK(cache.capacity() == 4);
  cache.reserve_append(2);  // doubles
  CHECK(cache.capacity() == 8);
  cache.reserve_append(20);  // more than doubling: exactly what is needed
  CHECK(cache.capacity() == 23);
  REQUIRE(cache.length() == 3);
  check_attend(cache, history, 3, 601);
  history.append(cache, 20, 602);
  CHECK(cache.capacity() == 23);
  check_attend(cache, history, 2, 603);
  CHECK_THROWS_WITH(cache.reserve_append(-1),
                    Catch::Matchers::Contains("t: expected a count >= 0, got -1"));
  // Past what a 32-bit Index holds: refused by size, not wrapped around.
  CHECK_THROWS_AS(cache.reserve_append(Index{2147483647}), std::length_error);
  CHECK(cache.length() == 23);
}

TEST_CASE("batch * heads must fit an Index (32 bits on wasm32)", "[kv_cache]") {
  CHECK_THROWS_WITH(KVCache({Index{1} << 40, Index{1} << 40, 1, 1, 0}),
                    Catch::Matchers::Contains("heads: expected batch * heads at most"));
}
