// Sinusoidal positional encoding.

#include <catch2/catch.hpp>
#include <cmath>

#include "attn/positional_encoding.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;

namespace {
// The angle i / 10000^(2j/d) is formed in float: its relative error of a few 1e-7 becomes an
// absolute error of up to ~1e-5 in sin/cos at i ~ 60, and values near 0 make a relative bound
// meaningless, so positions up to 64 are checked to 2e-5 absolute.
constexpr ref::Tolerance kAngle{1e-5, 2e-5};
}  // namespace

TEST_CASE("Positional encoding follows the closed form at chosen positions",
          "[positional_encoding]") {
  const Matrix p = attn::positional_encoding(10, 8);
  REQUIRE(p.rows() == 10);
  REQUIRE(p.cols() == 8);
  using Catch::Matchers::WithinAbs;
  // Position 0: sin 0 = 0 in even columns, cos 0 = 1 in odd ones.
  for (Index c = 0; c < 8; ++c) CHECK(p(0, c) == (c % 2 == 0 ? 0.0f : 1.0f));
  // Column pair j = 0 has frequency 1.
  CHECK_THAT(p(1, 0), WithinAbs(std::sin(1.0), 1e-6));
  CHECK_THAT(p(1, 1), WithinAbs(std::cos(1.0), 1e-6));
  CHECK_THAT(p(7, 0), WithinAbs(std::sin(7.0), 2e-6));
  // j = 1: 10000^(2/8) = 10; j = 2: 100; j = 3: 1000.
  CHECK_THAT(p(3, 2), WithinAbs(std::sin(0.3), 1e-6));
  CHECK_THAT(p(3, 3), WithinAbs(std::cos(0.3), 1e-6));
  CHECK_THAT(p(9, 4), WithinAbs(std::sin(0.09), 1e-6));
  CHECK_THAT(p(9, 5), WithinAbs(std::cos(0.09), 1e-6));
  CHECK_THAT(p(5, 6), WithinAbs(std::sin(0.005), 1e-6));
  CHECK_THAT(p(5, 7), WithinAbs(std::cos(0.005), 1e-6));
}

TEST_CASE("Positional encoding matches the reference on a larger table", "[positional_encoding]") {
  ref::check_close(attn::positional_encoding(64, 32), ref::positional_encoding(64, 32), kAngle);
}

TEST_CASE("Odd d ends with a sine column", "[positional_encoding]") {
  const Matrix p = attn::positional_encoding(6, 5);
  REQUIRE(p.cols() == 5);
  ref::check_close(p, ref::positional_encoding(6, 5), kAngle);
  // Column 4 is sin(i / 10000^(4/5)).
  for (Index i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK_THAT(p(i, 4), Catch::Matchers::WithinAbs(std::sin(i / std::pow(10000.0, 0.8)), 1e-6));
  }
  const Matrix one = attn::positional_encoding(3, 1);
  REQUIRE(one.cols() == 1);
  CHECK_THAT(one(2, 0), Catch::Matchers::WithinAbs(std::sin(2.0), 1e-6));
}

TEST_CASE("Zero positions or zero features give an empty table", "[positional_encoding]") {
  const Matrix none = attn::positional_encoding(0, 16);
  CHECK(none.rows() == 0);
  CHECK(none.cols() == 16);
  const Matrix flat = attn::positional_encoding(4, 0);
  CHECK(flat.rows() == 4);
  CHECK(flat.cols() == 0);
}

TEST_CASE("Each sine/cosine pair lies on the unit circle", "[positional_encoding]") {
  const Matrix p = attn::positional_encoding(50, 12);
  for (Index i = 0; i < 50; ++i)
    for (Index j = 0; j < 6; ++j) {
      CAPTURE(i, j);
      const double s = p(i, 2 * j), c = p(i, 2 * j + 1);
      CHECK_THAT(s * s + c * c, Catch::Matchers::WithinAbs(1.0, 1e-6));
    }
}
