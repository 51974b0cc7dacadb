#include "attn/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "checks.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/gemm.hpp"

namespace attn {

namespace {

constexpr Index kPositionsPerPanel = detail::kPanel;

// Fails with std::length_error, naming `argument`, when `bytes` pass the cache's limit.
void require_storage(const char* argument, double bytes, double capacity) {
  if (bytes >= static_cast<double>(KVCache::kMaxBytes)) {
    char positions[32];  // a whole number, possibly past what Index holds on wasm32
    std::snprintf(positions, sizeof positions, "%.0f", capacity);
    throw std::length_error(std::string(argument) + ": " + positions + " positions would take " +
                            detail::number_string(bytes) +
                            " bytes, more than the 4 GiB a wasm32 heap holds");
  }
}

}  // namespace

KVCache::KVCache(const KVCacheConfig& config) : config_(config) {
  for (const auto& [name, value] :
       {std::pair{"batch", config.batch}, {"heads", config.heads}, {"head_dim", config.head_dim}}) {
    if (value <= 0) detail::fail(name, "a size > 0", std::to_string(value));
  }
  // The sequences are counted in Index, 32 bits on wasm32.
  if (static_cast<double>(config.batch) * config.heads >
      static_cast<double>(std::numeric_limits<Index>::max())) {
    detail::fail("heads",
                 "batch * heads at most " + std::to_string(std::numeric_limits<Index>::max()),
                 std::to_string(config.batch) + " * " + std::to_string(config.heads));
  }
  if (config.value_dim < 0) {
    detail::fail("value_dim", "a size >= 0", std::to_string(config.value_dim));
  }
  if (config.capacity < 0) detail::fail("capacity", "a size >= 0", std::to_string(config.capacity));
  if (config_.value_dim == 0) config_.value_dim = config_.head_dim;
  reserve("capacity", config.capacity);
}

Index KVCache::key_floats(Index capacity) const {
  return detail::round_up(capacity, kPositionsPerPanel) * config_.head_dim;
}

Index KVCache::value_floats(Index capacity) const {
  return detail::round_up(config_.value_dim, detail::kPanel) * capacity;
}

// In double: on wasm32 Index is 32 bits, and a refused capacity's float count may not fit it.
double KVCache::storage_bytes(double capacity) const {
  const double panel = static_cast<double>(kPositionsPerPanel);
  const double key_floats = std::ceil(capacity / panel) * panel * config_.head_dim;
  const double value_floats =
      static_cast<double>(detail::round_up(config_.value_dim, detail::kPanel)) * capacity;
  return static_cast<double>(config_.batch) * static_cast<double>(config_.heads) *
         (key_floats + value_floats) * sizeof(float);
}

// Moves to storage for `capacity` positions, keeping the first length_: all allocation happens
// before anything changes, so a failure leaves the cache as it was.
void KVCache::reserve(const char* argument, Index capacity) {
  require_storage(argument, storage_bytes(static_cast<double>(capacity)),
                  static_cast<double>(capacity));
  const auto seq_keys = static_cast<size_t>(key_floats(capacity));
  const auto seq_values = static_cast<size_t>(value_floats(capacity));
  std::vector<float> keys(seq_keys * static_cast<size_t>(sequences()));
  std::vector<float> values(seq_values * static_cast<size_t>(sequences()));
  const Index value_panels = detail::round_up(config_.value_dim, detail::kPanel) / detail::kPanel;
  const Index kept_key_floats = detail::round_up(length_, kPositionsPerPanel) * config_.head_dim;
  for (Index s = 0; s < sequences(); ++s) {
    // Key panels do not depend on the capacity; value panels are [capacity][16] each.
    const float* old_keys = keys_.data() + s * key_floats(capacity_);
    std::copy(old_keys, old_keys + kept_key_floats, keys.data() + s * key_floats(capacity));
    for (Index p = 0; p < value_panels; ++p) {
      const float* old_panel =
          values_.data() + s * value_floats(capacity_) + p * detail::kPanel * capacity_;
      std::copy(old_panel, old_panel + length_ * detail::kPanel,
                values.data() + s * value_floats(capacity) + p * detail::kPanel * capacity);
    }
  }
  keys_ = std::move(keys);
  values_ = std::move(values);
  capacity_ = capacity;
}

void KVCache::reserve_append(Index t) {
  if (t < 0) detail::fail("t", "a count >= 0", std::to_string(t));
  const double needed = static_cast<double>(length_) + static_cast<double>(t);
  if (needed <= static_cast<double>(capacity_)) return;
  require_storage("k", storage_bytes(needed), needed);
  // Geometric growth, unless doubling alone would pass the limit while the need does not.
  const double doubled = std::max(2.0 * static_cast<double>(capacity_), needed);
  const bool doubling_fits = storage_bytes(doubled) < static_cast<double>(kMaxBytes);
  reserve("k", static_cast<Index>(doubling_fits ? doubled : needed));
}

void KVCache::append(const float* k, const std::vector<Index>& k_shape, const float* v,
                     const std::vector<Index>& v_shape) {
  const Index batch = config_.batch, heads = config_.heads;
  const Index d = config_.head_dim, dv = config_.value_dim;
  detail::require_shape("k", {batch, heads, -1, d}, k_shape);
  const Index t = k_shape[2];
  detail::require_shape("v", {batch, heads, t, dv}, v_shape);
  reserve_append(t);
  for (Index s = 0; s < sequences(); ++s) {
    float* keys = keys_.data() + s * key_floats(capacity_);
    float* values = values_.data() + s * value_floats(capacity_);
    for (Index r = 0; r < t; ++r) {
      const Index position = length_ + r;
      // Position p is lane p % 16 of key panel p / 16, whose row c holds the keys' entry c.
      float* panel = keys + position / kPositionsPerPanel * kPositionsPerPanel * d +
                     position % kPositionsPerPanel;
      const float* key = k + (s * t + r) * d;
      for (Index c = 0; c < d; ++c) panel[c * kPositionsPerPanel] = key[c];
      // Value column c is lane c % 16 of row `position` of value panel c / 16.
      const float* value = v + (s * t + r) * dv;
      for (Index c = 0; c < dv; ++c) {
        values[c / detail::kPanel * detail::kPanel * capacity_ + position * detail::kPanel +
               c % detail::kPanel] = value[c];
      }
    }
  }
  length_ += t;
}

void KVCache::attend(const float* q, const std::vector<Index>& q_shape, float* out,
                     std::optional<float> scale) const {
  const Index batch = config_.batch, heads = config_.heads;
  const Index d = config_.head_dim, dv = config_.value_dim;
  detail::require_shape("q", {batch, heads, -1, d}, q_shape);
  const Index nq = q_shape[2];
  if (nq > length_) {
    detail::fail("q", "at most length() = " + std::to_string(length_) + " queries",
                 std::to_string(nq));
  }
  if (scale && !std::isfinite(*scale)) {
    detail::fail("scale", "a finite number", detail::number_string(*scale));
  }
  const float s = scale.value_or(1.0f / std::sqrt(static_cast<float>(d)));
  // Query i sees the first length - nq + i + 1 positions: d2l's valid lengths, one per query.
  // A single query sees everything and needs no mask.
  Mask mask;
  mask.fill = -std::numeric_limits<float>::infinity();
  if (nq > 1) {
    for (Index b = 0; b < batch; ++b) {
      for (Index i = 0; i < nq; ++i) {
        mask.valid_lens.push_back(static_cast<int32_t>(length_ - nq + i + 1));
      }
    }
  }
  // The scale goes into the queries (the cached keys are kept unscaled).
  std::vector<float> scaled(static_cast<size_t>(sequences() * nq * d));
  for (size_t t = 0; t < scaled.size(); ++t) scaled[t] = q[t] * s;
  detail::attention_fused_packed(scaled.data(), {keys_.data(), values_.data(), capacity_},
                                 key_floats(capacity_), value_floats(capacity_), sequences(), nq,
                                 length_, d, dv, mask, heads, out);
}

void KVCache::truncate(Index n) {
  if (n < 0 || n > length_) {
    detail::fail("n", "a length in [0, " + std::to_string(length_) + "]", std::to_string(n));
  }
  length_ = n;
}

}  // namespace attn
