// MultiHeadAttention's incremental self-attention through an attn::KVCache: a sequence fed token
// by token, or in chunks, gives the causal forward of the whole sequence, checked against the
// double-precision multi-head reference; errors leave the cache as it was.

#include <catch2/catch.hpp>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/kv_cache.hpp"
#include "attn/multi_head_attention.hpp"
#include "multi_head_support.hpp"
#include "reference.hpp"

using attn::Index;
using attn::KVCache;
using attn::MultiHeadAttention;
using attn::MultiHeadConfig;
using attn::Tensor3;
using mha_support::load;
using mha_support::make_config;
using mha_support::Params;
using mha_support::random_params;
using ref::rows;

namespace {

// Feeds query/key/value through a fresh cache in chunks of the given sizes; the outputs of
// every chunk, put back together as [B, n, E].
Tensor3 decode(const MultiHeadAttention& m, const Tensor3& query, const Tensor3& key,
               const Tensor3& value, const std::vector<Index>& chunks, Index capacity) {
  KVCache cache = m.create_cache(query.batch, capacity);
  Tensor3 out(query.batch, query.rows, m.config().embed_dim);
  Index from = 0;
  for (Index t : chunks) {
    const Tensor3 part =
        m.forward(rows(query, from, t), rows(key, from, t), rows(value, from, t), cache);
    REQUIRE(cache.length() == from + t);
    for (Index b = 0; b < out.batch; ++b) {
      for (Index r = 0; r < t; ++r) {
        for (Index c = 0; c < out.cols; ++c) out.at(b, from + r, c) = part.at(b, r, c);
      }
    }
    from += t;
  }
  REQUIRE(from == query.rows);
  return out;
}

attn::Mask causal() {
  attn::Mask mask;
  mask.causal = true;
  return mask;
}

void check_decode(const MultiHeadConfig& config, Index batch, Index n,
                  const std::vector<std::vector<Index>>& chunkings, uint32_t seed) {
  MultiHeadAttention m(config);
  const Params p = random_params(config, seed);
  load(m, p);
  const Index e = config.embed_dim;
  const Tensor3 query = ref::random_tensor(batch, n, e, seed + 10);
  // Self-attention passes one tensor three times; other widths need their own key and value.
  const Tensor3 key = config.kdim ? ref::random_tensor(batch, n, config.kdim, seed + 11) : query;
  const Tensor3 value = config.vdim ? ref::random_tensor(batch, n, config.vdim, seed + 12) : query;
  const ref::Attention expected =
      ref::multi_head_attention(ref::to_double(query), ref::to_double(key), ref::to_double(value),
                                p.ref, config.num_heads, causal());
  for (const auto& chunks : chunkings) {
    CAPTURE(chunks);
    ref::check_close(decode(m, query, key, value, chunks, 3), expected.output, ref::kSum,
                     "decoded");
  }
}

std::vector<Index> ones(Index n) { return std::vector<Index>(static_cast<size_t>(n), 1); }

}  // namespace

TEST_CASE("Decoding through a KV cache equals the causal forward of the whole sequence",
          "[mha][kv_cache]") {
  // 21 positions: past the cache's capacity of 3 and its 16-position panels; chunks of 1 to 9
  // (a zero-length chunk in between does nothing).
  const std::vector<std::vector<Index>> chunkings{ones(21), {5, 1, 0, 9, 2, 4}, {21}};
  SECTION("packed weights with bias") { check_decode(make_config(12, 3), 2, 21, chunkings, 10); }
  SECTION("packed weights without bias") {
    check_decode(make_config(8, 2, 0, 0, false), 3, 21, chunkings, 20);
  }
  SECTION("separate projections (kdim, vdim)") {
    check_decode(make_config(8, 4, 5, 7), 2, 21, chunkings, 30);
  }
}

TEST_CASE("Decoding equals MultiHeadAttention::forward with a causal mask", "[mha][kv_cache]") {
  const MultiHeadConfig config = make_config(16, 4);
  MultiHeadAttention m(config);
  load(m, random_params(config, 40));
  const Tensor3 x = ref::random_tensor(1, 35, 16, 41);
  attn::MultiHeadForwardOptions options;
  options.mask = causal();
  options.mask.fill = attn::MultiHeadForwardOptions::default_mask().fill;
  const Tensor3 full = m.forward(x, x, x, options).output;
  const Tensor3 decoded = decode(m, x, x, x, ones(35), 0);
  std::vector<double> expected(full.data.begin(), full.data.end());
  ref::check_close(decoded.data.data(), expected.data(), expected.size(), ref::kSum, "decoded");
}

