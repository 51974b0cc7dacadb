#pragma once
// A tiny seeded random stream (splitmix64). Native and wasm builds must draw the same numbers
// for the same seed, which std:: distributions do not promise across standard libraries.

#include <cstdint>

namespace attn::detail {

class RandomStream {
 public:
  explicit RandomStream(uint64_t seed) : seed_(seed) {}

  // Uniform in [0, 1) with 24 random bits: every value is exactly representable as a float.
  float next_uniform() { return uniform_at(drawn_++); }

  // The value the draw number `index` (from 0) of this stream gives. splitmix64 hashes a
  // counter, so any draw can be regenerated on its own: dropout's backward recreates the
  // forward's mask tile by tile this way.
  float uniform_at(uint64_t index) const {
    uint64_t z = seed_ + (index + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  }

 private:
  uint64_t seed_;
  uint64_t drawn_ = 0;
};

}  // namespace attn::detail
