// Rotary position embeddings: apply_rotary and apply_rotary_backward against a double-precision
// reference written here from the formulas (both pairings, partial dim, every way to give
// positions), the backward as the forward's adjoint and inverse, the same bits on any thread
// count, the PyTorch fixture (tests/fixtures/modern/rotary.json, scripts/fixtures/rotary.py) and
// every rejected argument.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/rotary.hpp"
#include "attn/threads.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

using attn::Index;
using attn::RotaryOptions;
using attn::Tensor3;

namespace {

// The position of row i of matrix m (batch row m / heads), as the options say.
double position_of(const RotaryOptions& o, Index m, Index i, Index heads, Index n) {
  if (o.positions.empty()) return static_cast<double>(o.offset + i);
  const bool per_row = static_cast<Index>(o.positions.size()) != n;
  return o.positions[static_cast<size_t>(per_row ? m / heads * n + i : i)];
}

// The rotation in double, straight from the formulas; sign -1 turns by the opposite angles.
ref::Batch rotary_reference(const Tensor3& x, Index heads, const RotaryOptions& o,
                            double sign = 1.0) {
  ref::Batch out = ref::to_double(x);
  const Index d = x.cols, dim = o.dim == 0 ? d : o.dim, half = dim / 2;
  for (Index m = 0; m < x.batch; ++m) {
    for (Index i = 0; i < x.rows; ++i) {
      const double p = position_of(o, m, i, heads, x.rows);
      for (Index k = 0; k < half; ++k) {
        const double angle = sign * p * std::pow(static_cast<double>(o.base), -2.0 * k / dim);
        const Index first = o.interleaved ? 2 * k : k,
                    second = o.interleaved ? 2 * k + 1 : k + half;
        const double a = x.at(m, i, first), b = x.at(m, i, second);
        out(m, i, first) = a * std::cos(angle) - b * std::sin(angle);
        out(m, i, second) = b * std::cos(angle) + a * std::sin(angle);
      }
    }
  }
  return out;
}

Tensor3 backward(const Tensor3& grad, Index heads, const RotaryOptions& options) {
  Tensor3 out(grad.batch, grad.rows, grad.cols);
  attn::apply_rotary_backward(grad.view(), heads, options, out.view());
  return out;
}

RotaryOptions options_with(bool interleaved, Index dim = 0, Index offset = 0,
                           std::vector<int32_t> positions = {}, float base = 10000.0f) {
  RotaryOptions o;
  o.interleaved = interleaved;
  o.dim = dim;
  o.offset = offset;
  o.positions = std::move(positions);
  o.base = base;
  return o;
}

std::string describe(const RotaryOptions& o) {
  return std::string(o.interleaved ? "interleaved" : "half-split") + " dim " +
         std::to_string(o.dim) + " offset " + std::to_string(o.offset) + " positions " +
         std::to_string(o.positions.size()) + " base " + std::to_string(o.base);
}

bool same_bits(const Tensor3& a, const Tensor3& b) {
  return a.data.size() == b.data.size() &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

// A rotation's error against the double reference: each output is a * cos - b * sin of float
// values, with cos and sin rounded once from double: a few float roundings of |a| + |b| <= 2
// (inputs in [-1, 1]), i.e. at most ~5e-7, inside the design's 1e-5 relative / 1e-6 absolute.
constexpr ref::Tolerance kRotation = ref::kTight;

}  // namespace

TEST_CASE(
    "Rotary embeddings in both pairings match the double reference on [B, n, d] and [B, H, n, d]",
    "[rotary]") {
  const Index batch = 2, n = 5, d = 12;
  const std::vector<int32_t> per_position{4, 0, 17, 17, 2};
  const std::vector<int32_t> per_row{0, 1, 2, 3, 4, 30, 9, 9, 0, 511};
  for (Index heads : {1, 3}) {
    const Tensor3 x = ref::random_tensor(batch * heads, n, d, static_cast<uint32_t>(10 + heads));
    for (bool interleaved : {false, true}) {
      for (Index dim : {Index{0}, Index{12}, Index{8}, Index{2}}) {
        for (const RotaryOptions& o :
             {options_with(interleaved, dim), options_with(interleaved, dim, 7),
              options_with(interleaved, dim, 0, per_position),
              options_with(interleaved, dim, 3, per_row),  // offset unused with positions
              options_with(interleaved, dim, 0, {}, 500.0f)}) {
          CAPTURE(heads, describe(o));
          ref::check_close(attn::apply_rotary(x, heads, o), rotary_reference(x, heads, o),
                           kRotation, "forward");
          ref::check_close(backward(x, heads, o), rotary_reference(x, heads, o, -1.0), kRotation,
                           "backward");
        }
      }
    }
  }
}

TEST_CASE("Rotary pairings rotate different features, and the default is the half split",
          "[rotary]") {
  // One row at position 1 with d = 4, frequencies 1 and 1/100: the half split turns (x0, x2)
  // by 1 radian, the interleaved pairing (x0, x1).
  Tensor3 x(1, 1, 4);
  x.data = {1.0f, 0.0f, 0.0f, 0.0f};
  const Tensor3 half = attn::apply_rotary(x, 1, options_with(false, 0, 1));
  const Tensor3 pairs = attn::apply_rotary(x, 1, options_with(true, 0, 1));
  RotaryOptions defaults;
  defaults.offset = 1;
  const Tensor3 by_default = attn::apply_rotary(x, 1, defaults);
  using Catch::Matchers::WithinAbs;
  CHECK_THAT(half.data[0], WithinAbs(std::cos(1.0), 1e-7));
  CHECK(half.data[1] == 0.0f);
  CHECK_THAT(half.data[2], WithinAbs(std::sin(1.0), 1e-7));
  CHECK_THAT(pairs.data[0], WithinAbs(std::cos(1.0), 1e-7));
  CHECK_THAT(pairs.data[1], WithinAbs(std::sin(1.0), 1e-7));
  CHECK(pairs.data[2] == 0.0f);
  CHECK(same_bits(by_default, half));
}

TEST_CASE("Rotary embeddings leave position 0 and the features past dim exactly as they are",
          "[rotary]") {
  const Tensor3 x = ref::random_tensor(2, 4, 10, 21);
  for (bool interleaved : {false, true}) {
    const Tensor3 y = attn::apply_rotary(x, 1, options_with(interleaved, 6, 0, {0, 5, 0, 9}));
    for (Index b = 0; b < 2; ++b) {
      for (Index j = 0; j < 10; ++j) {
        CAPTURE(interleaved, b, j);
        CHECK(y.at(b, 0, j) == x.at(b, 0, j));  // cos 0 = 1, sin 0 = 0
        CHECK(y.at(b, 2, j) == x.at(b, 2, j));
        if (j >= 6) CHECK(y.at(b, 1, j) == x.at(b, 1, j));
      }
    }
  }
}

TEST_CASE("Rotary embeddings at positions near 1e5 and 2^20 keep float's accuracy", "[rotary]") {
  // In float, position * theta_0 would round to within position * 2^-24 radians: 6e-3 at 1e5 and
  // 0.06 at 2^20, far outside kRotation. The angles are formed in double (error ~1e-16 of the
  // angle, 1e-10 radians at 2^20) and their cos and sin rounded once, so the error stays the few
  // float roundings of small positions. A pair of frequency base^(-2k/dim) this close to 1 (k = 0)
  // is the one that turns fastest.
  const std::vector<int32_t> positions{0,     99999,  100000,  100001, 1 << 20, (1 << 20) - 1,
                                       65536, 123457, 1 << 30, 7};
  const Tensor3 x = ref::random_tensor(4, 5, 16, 33);  // B = 2, H = 2
  for (bool interleaved : {false, true}) {
    const RotaryOptions o = options_with(interleaved, 0, 0, positions);
    CAPTURE(interleaved);
    ref::check_close(attn::apply_rotary(x, 2, o), rotary_reference(x, 2, o), kRotation, "forward");
    ref::check_close(backward(x, 2, o), rotary_reference(x, 2, o, -1.0), kRotation, "backward");
    // Through the offset too: positions offset .. offset + n - 1.
    const RotaryOptions shifted = options_with(interleaved, 0, (Index{1} << 20) - 2);
    ref::check_close(attn::apply_rotary(x, 2, shifted), rotary_reference(x, 2, shifted), kRotation,
                     "offset");
  }
}

TEST_CASE("Rotary backward is the adjoint and the inverse of the forward", "[rotary]") {
  const Index heads = 2;
  const Tensor3 x = ref::random_tensor(4, 7, 10, 41), g = ref::random_tensor(4, 7, 10, 42);
  for (bool interleaved : {false, true}) {
    for (const RotaryOptions& o :
         {options_with(interleaved), options_with(interleaved, 6, 1000),
          options_with(interleaved, 4, 0, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7})}) {
      CAPTURE(describe(o));
      // <R x, g> = <x, R^T g>, the sums in double over float results: each product carries the
      // rotation's error of ~5e-7 (relative to |x| |g| <= 1), so the two sums of 280 terms agree
      // to 280 * 5e-7 = 1.4e-4 of the largest term at worst.
      const Tensor3 rx = attn::apply_rotary(x, heads, o), rtg = backward(g, heads, o);
      double left = 0.0, right = 0.0;
      for (size_t i = 0; i < x.data.size(); ++i) {
        left += static_cast<double>(rx.data[i]) * g.data[i];
        right += static_cast<double>(x.data[i]) * rtg.data[i];
      }
      CHECK_THAT(left, Catch::Matchers::WithinAbs(right, 1.4e-4));
      // R^T R x = x: two rotations' errors, at most ~1e-6 per element.
      ref::check_close(backward(rx, heads, o), ref::to_double(x), ref::Tolerance{1e-5, 2e-6},
                       "R^T R x");
    }
  }
}