TEST_CASE("create_cache shapes a cache for the layer's heads", "[mha][kv_cache]") {
  const MultiHeadAttention m(make_config(12, 3, 5, 7));
  const KVCache cache = m.create_cache(2, 10);
  CHECK(cache.config().batch == 2);
  CHECK(cache.config().heads == 3);
  CHECK(cache.config().head_dim == 4);
  CHECK(cache.config().value_dim == 4);
  CHECK(cache.capacity() == 10);
  CHECK(cache.length() == 0);
  CHECK_THROWS_WITH(m.create_cache(0, 1), Catch::Matchers::Contains("batch: expected a size > 0"));
}

TEST_CASE("Cached forward errors name the argument and leave the cache as it was",
          "[mha][kv_cache]") {
  const MultiHeadConfig config = make_config(8, 2);
  MultiHeadAttention m(config);
  load(m, random_params(config, 50));
  KVCache cache = m.create_cache(2, 4);
  const Tensor3 x = ref::random_tensor(2, 3, 8, 51);
  m.forward(x, x, x, cache);
  const Tensor3 next = ref::random_tensor(2, 1, 8, 52);
  using Catch::Matchers::Contains;

  // A cache of another layer: other heads, other widths.
  KVCache other_heads = MultiHeadAttention(make_config(8, 4)).create_cache(2);
  CHECK_THROWS_WITH(m.forward(next, next, next, other_heads),
                    Contains("cache: expected a cache of 2 heads, head_dim = value_dim = 4, "
                             "without kv_heads, window or rotary (from create_cache), got heads 4, "
                             "head_dim 2, value_dim 2"));
  // A cache that would compute another attention than the layer's (PyTorch's).
  for (const auto& [field, value] : {std::pair{"kv_heads", Index{1}}, {"window", Index{3}}}) {
    attn::KVCacheConfig config = attn::plain_cache_config(2, 2, 4, 4, 0);
    (std::string(field) == "window" ? config.window : config.kv_heads) = value;
    KVCache modern(config);
    CHECK_THROWS_WITH(m.forward(next, next, next, modern), Contains(field));
  }
  KVCache other_values({2, 2, 4, 3, 0});
  CHECK_THROWS_WITH(m.forward(next, next, next, other_values), Contains("value_dim 3"));
  CHECK_THROWS_AS(m.forward(next, next, next, other_values), std::invalid_argument);
  // Wrong batch, width, or key rows.
  const Tensor3 wide_batch = ref::random_tensor(3, 1, 8, 53);
  CHECK_THROWS_WITH(m.forward(wide_batch, wide_batch, wide_batch, cache),
                    Contains("query: expected shape [2, *, 8], got [3, 1, 8]"));
  const Tensor3 narrow = ref::random_tensor(2, 1, 6, 54);
  CHECK_THROWS_WITH(m.forward(narrow, narrow, narrow, cache),
                    Contains("query: expected shape [2, *, 8], got [2, 1, 6]"));
  CHECK_THROWS_WITH(m.forward(next, x, x, cache),
                    Contains("key: expected shape [2, 1, 8], got [2, 3, 8]"));
  CHECK_THROWS_WITH(m.forward(next, next, x, cache),
                    Contains("value: expected shape [2, 1, 8], got [2, 3, 8]"));
  CHECK(other_heads.length() == 0);
  CHECK(other_values.length() == 0);

  // The cache still holds exactly the first three positions: decoding goes on as if nothing
  // had happened.
  REQUIRE(cache.length() == 3);
  const Tensor3 after = m.forward(next, next, next, cache);
  KVCache fresh = m.create_cache(2);
  m.forward(x, x, x, fresh);
  const Tensor3 expected = m.forward(next, next, next, fresh);
  CHECK(std::memcmp(after.data.data(), expected.data.data(), after.data.size() * sizeof(float)) ==
        0);
}
