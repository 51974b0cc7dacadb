#pragma once
// A resident key/value cache for incremental (autoregressive) decoding: the keys and values of
// the positions seen so far stay packed in the layout the fused attention kernel reads, so that
// each step appends only the new positions and attends without copying the cache.

#include <cstdint>
#include <optional>
#include <vector>

#include "attn/rotary.hpp"
#include "attn/tensor.hpp"

namespace attn {

// How the cache stores keys and values: float32, or IEEE half (half the memory; widened to
// float32 as attend() reads them, so its results are float32 attention over the rounded K and V).
enum class KVCacheDtype { F32, F16 };

struct KVCacheConfig {
  Index batch = 1;
  Index heads = 1;
  Index head_dim = 0;
  Index value_dim = 0;  // 0 means head_dim
  Index capacity = 0;   // positions reserved up front; append grows past it geometrically
  // K/V heads held (grouped-query attention): query head h reads K/V head h / (heads /
  // kv_heads); heads must be a multiple. 0 means heads.
  Index kv_heads = 0;
  // > 0: a sliding window (Mistral's): each query sees the last `window` positions up to its own
  // (itself included), and the cache keeps only the positions a query may still see, so its
  // memory stays O(window) however long the generation.
  Index window = 0;
  // Rotary position embeddings applied by the cache: append() rotates the keys at their true
  // positions before storing them, attend() the queries at theirs (positions and offset are
  // the cache's own; base, dim and interleaved are read from here).
  std::optional<RotaryOptions> rotary;
  KVCacheDtype dtype = KVCacheDtype::F32;
};

// A cache of `heads` heads of float32 keys and values, without window or rotary positions (a
// multi-head attention layer's).
inline KVCacheConfig plain_cache_config(Index batch, Index heads, Index head_dim, Index value_dim,
                                        Index capacity) {
  KVCacheConfig config;
  config.batch = batch;
  config.heads = heads;
  config.head_dim = head_dim;
  config.value_dim = value_dim;
  config.capacity = capacity;
  return config;
}

// The score modifiers attend() takes (attn/attention.hpp has their formulas); ALiBi measures
// the distance between true positions.
struct KVCacheAttendOptions {
  std::optional<float> scale;  // default 1 / sqrt(head_dim)
  std::optional<float> softcap;
  std::vector<float> alibi_slopes;  // empty or `heads` slopes
  std::vector<float> sinks;         // empty or `heads` logits
};

class KVCache {
 public:
  // The most bytes the packed keys and values may take: a wasm32 heap's whole address space.
  static constexpr uint64_t kMaxBytes = uint64_t{1} << 32;

  // Throws std::invalid_argument unless batch, heads and head_dim are > 0, value_dim, capacity
  // and window >= 0, kv_heads divides heads, and rotary's dim and base fit (as apply_rotary
  // checks them); std::length_error when the capacity's storage would pass kMaxBytes.
  explicit KVCache(const KVCacheConfig& config);

  // The configuration, value_dim and kv_heads resolved; capacity() is the current one.
  const KVCacheConfig& config() const { return config_; }
  // The positions appended so far (with a window, more than the cache still holds).
  Index length() const { return length_; }
  Index capacity() const { return capacity_; }
  // The oldest position still held: 0 without a window.
  Index first_position() const { return first_; }
  // The bytes its keys and values take now (capacity() positions in the dtype's panels).
  double bytes() const { return storage_bytes(static_cast<double>(capacity_)); }

  // Appends t positions: k [batch, kv_heads, t, head_dim] and v [batch, kv_heads, t,
  // value_dim], row-major. Past capacity() the storage at least doubles; with a window, the
  // positions no later query can see are dropped first (the last window - 1 stay). Throws
  // std::invalid_argument naming k or v for any other shape, std::length_error when the storage
  // would pass kMaxBytes; the cache is unchanged then (and when an allocation fails).
  void append(const float* k, const std::vector<Index>& k_shape, const float* v,
              const std::vector<Index>& v_shape);

  // Grows the storage as append() of t positions would, without appending: a caller that
  // stages the new keys and values in memory of its own (the wasm binding copies them into the
  // heap) grows first, so that a cache too large fails before anything is staged. Throws
  // std::invalid_argument naming t if t < 0, std::length_error naming k as append() does; the
  // cache is unchanged then.
  void reserve_append(Index t);

  // q [batch, heads, nq, head_dim] -> out [batch, heads, nq, value_dim]: query i of nq sits at
  // position length() - nq + i (the queries of the positions just appended) and attends to the
  // positions up to its own, the last `window` of them with a window. With lse non-null it
  // receives each row's log-sum-exp [batch, heads, nq]. Throws std::invalid_argument for another
  // q shape, nq > length(), a query whose window reaches positions already dropped, or options
  // that do not fit (named as scaled_dot_product_attention names them).
  // A decode step's few queries (nq of 1 to 4) read each block of 128 cached positions from
  // memory once: the block's keys and values stay in cache while the queries pass over it, one
  // or two rows at a time, with the online softmax carrying each row across blocks. Past 1024
  // positions the keys go in chunks of 1024, one task each on the thread pool, whose partial
  // softmaxes are merged in order: the result then differs from one pass by rounding only, and
  // is the same on every thread count.
  void attend(const float* q, const std::vector<Index>& q_shape, float* out,
              const KVCacheAttendOptions& options, float* lse = nullptr) const;
  void attend(const float* q, const std::vector<Index>& q_shape, float* out,
              std::optional<float> scale = std::nullopt) const;

  // Keeps the first n positions. Throws std::invalid_argument unless 0 <= n <= length(); with
  // a window, n must also be >= first_position() (the positions before it are gone, and the
  // cache cannot roll back past them).
  void truncate(Index n);
  void clear() { length_ = first_ = 0; }

 private:
  Index sequences() const { return config_.batch * config_.kv_heads; }
  // Positions held: first_position() .. length() - 1, position p in slot p - first_.
  Index held() const { return length_ - first_; }
  // With a window, drops the positions no query after the next append of t can see.
  void drop_unseen(Index t);
  // Floats of one sequence's packed keys / values at capacity `capacity`.
  Index key_floats(Index capacity) const;
  Index value_floats(Index capacity) const;
  // Bytes of the packed keys and values of every sequence at `capacity` positions.
  double storage_bytes(double capacity) const;
  // Storage for `capacity` positions; a std::length_error names `argument`.
  void reserve(const char* argument, Index capacity);

  KVCacheConfig config_;
  Index length_ = 0, capacity_ = 0, first_ = 0;
  // Per sequence (batch row b, K/V head h at b * kv_heads + h): keys as panels of 16
  // positions, each [head_dim][16]; values as panels of 16 columns, each [capacity][16]; in the
  // dtype's panels (the other stay empty).
  template <typename T>
  struct Panels {
    std::vector<T> keys, values;
  };
  Panels<float> floats_;
  Panels<uint16_t> halves_;
  // Calls body with the dtype's panels.
  template <typename Body>
  void with_panels(Body&& body) {
    if (config_.dtype == KVCacheDtype::F16) {
      body(halves_);
    } else {
      body(floats_);
    }
  }
};

}  // namespace attn