TEST_CASE("Rotary embeddings may write over their input (out = x)", "[rotary]") {
  const Tensor3 x = ref::random_tensor(3, 6, 8, 51);
  for (bool interleaved : {false, true}) {
    const RotaryOptions o = options_with(interleaved, 6, 2);
    Tensor3 in_place = x;
    attn::apply_rotary(in_place.view(), 3, o, in_place.view());
    CHECK(same_bits(in_place, attn::apply_rotary(x, 3, o)));
    attn::apply_rotary_backward(in_place.view(), 3, o, in_place.view());
    ref::check_close(in_place, ref::to_double(x), ref::Tolerance{1e-5, 2e-6}, "undone in place");
  }
}

TEST_CASE("Rotary embeddings of empty inputs are empty", "[rotary]") {
  for (const Tensor3& x : {Tensor3(0, 4, 8), Tensor3(2, 0, 8), Tensor3(2, 3, 0)}) {
    const Tensor3 y = attn::apply_rotary(x, 1, options_with(true));
    CHECK(y.batch == x.batch);
    CHECK(y.rows == x.rows);
    CHECK(y.cols == x.cols);
  }
}

TEST_CASE("Rotary gives the same bits on 1, 2, 3 and 7 threads", "[rotary][threads]") {
  // Large enough for every count to split: 2048 rows of d = 96 and, with [B, n] positions, a
  // 512-row table of 32 pairs (dim 64).
  const Index batch = 2, heads = 4, n = 256, d = 96;
  const Tensor3 x = ref::random_tensor(batch * heads, n, d, 61);
  std::vector<int32_t> per_row(static_cast<size_t>(batch * n));
  for (size_t i = 0; i < per_row.size(); ++i) per_row[i] = static_cast<int32_t>((i * 7919) % 40000);
  for (const RotaryOptions& o : {options_with(false, 0, 5), options_with(true, 64, 0, per_row)}) {
    attn::set_threads(1);
    const Tensor3 one = attn::apply_rotary(x, heads, o), one_back = backward(x, heads, o);
    for (int threads : {2, 3, 7}) {
      attn::set_threads(threads);
      const Tensor3 many = attn::apply_rotary(x, heads, o), many_back = backward(x, heads, o);
      attn::set_threads(1);
      CAPTURE(threads, describe(o));
      CHECK(same_bits(one, many));
      CHECK(same_bits(one_back, many_back));
    }
  }
  attn::set_threads(1);
}

