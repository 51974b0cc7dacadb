// The KV cache as current models use it: grouped K/V heads, a sliding window that drops what no
// query can see, rotary positions applied by the cache, and the score modifiers. Every decoding
// step is checked against attention over the whole sequence in double (score_reference.hpp),
// with the rotary embedding applied to the whole sequence's q and k beforehand, through windows
// that have dropped positions many times.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/kv_cache.hpp"
#include "attn/rotary.hpp"
#include "attn/threads.hpp"
#include "reference.hpp"
#include "score_reference.hpp"

using attn::Index;
using attn::KVCache;
using attn::Tensor3;
using ref::rows;

namespace {

struct Decode {
  Index batch, heads, kv_heads, d, n;
  Index window = 0;
  Index per_append = 1;  // positions appended (and queries attended) per step
  std::optional<attn::RotaryOptions> rotary;
  attn::KVCacheAttendOptions modifiers;
  attn::KVCacheDtype dtype = attn::KVCacheDtype::F32;
};

// x rounded to the nearest IEEE half, ties to even, from the format's definition: 11
// significant bits, a quantum of 2^-24 below 2^-14 (|x| stays far below the overflow here).
float half_rounded(float x) {
  int exponent = 0;
  std::frexp(static_cast<double>(x), &exponent);  // |x| in [2^(exponent - 1), 2^exponent)
  const double quantum = std::ldexp(1.0, std::max(exponent - 1, -14) - 10);
  return static_cast<float>(std::nearbyint(static_cast<double>(x) / quantum) * quantum);
}

Tensor3 half_rounded(Tensor3 t) {
  for (float& x : t.data) x = half_rounded(x);
  return t;
}

// Decodes the whole sequence through a cache; checks every step's output and lse against the
// reference rows of the same positions, and returns every step's results back to back.
std::vector<float> decode_and_check(const Decode& c, uint32_t seed) {
  CAPTURE(c.batch, c.heads, c.kv_heads, c.d, c.n, c.window, c.per_append, seed);
  const Tensor3 q = ref::random_tensor(c.batch * c.heads, c.n, c.d, seed);
  const Tensor3 k = ref::random_tensor(c.batch * c.kv_heads, c.n, c.d, seed + 1);
  const Tensor3 v = ref::random_tensor(c.batch * c.kv_heads, c.n, c.d, seed + 2);

  // The reference: the whole sequence, causal, the window as a mask, rotary applied up front.
  attn::AttentionOptions full;
  full.heads = c.heads;
  full.kv_heads = c.kv_heads;
  full.mask.causal = true;
  full.mask.fill = -std::numeric_limits<float>::infinity();
  if (c.window > 0) full.mask.window_left = c.window - 1;
  full.scale = c.modifiers.scale;
  full.softcap = c.modifiers.softcap;
  full.alibi_slopes = c.modifiers.alibi_slopes;
  full.sinks = c.modifiers.sinks;
  const Tensor3 rq = c.rotary ? attn::apply_rotary(q, 1, *c.rotary) : q;
  Tensor3 rk = c.rotary ? attn::apply_rotary(k, 1, *c.rotary) : k;
  Tensor3 rv = v;
  if (c.dtype == attn::KVCacheDtype::F16) {  // the cache stores the rotated keys as halves
    rk = half_rounded(rk);
    rv = half_rounded(rv);
  }
  const auto widen = [](const Tensor3& t) {
    return std::vector<double>(t.data.begin(), t.data.end());
  };
  const ref::Reference want = ref::reference({c.batch, c.heads, c.kv_heads, c.n, c.n, c.d, c.d},
                                             widen(rq), widen(rk), widen(rv), full);

  attn::KVCacheConfig config{c.batch, c.heads, c.d, c.d, 0};
  config.kv_heads = c.kv_heads;
  config.window = c.window;
  config.rotary = c.rotary;
  config.dtype = c.dtype;
  KVCache cache(config);
  std::vector<float> results;
  for (Index p = 0; p < c.n; p += c.per_append) {
    const Index t = std::min(c.per_append, c.n - p);
    const Tensor3 kt = rows(k, p, t), vt = rows(v, p, t), qt = rows(q, p, t);
    cache.append(kt.data.data(), {c.batch, c.kv_heads, t, c.d}, vt.data.data(),
                 {c.batch, c.kv_heads, t, c.d});
    Tensor3 out(c.batch * c.heads, t, c.d);
    std::vector<float> lse(static_cast<size_t>(c.batch * c.heads * t));
    cache.attend(qt.data.data(), {c.batch, c.heads, t, c.d}, out.data.data(), c.modifiers,
                 lse.data());
    CAPTURE(p, cache.first_position());
    REQUIRE(cache.length() == p + t);
    if (c.window > 0) REQUIRE(cache.length() - cache.first_position() < 4 * c.window + 2 * t);
    for (Index m = 0; m < c.batch * c.heads; ++m) {
      for (Index i = 0; i < t; ++i) {
        for (Index col = 0; col < c.d; ++col) {
          REQUIRE(ref::close(out.at(m, i, col), want.output(m, p + i, col), ref::kSum));
        }
        REQUIRE(ref::close(lse[static_cast<size_t>(m * t + i)],
                           want.lse[static_cast<size_t>(m * c.n + p + i)], ref::kSum));
      }
    }
    results.insert(results.end(), out.data.begin(), out.data.end());
    results.insert(results.end(), lse.begin(), lse.end());
  }
  return results;
}

attn::RotaryOptions rotary(Index dim, bool interleaved) {
  attn::RotaryOptions options;
  options.dim = dim;
  options.interleaved = interleaved;
  options.base = 500.0f;
  return options;
}

}  // namespace

