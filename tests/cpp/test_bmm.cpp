// Batch matrix multiplication.

#include <catch2/catch.hpp>
#include <vector>

#include "attn/bmm.hpp"
#include "reference.hpp"

using attn::Index;
using attn::Tensor3;

TEST_CASE("bmm matches naive loops on non-square shapes", "[bmm]") {
  // Sizes that are not multiples of any SIMD tile.
  const Tensor3 a = ref::random_tensor(3, 5, 7, 1);
  const Tensor3 b = ref::random_tensor(3, 7, 2, 2);
  const Tensor3 out = attn::bmm(a, b);
  ref::check_close(out, ref::bmm(ref::to_double(a), ref::to_double(b)), ref::kSum);
}

TEST_CASE("bmm matches naive loops with a long inner dimension", "[bmm]") {
  const Tensor3 a = ref::random_tensor(2, 9, 67, 3);
  const Tensor3 b = ref::random_tensor(2, 67, 13, 4);
  ref::check_close(attn::bmm(a, b), ref::bmm(ref::to_double(a), ref::to_double(b)), ref::kSum);
}

TEST_CASE("bmm with a vector on either side is a matrix-vector product", "[bmm]") {
  const Tensor3 row = ref::random_tensor(2, 1, 6, 5);
  const Tensor3 m = ref::random_tensor(2, 6, 4, 6);
  const Tensor3 col = ref::random_tensor(2, 4, 1, 7);
  ref::check_close(attn::bmm(row, m), ref::bmm(ref::to_double(row), ref::to_double(m)), ref::kSum);
  ref::check_close(attn::bmm(m, col), ref::bmm(ref::to_double(m), ref::to_double(col)), ref::kSum);
}

TEST_CASE("bmm with inner dimension 0 gives zeros", "[bmm]") {
  const Tensor3 a(2, 3, 0);
  const Tensor3 b(2, 0, 4);
  const Tensor3 out = attn::bmm(a, b);
  REQUIRE(out.batch == 2);
  REQUIRE(out.rows == 3);
  REQUIRE(out.cols == 4);
  for (float x : out.data) CHECK(x == 0.0f);

  // The view overload must overwrite whatever the buffer held.
  Tensor3 dirty(2, 3, 4, 7.0f);
  attn::bmm(a.view(), b.view(), dirty.view());
  for (float x : dirty.data) CHECK(x == 0.0f);
}

TEST_CASE("bmm by a batch of identities returns the other operand", "[bmm]") {
  const Tensor3 a = ref::random_tensor(3, 4, 5, 8);
  Tensor3 eye(3, 5, 5);
  for (Index s = 0; s < 3; ++s)
    for (Index i = 0; i < 5; ++i) eye.at(s, i, i) = 1.0f;
  CHECK(attn::bmm(a, eye).data == a.data);
}

TEST_CASE("The view overload of bmm writes into the caller's buffer", "[bmm]") {
  const Tensor3 a = ref::random_tensor(2, 3, 4, 9);
  const Tensor3 b = ref::random_tensor(2, 4, 5, 10);
  Tensor3 out(2, 3, 5, -1.0f);
  attn::bmm(a.view(), b.view(), out.view());
  ref::check_close(out, ref::bmm(ref::to_double(a), ref::to_double(b)), ref::kSum);
  CHECK(out.data == attn::bmm(a, b).data);
}

TEST_CASE("bmm of an empty batch is an empty batch", "[bmm]") {
  const Tensor3 out = attn::bmm(Tensor3(0, 3, 4), Tensor3(0, 4, 2));
  CHECK(out.batch == 0);
  CHECK(out.rows == 3);
  CHECK(out.cols == 2);
  CHECK(out.data.empty());
}
