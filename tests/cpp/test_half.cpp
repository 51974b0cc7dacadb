// IEEE half precision for the KV cache's storage: rounding a float to a half (to nearest, ties
// to even, with subnormals, overflow to infinity and NaN) and widening every one of the 65536
// halves back, against the definition of binary16 evaluated in double.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/half.hpp"

namespace {

// The value of half bits h, from binary16's definition.
double half_value(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

uint16_t round_trip_bits(float x) { return attn::detail::float_to_half(x); }

}  // namespace

TEST_CASE("Every half widens to its exact value, sign, infinities and NaN included", "[half]") {
  // Runs of 13: eight through the 8-wide path, four through the 4-wide one, one as a tail.
  for (uint32_t h = 0; h < 65536; h += 13) {
    uint16_t in[13];
    for (int i = 0; i < 13; ++i) in[i] = static_cast<uint16_t>(h + static_cast<uint32_t>(i));
    float out[13];
    attn::detail::f32_from_halves(in, 13, out);
    for (int i = 0; i < 13; ++i) {
      const double want = half_value(in[i]);
      CAPTURE(in[i]);
      if (std::isnan(want)) {
        REQUIRE(std::isnan(out[i]));
      } else {
        REQUIRE(static_cast<double>(out[i]) == want);
        REQUIRE(std::signbit(out[i]) == std::signbit(want));
      }
    }
  }
  // A tail shorter than a vector widens the same way.
  const uint16_t tail[3] = {0x3c00, 0x8001, 0x7bff};
  float out[3];
  attn::detail::f32_from_halves(tail, 3, out);
  REQUIRE(out[0] == 1.0f);
  REQUIRE(out[1] == -0x1p-24f);
  REQUIRE(out[2] == 65504.0f);
}

TEST_CASE("A float rounds to the nearest half, ties to even", "[half]") {
  // Every half survives the trip; every float between two neighbours goes to the nearer.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const double value = half_value(bits);
    CAPTURE(h);
    REQUIRE(round_trip_bits(static_cast<float>(value)) == bits);
    REQUIRE(round_trip_bits(static_cast<float>(-value)) == (bits | 0x8000));
    if (h + 1 < 0x7c00) {
      const double next = half_value(static_cast<uint16_t>(h + 1));
      const double middle = (value + next) / 2;  // a float exactly (halves have 11 bits)
      const uint16_t even = (h % 2 == 0) ? bits : static_cast<uint16_t>(h + 1);
      REQUIRE(round_trip_bits(static_cast<float>(middle)) == even);
      REQUIRE(round_trip_bits(std::nextafter(static_cast<float>(middle), 0.0f)) == bits);
      REQUIRE(round_trip_bits(std::nextafter(static_cast<float>(middle), 1e9f)) == h + 1);
    }
  }
  REQUIRE(round_trip_bits(65519.0f) == 0x7bff);  // below the midpoint to 65536: the largest half
  REQUIRE(round_trip_bits(65520.0f) == 0x7c00);  // the midpoint: to the even neighbour, infinity
  REQUIRE(round_trip_bits(1e30f) == 0x7c00);
  REQUIRE(round_trip_bits(-std::numeric_limits<float>::infinity()) == 0xfc00);
  REQUIRE((round_trip_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7fff) > 0x7c00);
  REQUIRE(round_trip_bits(0x1p-26f) == 0);         // below half the smallest subnormal
  REQUIRE(round_trip_bits(0x1.8p-25f) == 0x0001);  // above it
}