TEST_CASE("Rotary matches the PyTorch fixture (Hugging Face's and GPT-J's forms)", "[rotary]") {
  for (const fixtures::Case& c : fixtures::load("modern/rotary.json")) {
    INFO(c.name);
    // [B, n, d] or [B, H, n, d], as batch * heads matrices [n, d].
    const auto shape = fixtures::shape_of(c.inputs.at("x"));
    REQUIRE((shape.size() == 3 || shape.size() == 4));
    const Index heads = shape.size() == 4 ? shape[1] : 1;
    const auto read = [&](const fixtures::json& t) {
      Tensor3 out(shape[0] * heads, shape[shape.size() - 2], shape.back());
      out.data = fixtures::data_of<float>(t);
      return out;
    };
    RotaryOptions o;
    if (c.options.contains("positions")) {
      o.positions = fixtures::data_of<int32_t>(c.options["positions"]);
    }
    o.offset = c.options.value("offset", Index{0});
    o.base = c.options.value("base", 10000.0f);
    o.dim = c.options.value("dim", Index{0});
    o.interleaved = c.options.value("interleaved", false);
    // The fixture's rule for a rotation (scripts/fixtures/rotary.py): 2e-6 of the largest entry.
    const auto compare = [&](const Tensor3& got, const char* key) {
      const fixtures::json& want = c.expected.at(key);
      const auto expected = fixtures::data_of<double>(want);
      REQUIRE(got.data.size() == expected.size());
      ref::check_close(got.data.data(), expected.data(), expected.size(),
                       ref::Tolerance{0.0, 2e-6 * fixtures::peak(want)}, key, shape);
    };
    compare(attn::apply_rotary(read(c.inputs.at("x")), heads, o), "output");
    compare(backward(read(c.inputs.at("gradOutput")), heads, o), "dx");
  }
}

