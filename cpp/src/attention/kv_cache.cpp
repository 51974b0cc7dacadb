#include "attn/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/half.hpp"
#include "unfused_attention.hpp"

namespace attn {

namespace {

constexpr Index kPositionsPerPanel = detail::kPanel;

// A key or value entry as the cache stores it: a float, or a float rounded to a half.
void store(float& to, float x) { to = x; }
void store(uint16_t& to, float x) { to = detail::float_to_half(x); }

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
  if (config_.kv_heads == 0) config_.kv_heads = config_.heads;
  if (config_.kv_heads < 0 || config_.heads % config_.kv_heads != 0) {
    detail::fail("kv_heads", "a divisor of heads = " + std::to_string(config_.heads),
                 std::to_string(config.kv_heads));
  }
  if (config.window < 0) detail::fail("window", "a size >= 0", std::to_string(config.window));
  if (config.rotary) {  // its dim and base, checked as apply_rotary checks them
    apply_rotary(ConstBatch{nullptr, 0, 0, config_.head_dim}, 1, *config.rotary,
                 MutableBatch{nullptr, 0, 0, config_.head_dim});
  }
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
  const double element = config_.dtype == KVCacheDtype::F16 ? sizeof(uint16_t) : sizeof(float);
  return static_cast<double>(sequences()) * (key_floats + value_floats) * element;
}

// Moves to storage for `capacity` positions, keeping the first length_: all allocation happens
// before anything changes, so a failure leaves the cache as it was.
void KVCache::reserve(const char* argument, Index capacity) {
  require_storage(argument, storage_bytes(static_cast<double>(capacity)),
                  static_cast<double>(capacity));
  with_panels([&](auto& panels) {
    using Entries = std::remove_reference_t<decltype(panels.keys)>;  // floats or halves
    Entries keys(static_cast<size_t>(key_floats(capacity) * sequences()));
    Entries values(static_cast<size_t>(value_floats(capacity) * sequences()));
    const Index value_panels = detail::round_up(config_.value_dim, detail::kPanel) / detail::kPanel;
    const Index kept_key_floats = detail::round_up(held(), kPositionsPerPanel) * config_.head_dim;
    for (Index s = 0; s < sequences(); ++s) {
      // Key panels do not depend on the capacity; value panels are [capacity][16] each.
      const auto* old_keys = panels.keys.data() + s * key_floats(capacity_);
      std::copy(old_keys, old_keys + kept_key_floats, keys.data() + s * key_floats(capacity));
      for (Index p = 0; p < value_panels; ++p) {
        const auto* old_panel =
            panels.values.data() + s * value_floats(capacity_) + p * detail::kPanel * capacity_;
        std::copy(old_panel, old_panel + held() * detail::kPanel,
                  values.data() + s * value_floats(capacity) + p * detail::kPanel * capacity);
      }
    }
    panels.keys = std::move(keys);
    panels.values = std::move(values);
  });
  capacity_ = capacity;
}

// A query at position p or later sees positions from p - window + 1 on: once the next append of
// t comes, the last window - 1 positions held are all any query can see. They move to the front
// when the storage is full and at least twice the window (so that a move of window - 1
// positions comes once every window appends or more); below that the storage grows instead.
void KVCache::drop_unseen(Index t) {
  const Index keep = config_.window - 1;
  if (config_.window == 0 || held() + t <= capacity_ || held() <= keep ||
      capacity_ < 2 * config_.window) {
    return;
  }
  const Index drop = held() - keep, d = config_.head_dim;
  const Index value_panels = detail::round_up(config_.value_dim, detail::kPanel) / detail::kPanel;
  with_panels([&](auto& panels) {
    for (Index s = 0; s < sequences(); ++s) {
      auto* keys = panels.keys.data() + s * key_floats(capacity_);
      auto* values = panels.values.data() + s * value_floats(capacity_);
      // Slot p's key entry c is lane p % 16 of row c of key panel p / 16.
      const auto key = [&](Index slot, Index c) -> auto& {
        return keys[slot / kPositionsPerPanel * kPositionsPerPanel * d + c * kPositionsPerPanel +
                    slot % kPositionsPerPanel];
      };
      for (Index slot = 0; slot < keep; ++slot) {
        for (Index c = 0; c < d; ++c) key(slot, c) = key(slot + drop, c);
      }
      for (Index p = 0; p < value_panels; ++p) {
        auto* panel = values + p * detail::kPanel * capacity_;
        std::copy(panel + drop * detail::kPanel, panel + held() * detail::kPanel, panel);
      }
    }
  });
  first_ += drop;
}

void KVCache::reserve_append(Index t) {
  if (t < 0) detail::fail("t", "a count >= 0", std::to_string(t));
  drop_unseen(t);
  const double needed = static_cast<double>(held()) + static_cast<double>(t);
  if (needed <= static_cast<double>(capacity_)) return;
  require_storage("k", storage_bytes(needed), needed);
  // Geometric growth, unless doubling alone would pass the limit while the need does not.
  const double doubled = std::max(2.0 * static_cast<double>(capacity_), needed);
  const bool doubling_fits = storage_bytes(doubled) < static_cast<double>(kMaxBytes);
  reserve("k", static_cast<Index>(doubling_fits ? doubled : needed));
}

void KVCache::append(const float* k, const std::vector<Index>& k_shape, const float* v,
                     const std::vector<Index>& v_shape) {
  const Index batch = config_.batch, heads = config_.kv_heads;
  const Index d = config_.head_dim, dv = config_.value_dim;
  detail::require_shape("k", {batch, heads, -1, d}, k_shape);
  const Index t = k_shape[2];
  detail::require_shape("v", {batch, heads, t, dv}, v_shape);
  std::vector<float> rotated;
  if (config_.rotary) {  // the keys at their true positions
    rotated.resize(static_cast<size_t>(sequences() * t * d));
    RotaryOptions rotary = *config_.rotary;
    rotary.positions.clear();
    rotary.offset = length_;
    apply_rotary(ConstBatch{k, sequences(), t, d}, 1, rotary,
                 MutableBatch{rotated.data(), sequences(), t, d});
    k = rotated.data();
  }
  reserve_append(t);
  with_panels([&](auto& panels) {
    for (Index s = 0; s < sequences(); ++s) {
      auto* keys = panels.keys.data() + s * key_floats(capacity_);
      auto* values = panels.values.data() + s * value_floats(capacity_);
      for (Index r = 0; r < t; ++r) {
        const Index position = held() + r;  // the slot
        // Position p is lane p % 16 of key panel p / 16, whose row c holds the keys' entry c.
        auto* panel = keys + position / kPositionsPerPanel * kPositionsPerPanel * d +
                      position % kPositionsPerPanel;
        const float* key = k + (s * t + r) * d;
        for (Index c = 0; c < d; ++c) store(panel[c * kPositionsPerPanel], key[c]);
        // Value column c is lane c % 16 of row `position` of value panel c / 16.
        const float* value = v + (s * t + r) * dv;
        for (Index c = 0; c < dv; ++c) {
          store(values[c / detail::kPanel * detail::kPanel * capacity_ + position * detail::kPanel +
                       c % detail::kPanel],
                value[c]);
        }
      }
    }
  });
  length_ += t;
}

void KVCache::attend(const float* q, const std::vector<Index>& q_shape, float* out,
                     std::optional<float> scale) const {
  KVCacheAttendOptions options;
  options.scale = scale;
  attend(q, q_shape, out, options);
}

void KVCache::attend(const float* q, const std::vector<Index>& q_shape, float* out,
                     const KVCacheAttendOptions& options, float* lse) const {
  const Index batch = config_.batch, heads = config_.heads, window = config_.window;
  const Index d = config_.head_dim, dv = config_.value_dim;
  detail::require_shape("q", {batch, heads, -1, d}, q_shape);
  const Index nq = q_shape[2];
  if (nq > length_) {
    detail::fail("q", "at most length() = " + std::to_string(length_) + " queries",
                 std::to_string(nq));
  }
  // The first query, at position length - nq, sees back to length - nq - window + 1.
  if (window > 0 && std::max<Index>(0, length_ - nq - window + 1) < first_) {
    detail::fail("q",
                 "at most " + std::to_string(std::max<Index>(0, held() - window + 1)) +
                     " queries now: their windows reach back to positions " +
                     std::to_string(length_ - nq - window + 1) + ".., and the cache holds " +
                     std::to_string(first_) + ".. (append before attending again)",
                 std::to_string(nq));
  }
  if (options.scale && !std::isfinite(*options.scale)) {
    detail::fail("scale", "a finite number", detail::number_string(*options.scale));
  }
  detail::FusedExtras extras;
  extras.modifiers =
      detail::check_modifiers(options.softcap, options.alibi_slopes, options.sinks, heads);
  extras.kv_heads = config_.kv_heads;
  extras.lse = lse;
  const float s = options.scale.value_or(1.0f / std::sqrt(static_cast<float>(d)));
  // The queries at their true positions, and the scale in them (the cached keys are kept
  // unscaled).
  const Index matrices = batch * heads;
  std::vector<float> scaled(q, q + matrices * nq * d);
  if (config_.rotary) {
    RotaryOptions rotary = *config_.rotary;
    rotary.positions.clear();
    rotary.offset = length_ - nq;
    apply_rotary(ConstBatch{scaled.data(), matrices, nq, d}, 1, rotary,
                 MutableBatch{scaled.data(), matrices, nq, d});
  }
  for (float& x : scaled) x *= s;
  // Query i sits at slot length - nq + i - first and sees the slots up to its own (the last
  // `window` of them). A single query without a window sees everything: no mask.
  Mask mask;
  mask.fill = -std::numeric_limits<float>::infinity();
  mask.causal = nq > 1 || window > 0;
  mask.window_left = window > 0 ? window - 1 : -1;
  const bool half = config_.dtype == KVCacheDtype::F16;
  const detail::PackedKeysValues panels =
      half ? detail::PackedKeysValues{nullptr, nullptr, capacity_, halves_.keys.data(),
                                      halves_.values.data()}
           : detail::PackedKeysValues{floats_.keys.data(), floats_.values.data(), capacity_};
  detail::attention_fused_packed(scaled.data(), panels, key_floats(capacity_),
                                 value_floats(capacity_), matrices, nq, held(), d, dv, mask, heads,
                                 out, extras, length_ - nq - first_);
}

void KVCache::truncate(Index n) {
  if (n < first_ || n > length_) {
    detail::fail("n",
                 "a length in [" + std::to_string(first_) + ", " + std::to_string(length_) + "]" +
                     (first_ > 0 ? " (the window dropped the positions before)" : ""),
                 std::to_string(n));
  }
  length_ = n;
}

}  // namespace attn
