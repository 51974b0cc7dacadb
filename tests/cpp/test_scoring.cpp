// Attention scoring functions a(q, k).

#include <catch2/catch.hpp>
#include <cmath>

#include "attn/scoring.hpp"
#include "reference.hpp"

using attn::Index;
using attn::ScoreFunction;
using attn::ScoreParams;
using attn::Tensor3;

TEST_CASE("Score function names parse", "[scoring]") {
  CHECK(attn::parse_score_function("dot") == ScoreFunction::Dot);
  CHECK(attn::parse_score_function("scaled-dot") == ScoreFunction::ScaledDot);
  CHECK(attn::parse_score_function("neg-sq-dist") == ScoreFunction::NegSquaredDistance);
  CHECK(attn::parse_score_function("additive") == ScoreFunction::Additive);
  CHECK(attn::parse_score_function("general") == ScoreFunction::General);
}

TEST_CASE("Dot scores match the reference on non-square shapes", "[scoring]") {
  const Tensor3 q = ref::random_tensor(2, 3, 7, 1);
  const Tensor3 k = ref::random_tensor(2, 5, 7, 2);
  const Tensor3 s = attn::score(ScoreFunction::Dot, q, k);
  ref::check_close(s, ref::score_dot(ref::to_double(q), ref::to_double(k)), ref::kSum);
}

TEST_CASE("Scaled dot scores divide by sqrt(d)", "[scoring]") {
  const Tensor3 q = ref::random_tensor(3, 4, 9, 3);
  const Tensor3 k = ref::random_tensor(3, 6, 9, 4);
  const Tensor3 s = attn::score(ScoreFunction::ScaledDot, q, k);
  ref::check_close(s, ref::score_scaled_dot(ref::to_double(q), ref::to_double(k)), ref::kSum);
  // Closed form: with d = 4, scale 1/2 on all-ones vectors gives 2.
  const Tensor3 ones(1, 1, 4, 1.0f);
  CHECK(attn::score(ScoreFunction::ScaledDot, ones, ones).data[0] == 2.0f);
}

TEST_CASE("Negative squared distance scores match the reference", "[scoring]") {
  const Tensor3 q = ref::random_tensor(2, 5, 3, 5, -2.0f, 2.0f);
  const Tensor3 k = ref::random_tensor(2, 4, 3, 6, -2.0f, 2.0f);
  const Tensor3 s = attn::score(ScoreFunction::NegSquaredDistance, q, k);
  ref::check_close(s, ref::score_neg_sq_dist(ref::to_double(q), ref::to_double(k)), ref::kSum);
}

TEST_CASE("Negative squared distance is 0 for a key equal to the query and < 0 otherwise",
          "[scoring]") {
  const Tensor3 q = ref::random_tensor(1, 4, 6, 7);
  const Tensor3 s = attn::score(ScoreFunction::NegSquaredDistance, q, q);
  for (Index i = 0; i < 4; ++i)
    for (Index j = 0; j < 4; ++j) {
      CAPTURE(i, j);
      if (i == j) {
        CHECK_THAT(s.at(0, i, j), Catch::Matchers::WithinAbs(0.0, 1e-6));
      } else {
        CHECK(s.at(0, i, j) < 0.0f);
      }
    }
}

TEST_CASE("Additive scores match the reference with dq != dk", "[scoring]") {
  const Index h = 8;
  const Tensor3 q = ref::random_tensor(2, 3, 5, 8);
  const Tensor3 k = ref::random_tensor(2, 6, 2, 9);
  ScoreParams params;
  params.Wq = ref::random_matrix(h, 5, 10);
  params.Wk = ref::random_matrix(h, 2, 11);
  params.wv = ref::random_vector(h, 12);
  const Tensor3 s = attn::score(ScoreFunction::Additive, q, k, params);
  ref::check_close(
      s,
      ref::score_additive(ref::to_double(q), ref::to_double(k), ref::to_double(params.Wq),
                          ref::to_double(params.Wk), ref::to_double(params.wv)),
      ref::kSum);
}

TEST_CASE("General scores q^T W k match the reference with dq != dk", "[scoring]") {
  const Tensor3 q = ref::random_tensor(2, 4, 3, 13);
  const Tensor3 k = ref::random_tensor(2, 5, 6, 14);
  ScoreParams params;
  params.W = ref::random_matrix(3, 6, 15);
  const Tensor3 s = attn::score(ScoreFunction::General, q, k, params);
  ref::check_close(
      s, ref::score_general(ref::to_double(q), ref::to_double(k), ref::to_double(params.W)),
      ref::kSum);
}

TEST_CASE("General scores with W = I are dot scores", "[scoring]") {
  const Tensor3 q = ref::random_tensor(1, 3, 4, 16);
  const Tensor3 k = ref::random_tensor(1, 2, 4, 17);
  ScoreParams params;
  params.W = attn::Matrix::Identity(4, 4);
  ref::check_close(attn::score(ScoreFunction::General, q, k, params),
                   ref::score_dot(ref::to_double(q), ref::to_double(k)), ref::kSum);
}

TEST_CASE("Every score function works with d = 1", "[scoring]") {
  const Tensor3 q = ref::random_tensor(2, 3, 1, 18);
  const Tensor3 k = ref::random_tensor(2, 4, 1, 19);
  const ref::Batch qd = ref::to_double(q), kd = ref::to_double(k);
  ref::check_close(attn::score(ScoreFunction::Dot, q, k), ref::score_dot(qd, kd), ref::kSum);
  ref::check_close(attn::score(ScoreFunction::ScaledDot, q, k), ref::score_scaled_dot(qd, kd),
                   ref::kSum);
  ref::check_close(attn::score(ScoreFunction::NegSquaredDistance, q, k),
                   ref::score_neg_sq_dist(qd, kd), ref::kSum);
  ScoreParams params;
  params.Wq = ref::random_matrix(1, 1, 20);
  params.Wk = ref::random_matrix(1, 1, 21);
  params.wv = ref::random_vector(1, 22);
  params.W = ref::random_matrix(1, 1, 23);
  ref::check_close(attn::score(ScoreFunction::Additive, q, k, params),
                   ref::score_additive(qd, kd, ref::to_double(params.Wq), ref::to_double(params.Wk),
                                       ref::to_double(params.wv)),
                   ref::kSum);
  ref::check_close(attn::score(ScoreFunction::General, q, k, params),
                   ref::score_general(qd, kd, ref::to_double(params.W)), ref::kSum);
}

TEST_CASE("The view overload of score writes into the caller's buffer", "[scoring]") {
  const Tensor3 q = ref::random_tensor(2, 3, 4, 24);
  const Tensor3 k = ref::random_tensor(2, 5, 4, 25);
  for (ScoreFunction fn :
       {ScoreFunction::Dot, ScoreFunction::ScaledDot, ScoreFunction::NegSquaredDistance}) {
    Tensor3 out(2, 3, 5, 99.0f);
    attn::score(fn, q.view(), k.view(), ScoreParams{}, out.view());
    CHECK(out.data == attn::score(fn, q, k).data);
  }
}