TEST_CASE("Rotary rejects each bad argument naming it", "[rotary][errors]") {
  const Tensor3 x = ref::random_tensor(4, 3, 8, 71);  // B = 2 with 2 heads
  Tensor3 out(4, 3, 8, 7.0f);
  const auto call = [&](const RotaryOptions& o, Index heads = 2) {
    attn::apply_rotary(x.view(), heads, o, out.view());
  };
  const auto call_backward = [&](const RotaryOptions& o) {
    attn::apply_rotary_backward(x.view(), 2, o, out.view());
  };
  using Catch::Matchers::StartsWith;
  CHECK_THROWS_WITH(call(options_with(false, 7)),
                    "dim: expected an even count of features in [0, d = 8], got 7");
  CHECK_THROWS_WITH(call(options_with(false, 10)), StartsWith("dim: "));
  CHECK_THROWS_WITH(call(options_with(false, -2)), StartsWith("dim: "));
  CHECK_THROWS_WITH(call_backward(options_with(true, 3)), StartsWith("dim: "));
  // d odd: dim 0 (all of d) is odd too.
  const Tensor3 odd(1, 2, 5);
  CHECK_THROWS_WITH(attn::apply_rotary(odd, 1),
                    "dim: expected an even count of features in [0, d = 5] (0 means all d, which "
                    "is odd here), got 0");
  CHECK(attn::apply_rotary(odd, 1, options_with(false, 4)).cols == 5);

  CHECK_THROWS_WITH(call(options_with(false, 0, 0, {1, 2})),
                    "positions: expected 3 (n) or 6 (batch * n) entries, got 2");
  CHECK_THROWS_WITH(call(options_with(false, 0, 0, std::vector<int32_t>(12, 1))),
                    StartsWith("positions: "));  // batch * heads * n is not batch * n
  CHECK_THROWS_WITH(call(options_with(false, 0, 0, {0, 1, 2, 3, -1, 5})),
                    "positions: expected positions >= 0, got -1 at index 4");
  CHECK_THROWS_WITH(call_backward(options_with(false, 0, 0, {0, -5, 1})),
                    StartsWith("positions: "));

  for (float base : {0.0f, -2.0f, std::nanf(""), INFINITY}) {
    CAPTURE(base);
    CHECK_THROWS_WITH(call(options_with(false, 0, 0, {}, base)),
                      StartsWith("base: expected a finite number > 0, got "));
  }
  CHECK_THROWS_WITH(call(options_with(false, 0, -1)), "offset: expected an integer >= 0, got -1");

  CHECK_THROWS_WITH(call({}, 3),
                    "heads: expected a count >= 1 that divides the input's 4 "
                    "matrices, got 3");
  CHECK_THROWS_WITH(call({}, 0), StartsWith("heads: "));
  Tensor3 wrong(4, 3, 6);
  CHECK_THROWS_WITH(attn::apply_rotary(x.view(), 2, {}, wrong.view()),
                    "out: expected shape [4, 3, 8], got [4, 3, 6]");
  // Nothing was written before the checks failed, and a good call still works.
  for (float v : out.data) REQUIRE(v == 7.0f);
  CHECK_NOTHROW(call({}));
}
