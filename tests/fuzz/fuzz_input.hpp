#pragma once
// Turns a fuzzer's bytes into arguments: small sizes, choices among named edge cases, and tensors
// drawn from a stream seeded by the input, so that a short input describes a large tensor and
// one mutated seed byte changes all of it. A used-up input reads as zeros, so every byte string
// decodes to some call.

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

#include "kernels/random_stream.hpp"

namespace fuzz {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t byte() {
    if (size_ == 0) return 0;
    --size_;
    return *data_++;
  }
  int below(int n) { return byte() % n; }
  bool flag() { return byte() & 1; }
  uint64_t seed() { return static_cast<uint64_t>(byte()) << 8 | byte(); }
  // One of `choices`, indexed by the next byte.
  template <typename T>
  T pick(std::initializer_list<T> choices) {
    return choices.begin()[below(static_cast<int>(choices.size()))];
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

// Draws from the core's own seeded stream (splitmix64): the fuzzer needs no second generator.
class Stream {
 public:
  explicit Stream(uint64_t seed) : random_(seed) {}
  float uniform(float lo, float hi) { return lo + (hi - lo) * random_.next_uniform(); }
  // Uniform in [0, n) for n <= 2^24 (the stream's 24 bits).
  uint32_t below(uint64_t n) { return static_cast<uint32_t>(random_.next_uniform() * n); }
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  attn::detail::RandomStream random_;
};

// Tame values lie in [-scale, scale], where every documented result is finite. Wild values add
// what a hostile caller can pass: NaN, infinities, the float extremes, denormals and -0.
enum class Values { Tame, Wild };

inline std::vector<float> tensor(size_t n, Stream& stream, Values values, float scale) {
  static constexpr float kSpecial[] = {kNaN,    kInf,         -kInf, FLT_MAX, -FLT_MAX,
                                       FLT_MIN, FLT_TRUE_MIN, -0.0f, 1e30f,   -1e30f};
  std::vector<float> out(n);
  for (float& x : out) {
    x = values == Values::Wild && stream.chance(20)
            ? kSpecial[stream.below(sizeof kSpecial / sizeof *kSpecial)]
            : stream.uniform(-scale, scale);
  }
  return out;
}

// 0/1 bytes with roughly `percent` ones.
inline std::vector<uint8_t> bits(size_t n, Stream& stream, unsigned percent) {
  std::vector<uint8_t> out(n);
  for (uint8_t& x : out) x = stream.chance(percent) ? 1 : 0;
  return out;
}

}  // namespace fuzz
