// Row-wise softmax.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "attn/softmax.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Matrix;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("Softmax matches the reference on a non-square matrix", "[softmax]") {
  const Matrix x = ref::random_matrix(7, 13, 1, -4.0f, 4.0f);
  ref::check_close(attn::softmax(x), ref::softmax(ref::to_double(x)));
}

TEST_CASE("Every softmax row is non-negative and sums to 1", "[softmax]") {
  const Matrix x = ref::random_matrix(9, 33, 2, -10.0f, 10.0f);
  const Matrix p = attn::softmax(x);
  for (Index i = 0; i < p.rows(); ++i) {
    CAPTURE(i);
    CHECK(p.row(i).minCoeff() >= 0.0f);
    CHECK_THAT(p.row(i).cast<double>().sum(), Catch::Matchers::WithinAbs(1.0, 1e-6));
  }
}

TEST_CASE("Softmax is invariant to adding a constant to a row", "[softmax]") {
  // Multiples of 1/256 in [-4, 4]: adding 64 or -1000 to them is exact in float, so the shift
  // is the only difference between the two inputs.
  Matrix x(3, 10);
  const auto u = ref::uniform(30, 3, -4.0f, 4.0f);
  for (Index i = 0; i < 30; ++i) x.data()[i] = std::round(u[static_cast<size_t>(i)] * 256) / 256;
  const Matrix p = attn::softmax(x);
  for (float shift : {64.0f, -1000.0f}) {
    CAPTURE(shift);
    const Matrix shifted = x.array() + shift;
    ref::check_close(attn::softmax(shifted), ref::to_double(p), ref::kTight, "shifted");
  }
}

TEST_CASE("Two-logit rows follow the logistic closed form over exp's whole float range",
          "[softmax]") {
  // softmax([x, 0])[0] = e^x / (1 + e^x). x runs through [-87, 0] in steps that are not
  // multiples of ln 2 / 2, so the vector exp's range reduction meets every rounding position
  // of x log2(e), and its polynomial is checked across the whole reduced interval (e^x is still
  // a normal float at -87). The bound: a few float roundings in the softmax, plus exp's
  // condition number |x| times the rounding of the float argument x log2(e) (and of log2(e)).
  const Index count = 20000;
  Matrix x(count, 2);
  for (Index i = 0; i < count; ++i) {
    x(i, 0) = -87.0f * static_cast<float>(i) / static_cast<float>(count - 1);
    x(i, 1) = 0.0f;
  }
  const Matrix p = attn::softmax(x);
  for (Index i = 0; i < count; ++i) {
    const double e = std::exp(static_cast<double>(x(i, 0)));
    const double relative_error = std::abs(p(i, 0) / (e / (1.0 + e)) - 1.0);
    if (relative_error > 4e-7 + 1e-7 * std::abs(x(i, 0)))
      FAIL_CHECK("x = " << x(i, 0) << ": relative error " << relative_error);
  }
}

TEST_CASE("Logits of +-1e4 give finite and correct results", "[softmax]") {
  Matrix x(3, 4);
  x << 1e4f, -1e4f, 0.0f, 9999.0f,    //
      -1e4f, -1e4f, -9998.0f, -1e4f,  //
      1e4f, 1e4f, 1e4f, 1e4f;
  const Matrix p = attn::softmax(x);
  CHECK(p.allFinite());
  ref::check_close(p, ref::softmax(ref::to_double(x)));
  // Closed forms: e / (1 + e) and 1 / (1 + e) in the first row, 1/4 each in the last.
  CHECK_THAT(p(0, 0), Catch::Matchers::WithinRel(1.0 / (1.0 + std::exp(-1.0)), 1e-6));
  CHECK(p(0, 1) == 0.0f);
  CHECK(p(2, 3) == 0.25f);
}

TEST_CASE("Logits in [90, 100], where expf overflows unless the max is subtracted, are exact",
          "[softmax]") {
  // expf(89) is the largest finite power: exp(90) > FLT_MAX.
  const Matrix x = ref::random_matrix(5, 17, 4, 90.0f, 100.0f);
  const Matrix p = attn::softmax(x);
  CHECK(p.allFinite());
  ref::check_close(p, ref::softmax(ref::to_double(x)));
}

TEST_CASE("A row of length 1 is 1 whatever its logit", "[softmax]") {
  Matrix x(5, 1);
  x << 0.0f, 1e4f, -1e4f, 1e30f, -1e30f;
  const Matrix p = attn::softmax(x);
  for (Index i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(p(i, 0) == 1.0f);
  }
}

TEST_CASE("Matrices with zero rows or zero columns keep their shape", "[softmax]") {
  for (auto [rows, cols] : {std::pair<Index, Index>{0, 5}, {5, 0}, {0, 0}}) {
    CAPTURE(rows, cols);
    const Matrix x(rows, cols);
    const Matrix p = attn::softmax(x);
    CHECK(p.rows() == rows);
    CHECK(p.cols() == cols);
    Matrix y(rows, cols);
    attn::softmax_in_place(attn::MatrixMap(y.data(), rows, cols));
    CHECK(y.size() == rows * cols);
  }
}

TEST_CASE("softmax_in_place gives the same result as softmax", "[softmax]") {
  const Matrix x = ref::random_matrix(4, 11, 5, -3.0f, 3.0f);
  Matrix y = x;
  attn::softmax_in_place(attn::MatrixMap(y.data(), y.rows(), y.cols()));
  CHECK(y == attn::softmax(x));
}

TEST_CASE("Entries of -infinity get weight 0 when the row has a finite entry", "[softmax]") {
  Matrix x(1, 4);
  x << -kInf, 0.0f, -kInf, std::log(3.0f);
  const Matrix p = attn::softmax(x);
  CHECK(p(0, 0) == 0.0f);
  CHECK(p(0, 2) == 0.0f);
  CHECK_THAT(p(0, 1), Catch::Matchers::WithinRel(0.25, 1e-6));
  CHECK_THAT(p(0, 3), Catch::Matchers::WithinRel(0.75, 1e-6));
}

TEST_CASE("A row of -infinity becomes NaN, as in PyTorch", "[softmax]") {
  Matrix x(2, 3);
  x << -kInf, -kInf, -kInf,  //
      1.0f, 2.0f, 3.0f;
  const Matrix p = attn::softmax(x);
  for (Index j = 0; j < 3; ++j) CHECK(std::isnan(p(0, j)));
  ref::check_close(Matrix(p.row(1)), ref::softmax(ref::to_double(Matrix(x.row(1)))));
}