TEST_CASE("A cache of grouped K/V heads decodes as attention over the whole sequence",
          "[kv-cache][gqa]") {
  decode_and_check({2, 4, 2, 8, 20}, 10);
  decode_and_check({1, 6, 1, 8, 13, 0, 3}, 20);  // one K/V head, three positions per append
}

TEST_CASE("A windowed cache drops what no query can see, and still decodes exactly",
          "[kv-cache][window]") {
  Decode one{1, 2, 1, 8, 60, 5};
  decode_and_check(one, 30);  // the storage holds at most a few windows, however long the run
  Decode chunks{2, 2, 2, 4, 50, 4, 3};
  decode_and_check(chunks, 40);
}

TEST_CASE("A rotary cache rotates keys and queries at their true positions", "[kv-cache][rotary]") {
  Decode half{1, 4, 2, 8, 24};
  half.rotary = rotary(8, false);
  decode_and_check(half, 50);
  Decode partial{1, 2, 1, 8, 40, 6, 2};  // through a window, two positions per append
  partial.rotary = rotary(6, true);
  decode_and_check(partial, 60);
}

TEST_CASE("The cache takes softcap, ALiBi over true positions and sinks", "[kv-cache][modifiers]") {
  Decode c{2, 4, 2, 8, 30, 7, 2};
  c.rotary = rotary(4, false);
  c.modifiers.softcap = 3.0f;
  c.modifiers.alibi_slopes = {0.5f, 0.25f, 0.125f, 0.0625f};
  c.modifiers.sinks = {0.0f, 1.0f, -1.0f, 4.0f};
  c.modifiers.scale = 0.3f;
  decode_and_check(c, 70);
}

TEST_CASE("A half-precision cache attends as float32 over the half-rounded keys and values",
          "[kv-cache][f16]") {
  Decode c{2, 4, 2, 8, 30, 9, 2};
  c.dtype = attn::KVCacheDtype::F16;
  decode_and_check(c, 90);
  c.rotary = rotary(8, true);
  c.modifiers.sinks = {0.5f, 0.0f, 1.0f, -1.0f};
  decode_and_check(c, 100);
  // Past a chunk of 1024 positions, through a window that has dropped positions.
  Decode long_run{1, 2, 1, 16, 1500, 1100, 500};
  long_run.dtype = attn::KVCacheDtype::F16;
  decode_and_check(long_run, 110);
}

TEST_CASE("A long windowed cache gives the same bits on any thread count", "[kv-cache][threads]") {
  // Past 1024 held positions the keys go in chunks: grouped heads and the window across them.
  Decode c{1, 4, 2, 8, 1300, 1100, 650};
  c.rotary = rotary(8, false);
  c.modifiers.sinks = {0.5f, 0.0f, 1.0f, -1.0f};
  c.dtype = attn::KVCacheDtype::F16;
  attn::set_threads(1);
  const std::vector<float> first = decode_and_check(c, 80);
  for (int threads : {2, 3, 7}) {
    CAPTURE(threads);
    attn::set_threads(threads);
    const std::vector<float> again = decode_and_check(c, 80);
    REQUIRE(std::memcmp(again.data(), first.data(), first.size() * sizeof(float)) == 0);
  }
  attn::set_threads(1);
}

TEST_CASE("The cache names what does not fit", "[kv-cache][errors]") {
  attn::KVCacheConfig config{1, 4, 8, 8, 0};
  config.kv_heads = 3;
  REQUIRE_THROWS_WITH(KVCache(config), Catch::StartsWith("kv_heads"));
  config.kv_heads = 2;
  config.window = -1;
  REQUIRE_THROWS_WITH(KVCache(config), Catch::StartsWith("window"));
  config.window = 3;
  config.rotary = rotary(5, false);
  REQUIRE_THROWS_WITH(KVCache(config), Catch::StartsWith("dim"));
  config.rotary.reset();
  KVCache cache(config);
  const std::vector<float> kv(static_cast<size_t>(2 * 40 * 8), 0.5f), q(4 * 40 * 8, 0.5f);
  REQUIRE_THROWS_WITH(cache.append(kv.data(), {1, 4, 10, 8}, kv.data(), {1, 4, 10, 8}),
                      Catch::StartsWith("k:"));
  for (int step = 0; step < 40; ++step) {
    cache.append(kv.data(), {1, 2, 1, 8}, kv.data(), {1, 2, 1, 8});
  }
  REQUIRE(cache.first_position() > 0);
  std::vector<float> out(4 * 40 * 8);
  attn::KVCacheAttendOptions options;
  options.sinks = {1.0f};
  REQUIRE_THROWS_WITH(cache.attend(q.data(), {1, 4, 1, 8}, out.data(), options),
                      Catch::StartsWith("sinks"));
  // More queries than the positions their windows need are still held.
  REQUIRE_THROWS_WITH(cache.attend(q.data(), {1, 4, 30, 8}, out.data()), Catch::StartsWith("q:"));
  REQUIRE_THROWS_WITH(cache.truncate(cache.first_position() - 1), Catch::StartsWith("n:"));
  cache.truncate(cache.first_position());
  REQUIRE(cache.length() == cache.first_position());
}
