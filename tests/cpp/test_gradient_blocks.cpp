// The building blocks' backward passes (softmax, masked softmax, bmm, nn.Linear) against central
// differences of their double-precision forward references.

#include <catch2/catch.hpp>
#include <vector>

#include "attn/bmm.hpp"
#include "attn/linear.hpp"
#include "attn/softmax.hpp"
#include "gradient_reference.hpp"

using attn::Index;
using attn::Matrix;
using attn::Tensor3;
using ref::Batch;
using ref::Mat;

TEST_CASE("softmax_backward matches differences, also for logits near 1e4", "[blocks]") {
  for (const float spread : {1.0f, 1e4f}) {
    const Matrix x = ref::random_matrix(4, 7, 10, -spread, spread);
    const Matrix dy = ref::random_matrix(4, 7, 11);
    const Mat dyd = ref::to_double(dy);
    auto loss = [&](const Mat& logits) {
      const Mat y = ref::softmax(logits);
      double sum = 0.0;
      for (size_t t = 0; t < y.v.size(); ++t) sum += y.v[t] * dyd.v[t];
      return sum;
    };
    const Matrix dx = attn::softmax_backward(attn::softmax(x), dy);
    ref::check_gradient(dx.data(), ref::numeric_gradient<Mat>(ref::to_double(x), loss).v, {4, 7},
                        "dx");
  }
}

TEST_CASE("masked_softmax_backward passes no gradient into masked scores", "[blocks]") {
  const Tensor3 x = ref::random_tensor(3, 2, 5, 20, -3.0f, 3.0f);
  const Tensor3 dy = ref::random_tensor(3, 2, 5, 21);
  attn::Mask mask;
  mask.valid_lens = {0, 5, 2};  // a fully masked batch row: uniform, no gradient at all
  const Batch dyd = ref::to_double(dy);
  auto loss = [&](const Batch& logits) { return ref::dot(ref::masked_softmax(logits, mask), dyd); };
  const Tensor3 dx = attn::masked_softmax_backward(attn::masked_softmax(x, mask), dy, mask);
  ref::check_gradient(dx, ref::numeric_gradient<Batch>(ref::to_double(x), loss), "dx");
  for (Index j = 0; j < 5; ++j) CHECK(dx.at(0, 1, j) == 0.0f);
  for (Index j = 2; j < 5; ++j) CHECK(dx.at(2, 0, j) == 0.0f);
}

TEST_CASE("bmm_backward matches differences on shapes that are not tile multiples", "[blocks]") {
  const Tensor3 a = ref::random_tensor(2, 3, 17, 30), b = ref::random_tensor(2, 17, 5, 31);
  const Tensor3 dc = ref::random_tensor(2, 3, 5, 32);
  const Batch ad = ref::to_double(a), bd = ref::to_double(b), dcd = ref::to_double(dc);
  const auto got = attn::bmm_backward(a, b, dc);
  ref::check_gradient(got.da,
                      ref::numeric_gradient<Batch>(
                          ad, [&](const Batch& x) { return ref::dot(ref::bmm(x, bd), dcd); }),
                      "da");
  ref::check_gradient(got.db,
                      ref::numeric_gradient<Batch>(
                          bd, [&](const Batch& x) { return ref::dot(ref::bmm(ad, x), dcd); }),
                      "db");
  CHECK_THROWS_WITH(attn::bmm_backward(a, b, Tensor3(2, 3, 4)),
                    "dc: expected shape [2, 3, 5], got [2, 3, 4]");
}

TEST_CASE("linear_backward gives dx, dW and db of y = x W^T + b", "[blocks]") {
  const Matrix x = ref::random_matrix(5, 19, 40), w = ref::random_matrix(3, 19, 41);
  const attn::Vector bias = ref::random_vector(3, 42);
  const Matrix dy = ref::random_matrix(5, 3, 43);
  const Matrix y = attn::linear(x, w, bias);
  const Batch xd = ref::to_double(ref::as_tensor(x)), dyd = ref::to_double(ref::as_tensor(dy));
  const Mat wd = ref::to_double(w);
  const std::vector<double> bd = ref::to_double(bias);
  ref::check_close(ref::as_tensor(y), ref::linear(xd, wd, bd), ref::kSum, "y");
  const auto got = attn::linear_backward(x, w, dy);
  ref::check_gradient(got.dx.data(),
                      ref::numeric_gradient<Batch>(
                          xd, [&](const Batch& v) { return ref::dot(ref::linear(v, wd, bd), dyd); })
                          .v,
                      {5, 19}, "dx");
  ref::check_gradient(got.dweight.data(),
                      ref::numeric_gradient<Mat>(
                          wd, [&](const Mat& v) { return ref::dot(ref::linear(xd, v, bd), dyd); })
                          .v,
                      {3, 19}, "dW");
  ref::check_gradient(
      got.dbias.data(),
      ref::numeric_gradient(
          bd, [&](const std::vector<double>& v) { return ref::dot(ref::linear(xd, wd, v), dyd); }),
      {3}, "db");
}
