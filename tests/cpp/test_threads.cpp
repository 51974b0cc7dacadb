// The thread pool and every parallel kernel: the fused forward and backward (a few score
// matrices split within each strip, many taken whole), KV-cache decoding (by key chunks), kernel
// regression and its bandwidth search, the parallel GEMM (so multi-head attention's projections
// and backward), a linear layer's bias and parameter gradients, LayerNorm (the Transformer's) and
// the Seq2Seq training step (its GRU's gates, Adam): every result equals the one-thread result bit
// for bit, for 1 to 7
// threads, on ragged shapes (query blocks of 64, key chunks and tiles of 2 cut anywhere, one
// query, none) under every mask kind and with the weights; a long run of tiny calls through the
// pool; threads calling the core at once; a bad thread count; the worker setup the wasm package
// installs its relaxed loops with.
// The native suite also runs under ThreadSanitizer (scripts/test-native.sh), which checks the
// pool's synchronisation.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "attn/activations.hpp"
#include "attn/attention.hpp"
#include "attn/bmm.hpp"
#include "attn/cross_entropy.hpp"
#include "attn/kernel_regression.hpp"
#include "attn/kv_cache.hpp"
#include "attn/layer_norm.hpp"
#include "attn/multi_head_attention.hpp"
#include "attn/scoring.hpp"
#include "attn/seq2seq.hpp"
#include "attn/softmax.hpp"
#include "attn/threads.hpp"
#include "attn/transformer.hpp"
#include "kernels/gemm.hpp"
#include "kernels/linear_layer.hpp"
#include "parallel/pool_trace.hpp"
#include "parallel/split.hpp"
#include "parallel/thread_pool.hpp"

using attn::Index;
using attn::Tensor3;

namespace {

Tensor3 wave(Index b, Index r, Index c, float rate) {
  Tensor3 t(b, r, c);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = std::sin(rate * static_cast<float>(i));
  return t;
}

// Same size and the same bits (memcmp, which is not to be given the null data of an empty one).
bool same_bits(const float* a, Index a_size, const float* b, Index b_size) {
  return a_size == b_size &&
         (a_size == 0 || std::memcmp(a, b, static_cast<size_t>(a_size) * sizeof(float)) == 0);
}
bool same_bits(const Tensor3& a, const Tensor3& b) {
  return same_bits(a.data.data(), static_cast<Index>(a.data.size()), b.data.data(),
                   static_cast<Index>(b.data.size()));
}
bool same_bits(const attn::Matrix& a, const attn::Matrix& b) {
  return a.rows() == b.rows() && same_bits(a.data(), a.size(), b.data(), b.size());
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return same_bits(a.data(), static_cast<Index>(a.size()), b.data(), static_cast<Index>(b.size()));
}

attn::MultiHeadAttention seeded_layer(Index embed_dim, Index heads, uint64_t seed) {
  attn::MultiHeadConfig config;
  config.embed_dim = embed_dim;
  config.num_heads = heads;
  attn::MultiHeadAttention mha(config);
  mha.reset_parameters(seed);
  return mha;
}

// Restores one thread when a test ends, whatever happened.
struct ThreadCount {
  explicit ThreadCount(int n) { attn::set_threads(n); }
  ~ThreadCount() { attn::set_threads(1); }
};

}  // namespace

TEST_CASE("Scaled dot-product attention gives the same bits on 1, 2, 3, 4 and 7 threads",
          "[threads]") {
  const Tensor3 q = wave(3, 131, 24, 0.37f), k = wave(3, 203, 24, 0.71f),
                v = wave(3, 203, 9, 0.13f);
  std::vector<uint8_t> bool_mask(131 * 203);
  for (size_t i = 0; i < bool_mask.size(); ++i) bool_mask[i] = (i * 7919) % 5 == 0;
  std::vector<attn::AttentionOptions> cases(5);
  cases[1].mask.valid_lens = {0, 77, 203};
  cases[2].mask.causal = true;
  for (Index i = 0; i < 3 * 131; ++i)
    cases[3].mask.valid_lens.push_back(static_cast<int32_t>(i % 204));
  cases[4].mask.bool_mask = bool_mask.data();
  cases[4].mask.bool_mask_batch = 1;
  cases[4].mask.fill = -INFINITY;
  for (size_t c = 0; c < cases.size(); ++c) {
    attn::set_threads(1);
    const attn::AttentionResult one = attn::scaled_dot_product_attention(q, k, v, cases[c], true);
    for (int threads : {2, 3, 4, 7}) {
      const ThreadCount count(threads);
      REQUIRE(attn::threads() == threads);
      const attn::AttentionResult many =
          attn::scaled_dot_product_attention(q, k, v, cases[c], true);
      CAPTURE(c, threads);
      REQUIRE(same_bits(one.output, many.output));
      REQUIRE(same_bits(one.weights, many.weights));
      const attn::AttentionResult no_weights =
          attn::scaled_dot_product_attention(q, k, v, cases[c], false);
      REQUIRE(same_bits(one.output, no_weights.output));
    }
  }
}

TEST_CASE("Multi-head attention gives the same bits on 1 and 4 threads", "[threads]") {
  const attn::MultiHeadAttention mha = seeded_layer(32, 4, 3);
  const Tensor3 x = wave(2, 70, 32, 0.23f);
  attn::MultiHeadForwardOptions options;
  options.mask.causal = true;
  attn::set_threads(1);
  const attn::AttentionResult one = mha.forward(x, x, x, options, true);
  const ThreadCount count(4);
  const attn::AttentionResult four = mha.forward(x, x, x, options, true);
  REQUIRE(same_bits(one.output, four.output));
  REQUIRE(same_bits(one.weights, four.weights));
}

TEST_CASE("The attention backward gives the same bits on 1, 2, 3, 4 and 7 threads", "[threads]") {
  // One score matrix: 150 queries are two strips and a ragged third (one group: no split), 1100
  // are seventeen strips and a ragged one in four groups (the tasks of the matrix's region; 130
  // keys end in a partial chunk), 600 are ten in two; two and nine matrices (taken whole by 2
  // threads, nine by 3 too, split otherwise); one query and one key; no queries; no keys. Under
  // every mask kind, a fill near the scores (the hidden tail is then scored after all), and
  // dropout.
  struct Shape {
    Index batch, nq, nk, d, dv;
  };
  const Shape shapes[] = {{1, 150, 300, 16, 9}, {1, 1100, 130, 8, 5}, {1, 600, 200, 16, 9},
                          {2, 65, 129, 8, 3},   {9, 20, 33, 4, 5},    {1, 1, 1, 3, 2},
                          {1, 0, 40, 4, 4},     {1, 30, 0, 4, 4}};
  for (const Shape& shape : shapes) {
    const Index b = shape.batch, nq = shape.nq, nk = shape.nk;
    const Tensor3 q = wave(b, nq, shape.d, 0.37f), k = wave(b, nk, shape.d, 0.71f),
                  v = wave(b, nk, shape.dv, 0.13f), grad = wave(b, nq, shape.dv, 0.53f);
    std::vector<uint8_t> bool_mask(static_cast<size_t>(nq * nk));
    for (size_t i = 0; i < bool_mask.size(); ++i) bool_mask[i] = (i * 7919) % 5 == 0;
    std::vector<attn::AttentionOptions> cases(7);
    for (Index i = 0; i < b; ++i)
      cases[1].mask.valid_lens.push_back(static_cast<int32_t>(i * 41 % (nk + 1)));
    cases[2].mask.causal = true;
    for (Index i = 0; i < b * nq; ++i)
      cases[3].mask.valid_lens.push_back(static_cast<int32_t>(i % (nk + 1)));
    cases[4].mask.bool_mask = bool_mask.data();
    cases[4].mask.bool_mask_batch = 1;
    cases[4].mask.fill = -INFINITY;
    cases[5].mask.valid_lens = cases[1].mask.valid_lens;
    cases[5].mask.fill = 0.0f;
    cases[6].mask.causal = true;
    cases[6].dropout = 0.25f;
    cases[6].seed = 9;
    for (size_t c = 0; c < cases.size(); ++c) {
      attn::set_threads(1);
      const attn::AttentionGradients one =
          attn::scaled_dot_product_attention_backward(q, k, v, grad, cases[c]);
      for (int threads : {2, 3, 4, 7}) {
        const ThreadCount count(threads);
        const attn::AttentionGradients many =
            attn::scaled_dot_product_attention_backward(q, k, v, grad, cases[c]);
        CAPTURE(b, nq, nk, c, threads);
        REQUIRE(same_bits(one.dq, many.dq));
        REQUIRE(same_bits(one.dk, many.dk));
        REQUIRE(same_bits(one.dv, many.dv));
      }
    }
  }
}

TEST_CASE("The grouped-query backward gives the same bits on 1, 2, 3 and 7 threads", "[threads]") {
  // Four query heads on two K/V heads (each K/V matrix's dK and dV sum two heads, strip by strip),
  // 600 queries: ten strips in two groups; causal, with a sink per head.
  const Index heads = 4, kv_heads = 2, nq = 600, nk = 300, d = 16;
  const Tensor3 q = wave(heads, nq, d, 0.37f), k = wave(kv_heads, nk, d, 0.71f),
                v = wave(kv_heads, nk, d, 0.13f), grad = wave(heads, nq, d, 0.53f);
  attn::AttentionOptions options;
  options.heads = heads;
  options.kv_heads = kv_heads;
  options.mask.causal = true;
  options.sinks = {0.5f, -1.0f, 0.0f, 2.0f};
  attn::set_threads(1);
  const attn::AttentionGradients one =
      attn::scaled_dot_product_attention_backward(q, k, v, grad, options);
  for (int threads : {2, 3, 7}) {
    const ThreadCount count(threads);
    const attn::AttentionGradients many =
        attn::scaled_dot_product_attention_backward(q, k, v, grad, options);
    CAPTURE(threads);
    REQUIRE(same_bits(one.dq, many.dq));
    REQUIRE(same_bits(one.dk, many.dk));
    REQUIRE(same_bits(one.dv, many.dv));
    REQUIRE(same_bits(one.dsinks, many.dsinks));
  }
}

TEST_CASE("KV-cache decoding gives the same bits on 1, 2, 3, 4 and 7 threads", "[threads]") {
  // 2 batch rows x 3 heads over 300 cached positions (one key chunk), then 2100 (three, the last
  // partial); one query per head (a decode step) and four (causal among themselves).
  attn::KVCache cache(
      {/*batch=*/2, /*heads=*/3, /*head_dim=*/16, /*value_dim=*/8, /*capacity=*/64});
  for (const Index length : {300, 1800}) {
    const Tensor3 k = wave(1, 6 * length, 16, 0.37f), v = wave(1, 6 * length, 8, 0.11f);
    cache.append(k.data.data(), {2, 3, length, 16}, v.data.data(), {2, 3, length, 8});
    for (const Index nq : {1, 4}) {
      const Tensor3 q = wave(1, 6 * nq, 16, 0.29f);
      Tensor3 one(1, 6 * nq, 8), many(1, 6 * nq, 8);
      attn::set_threads(1);
      cache.attend(q.data.data(), {2, 3, nq, 16}, one.data.data());
      for (int threads : {2, 3, 4, 7}) {
        const ThreadCount count(threads);
        cache.attend(q.data.data(), {2, 3, nq, 16}, many.data.data());
        CAPTURE(cache.length(), nq, threads);
        REQUIRE(same_bits(one, many));
      }
    }
  }
}

TEST_CASE(
    "Kernel regression and its bandwidth search give the same bits on 1, 2, 3, 4 and 7 threads",
    "[threads]") {
  // 77 queries (blocks of 16 and a ragged one) against no key, one, and 333; every similarity,
  // with and without the weights; bandwidths down to where boxcar reaches no other key.
  const std::vector<float> bandwidths{0.01f, 0.3f, 1.0f, 4.0f};
  for (const Index n : {0, 1, 333}) {
    const Tensor3 keys = wave(1, n, 3, 0.7f), values = wave(1, n, 2, 0.3f),
                  queries = wave(1, 77, 3, 0.11f);
    for (const attn::Similarity similarity :
         {attn::Similarity::Gaussian, attn::Similarity::Boxcar, attn::Similarity::Epanechnikov,
          attn::Similarity::Constant}) {
      const auto run = [&] {
        return std::make_tuple(
            attn::kernel_regression(keys.view()[0], values.view()[0], queries.view()[0], similarity,
                                    0.5f, true),
            attn::kernel_regression(keys.view()[0], values.view()[0], queries.view()[0], similarity,
                                    0.5f, false),
            attn::leave_one_out(keys.view()[0], values.view()[0], similarity, bandwidths));
      };
      attn::set_threads(1);
      const auto [weighted, plain, search] = run();
      for (int threads : {2, 3, 4, 7}) {
        const ThreadCount count(threads);
        const auto [weighted_many, plain_many, search_many] = run();
        CAPTURE(n, attn::similarity_name(similarity), threads);
        REQUIRE(same_bits(weighted.output, weighted_many.output));
        REQUIRE(same_bits(weighted.weights, weighted_many.weights));
        REQUIRE(same_bits(plain.output, plain_many.output));
        REQUIRE(same_bits(search.errors, search_many.errors));
        REQUIRE(same_bits(&search.best, 1, &search_many.best, 1));
      }
    }
  }
}

TEST_CASE("Matrix products give the same bits on 1, 2, 3 and 7 threads", "[threads]") {
  // Shapes off the 32 x 64 task tiles and the 2 x 16 micro-kernel tile, large enough to split.
  for (const Index m : {1, 37, 301}) {
    const Tensor3 a = wave(1, m, 173, 0.31f), b = wave(1, 173, 211, 0.17f);
    attn::set_threads(1);
    const attn::Matrix one = attn::detail::matmul(a.view()[0], b.view()[0]);
    for (int threads : {2, 3, 7}) {
      const ThreadCount count(threads);
      const attn::Matrix many = attn::detail::matmul(a.view()[0], b.view()[0]);
      CAPTURE(m, threads);
      REQUIRE(same_bits(one, many));
    }
  }
}

TEST_CASE(
    "Batched softmax, masked softmax, their backwards, bmm and scores give the same bits on "
    "1, 2, 3 and 7 threads",
    "[threads]") {
  // 5 matrices of 61 x 173: many small rows and products, which split as one region over the
  // batch. Each result also against double arithmetic at a few places, so a row or a matrix
  // written to the wrong place cannot pass.
  const Index batch = 5, rows = 61, cols = 173, depth = 29;
  const Tensor3 x = wave(batch, rows, cols, 0.37f), dy = wave(batch, rows, cols, 0.53f);
  const Tensor3 q = wave(batch, rows, depth, 0.29f), k = wave(batch, cols, depth, 0.41f);
  attn::Mask mask;
  mask.valid_lens = {173, 90, 1, 0, 44};
  const Tensor3 v = wave(batch, cols, depth, 0.23f);
  const attn::MatrixRef flat = x.view()[0];
  const auto batched = [&] {
    const Tensor3 y = attn::masked_softmax(x, mask);
    return std::vector<Tensor3>{y, attn::masked_softmax_backward(y, dy, mask), attn::bmm(y, v),
                                attn::score(attn::ScoreFunction::ScaledDot, q, k)};
  };
  const auto plain = [&] {
    const attn::Matrix y = attn::softmax(flat);
    return std::vector<attn::Matrix>{y, attn::softmax_backward(y, dy.view()[0])};
  };
  attn::set_threads(1);
  const std::vector<Tensor3> one = batched();
  const std::vector<attn::Matrix> one_plain = plain();
  for (int threads : {2, 3, 7}) {
    const ThreadCount count(threads);
    const std::vector<Tensor3> many = batched();
    const std::vector<attn::Matrix> many_plain = plain();
    for (size_t i = 0; i < one.size(); ++i) {
      CAPTURE(threads, i);
      REQUIRE(same_bits(one[i], many[i]));
      if (i < one_plain.size()) REQUIRE(same_bits(one_plain[i], many_plain[i]));
    }
  }
  // Row r of matrix b of the masked softmax, and entry (r, c) of matrix b's scores, in double.
  double worst = 0.0;
  for (const Index b : {Index{1}, Index{4}}) {
    for (const Index r : {Index{0}, Index{60}}) {
      const Index visible = mask.valid_lens[static_cast<size_t>(b)];
      double max = -1e300, sum = 0.0;
      for (Index c = 0; c < visible; ++c) max = std::max<double>(max, x.view()[b](r, c));
      for (Index c = 0; c < visible; ++c) sum += std::exp(x.view()[b](r, c) - max);
      for (Index c = 0; c < cols; ++c) {
        const double want = c < visible ? std::exp(x.view()[b](r, c) - max) / sum : 0.0;
        worst = std::max(worst, std::abs(one[0].view()[b](r, c) - want));
      }
      double dot = 0.0;
      for (Index t = 0; t < depth; ++t) dot += double{q.view()[b](r, t)} * k.view()[b](7, t);
      worst = std::max(worst, std::abs(one[3].view()[b](r, 7) - dot / std::sqrt(double(depth))));
    }
  }
  CHECK(worst < 1e-5);
}

TEST_CASE("GELU and SwiGLU, forward and backward, give the same bits on 1, 2, 3 and 7 threads",
          "[threads]") {
  // 301 rows, large enough to split into runs of rows; each entry also against its formula in
  // double, so a run written to the wrong rows cannot pass.
  const Tensor3 x = wave(1, 301, 194, 0.37f), dy = wave(1, 301, 194, 0.53f);
  const attn::MatrixRef xs = x.view()[0], dys = dy.view()[0], half = dys.leftCols(97);
  const auto all = [&] {
    return std::vector<attn::Matrix>{attn::gelu_tanh(xs), attn::gelu_tanh_backward(xs, dys),
                                     attn::swiglu(xs), attn::swiglu_backward(xs, half)};
  };
  attn::set_threads(1);
  const std::vector<attn::Matrix> one = all();
  for (int threads : {2, 3, 7}) {
    const ThreadCount count(threads);
    const std::vector<attn::Matrix> many = all();
    for (size_t i = 0; i < one.size(); ++i) {
      CAPTURE(threads, i);
      REQUIRE(same_bits(one[i], many[i]));
    }
  }
  double worst = 0.0;
  for (Index r = 0; r < 301; ++r) {
    for (Index c = 0; c < 97; ++c) {
      const double g = xs(r, c), u = xs(r, c + 97), s = 1.0 / (1.0 + std::exp(-g));
      const double t = std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g));
      worst = std::max({worst, std::abs(one[0](r, c) - 0.5 * g * (1.0 + t)),
                        std::abs(one[2](r, c) - g * s * u),
                        std::abs(one[3](r, c + 97) - g * s * half(r, c))});
    }
  }
  CHECK(worst < 1e-5);
}

TEST_CASE("A region's predicted time is the pool's claim order replayed on the threads",
          "[threads]") {
  using attn::detail::region_seconds;
  CHECK(region_seconds({}, 4) == 0.0);
  CHECK(region_seconds({3, 1, 1, 1}, 1) == 6.0);
  CHECK(region_seconds({3, 1, 1, 1}, 2) == 3.0);  // the others take the three short ones
  CHECK(region_seconds({1, 1, 1, 3}, 2) == 4.0);  // the long one claimed last ends last
  CHECK(region_seconds({2, 2, 2}, 2) == 4.0);
  CHECK(region_seconds({2, 2, 2}, 16) == 2.0);
  attn::detail::PoolTrace trace;
  trace.regions = {{3, 1, 1, 1}, {2, 2}};
  const attn::detail::ScalingPrediction p = attn::detail::predict_scaling(trace, 20.0, 2);
  CHECK(p.serial_seconds == 10.0);
  CHECK(p.seconds == 10.0 + 3.0 + 2.0);
  CHECK(p.regions == 2);
  CHECK(p.tasks == 6);
  CHECK(p.longest_task == 3.0);
}

TEST_CASE("A simulated pool splits as for its thread count, records, and gives the same bits",
          "[threads]") {
  const Tensor3 q = wave(2, 300, 64, 0.37f), k = wave(2, 300, 64, 0.71f),
                v = wave(2, 300, 64, 0.13f);
  attn::set_threads(1);
  const attn::AttentionResult one = attn::scaled_dot_product_attention(q, k, v, {}, false);
  attn::detail::PoolTrace trace;
  attn::detail::simulate_threads(4, &trace);
  CHECK(attn::threads() == 4);
  const attn::AttentionResult simulated = attn::scaled_dot_product_attention(q, k, v, {}, false);
  attn::set_threads(1);
  CHECK(attn::threads() == 1);
  CHECK(!attn::detail::thread_pool().simulated());
  REQUIRE(same_bits(one.output, simulated.output));
  // Two matrices on four threads: the kernel splits each into query blocks, in regions.
  REQUIRE(!trace.regions.empty());
  for (const std::vector<double>& tasks : trace.regions) {
    CHECK(tasks.size() > 1);
    for (const double seconds : tasks) CHECK(seconds >= 0.0);
  }
}

TEST_CASE("Cross-entropy and its gradient give the same bits on 1, 2, 3 and 7 threads",
          "[threads]") {
  // 301 rows of 173 logits, every seventh label the pad: large enough to split into runs of rows.
  const Tensor3 logits = wave(1, 301, 173, 0.71f);
  const attn::MatrixRef z = logits.view()[0];
  std::vector<int32_t> labels(301);
  for (size_t i = 0; i < labels.size(); ++i)
    labels[i] = i % 7 == 3 ? 0 : static_cast<int32_t>(1 + (i * 37) % 172);
  attn::set_threads(1);
  const attn::CrossEntropyResult one =
      attn::masked_cross_entropy(z, labels.data(), 0, true, "labels");
  for (int threads : {2, 3, 7}) {
    const ThreadCount count(threads);
    const attn::CrossEntropyResult many =
        attn::masked_cross_entropy(z, labels.data(), 0, true, "labels");
    CAPTURE(threads);
    REQUIRE(many.loss == one.loss);
    REQUIRE(same_bits(one.dlogits, many.dlogits));
  }
  // Against the mean of log-sum-exp - the label's logit in double, pad rows left out.
  double total = 0.0;
  for (Index i = 0; i < 301; ++i) {
    if (labels[i] == 0) {
      CHECK(one.dlogits.row(i).isZero(0.0f));
      continue;
    }
    double sum = 0.0;
    for (Index j = 0; j < 173; ++j) sum += std::exp(static_cast<double>(z(i, j)));
    total += std::log(sum) - z(i, labels[i]);
  }
  CHECK(one.loss == Approx(total / static_cast<double>(one.count)).epsilon(1e-6));
}

TEST_CASE("Multi-head attention's backward gives the same bits on 1, 2, 3, 4 and 7 threads",
          "[threads]") {
  // 2 x 4 heads: 2 and 4 threads take whole score matrices, 3 and 7 split their strips (with the
  // output, which the layer's backward asks of the kernel).
  const attn::MultiHeadAttention mha = seeded_layer(64, 4, 5);
  const Tensor3 x = wave(2, 150, 64, 0.19f), grad = wave(2, 150, 64, 0.43f);
  attn::set_threads(1);
  const attn::MultiHeadGradients one = mha.backward(x, x, x, grad);
  for (int threads : {2, 3, 4, 7}) {
    const ThreadCount count(threads);
    const attn::MultiHeadGradients many = mha.backward(x, x, x, grad);
    CAPTURE(threads);
    REQUIRE(same_bits(one.d_query, many.d_query));
    REQUIRE(same_bits(one.d_value, many.d_value));
    for (size_t p = 0; p < one.d_parameters.size(); ++p) {
      CAPTURE(one.d_parameters[p].name);
      REQUIRE(one.d_parameters[p].data == many.d_parameters[p].data);
    }
  }
}

TEST_CASE(
    "A linear layer's bias and parameter gradients give the same bits on 1, 2, 3 and 7 "
    "threads, and match dY^T X in double",
    "[threads]") {
  // 601 rows: the runs of output units and of rows are cut unevenly.
  const Tensor3 dy = wave(1, 601, 300, 0.37f), x = wave(1, 601, 70, 0.11f);
  const attn::ConstMatrixMap dy_m(dy.data.data(), 601, 300), x_m(x.data.data(), 601, 70);
  const std::vector<float> bias(300, 0.5f);
  const auto run = [&] {
    attn::Matrix dweight = attn::Matrix::Constant(300, 70, 1.0f), y = dy_m;
    std::vector<float> dbias(300, 2.0f);
    attn::detail::accumulate_weight_gradient(dy_m, x_m, dweight, dbias.data());
    attn::detail::add_bias_rows(y, bias.data());
    return std::make_tuple(dweight, dbias, y);
  };
  attn::set_threads(1);
  const auto one = run();
  for (Index o : {Index{0}, Index{151}, Index{299}}) {
    double db = 2.0;
    for (Index r = 0; r < 601; ++r) db += dy_m(r, o);
    REQUIRE(std::get<1>(one)[static_cast<size_t>(o)] == Approx(db).epsilon(1e-5).margin(1e-4));
    for (Index i : {Index{0}, Index{33}, Index{69}}) {
      double dw = 1.0;
      for (Index r = 0; r < 601; ++r) dw += double{dy_m(r, o)} * x_m(r, i);
      REQUIRE(std::get<0>(one)(o, i) == Approx(dw).epsilon(1e-5).margin(1e-4));
    }
    REQUIRE(std::get<2>(one)(600, o) == dy_m(600, o) + 0.5f);
  }
  for (int threads : {2, 3, 7}) {
    const ThreadCount count(threads);
    const auto many = run();
    CAPTURE(threads);
    REQUIRE(same_bits(std::get<0>(one), std::get<0>(many)));
    REQUIRE(same_bits(std::get<1>(one), std::get<1>(many)));
    REQUIRE(same_bits(std::get<2>(one), std::get<2>(many)));
  }
}

TEST_CASE("LayerNorm and its backward give the same bits on 1, 2, 3 and 7 threads", "[threads]") {
  // 601 rows of 256, far from zero as a Transformer's are: split into uneven runs of rows.
  const Tensor3 x = wave(1, 601, 256, 0.29f), dy = wave(1, 601, 256, 0.53f);
  const attn::ConstMatrixMap x_m(x.data.data(), 601, 256), dy_m(dy.data.data(), 601, 256);
  const attn::Matrix shifted = (x_m.array() * 4.0f + 30.0f).matrix();
  attn::Vector weight(256), bias(256);
  for (Index j = 0; j < 256; ++j) {
    weight[j] = 1.0f + 0.01f * static_cast<float>(j % 7);
    bias[j] = 0.1f * static_cast<float>(j % 5);
  }
  attn::set_threads(1);
  const attn::Matrix y1 = attn::layer_norm(shifted, weight, bias);
  const attn::LayerNormGradients g1 = attn::layer_norm_backward(shifted, weight, dy_m);
  // dbias and dweight are summed by runs of rows: against the sums over all rows in double.
  for (Index j : {Index{0}, Index{100}, Index{255}}) {
    double db = 0.0, dw = 0.0;
    for (Index i = 0; i < 601; ++i) {
      double mean = 0.0, squares = 0.0;
      for (Index c = 0; c < 256; ++c) mean += shifted(i, c) / 256.0;
      for (Index c = 0; c < 256; ++c) squares += (shifted(i, c) - mean) * (shifted(i, c) - mean);
      const double normalised = (shifted(i, j) - mean) / std::sqrt(squares / 256.0 + 1e-5);
      db += dy_m(i, j);
      dw += dy_m(i, j) * normalised;
    }
    REQUIRE(g1.dbias[j] == Approx(db).epsilon(1e-4).margin(1e-3));
    REQUIRE(g1.dweight[j] == Approx(dw).epsilon(1e-4).margin(1e-3));
  }
  for (int threads : {2, 3, 7}) {
    const ThreadCount count(threads);
    CAPTURE(threads);
    REQUIRE(same_bits(y1, attn::layer_norm(shifted, weight, bias)));
    const attn::LayerNormGradients g = attn::layer_norm_backward(shifted, weight, dy_m);
    REQUIRE(same_bits(g1.dx, g.dx));
    REQUIRE(same_bits(g1.dweight.data(), g1.dweight.size(), g.dweight.data(), g.dweight.size()));
    REQUIRE(same_bits(g1.dbias.data(), g1.dbias.size(), g.dbias.data(), g.dbias.size()));
  }
}

TEST_CASE("Seq2Seq training steps give the same bits on 1, 2 and 3 threads", "[threads]") {
  // Large enough that the GRU's gate loops, its gradients' transposes, the packing and Adam's
  // update are split (each at least kWorkPerThread per thread at 2 threads).
  attn::Seq2SeqConfig config;
  config.src_vocab_size = config.tgt_vocab_size = 40;
  config.embed_size = 32;
  config.num_hiddens = 64;
  config.num_layers = 2;
  config.seed = 9;
  const Index B = 64, T = 6;
  std::vector<int32_t> src(B * T), tgt_in(B * T), tgt_out(B * T), lens(B);
  for (Index i = 0; i < B * T; ++i) {
    src[static_cast<size_t>(i)] = static_cast<int32_t>(3 + i * 7 % 37);
    tgt_in[static_cast<size_t>(i)] = static_cast<int32_t>(3 + i * 11 % 37);
    tgt_out[static_cast<size_t>(i)] = static_cast<int32_t>(i * 13 % 40);  // some are pad (0)
  }
  for (Index b = 0; b < B; ++b) lens[static_cast<size_t>(b)] = static_cast<int32_t>(b % (T + 1));
  attn::Seq2SeqTrainOptions options;
  options.lr = 0.01f;
  options.clip = 1.0f;
  const auto train = [&] {
    attn::Seq2Seq model(config);
    std::vector<float> losses;
    for (int step = 0; step < 2; ++step) {
      losses.push_back(model.train_step({src.data(), B, T}, lens, {tgt_in.data(), B, T},
                                        {tgt_out.data(), B, T}, options));
    }
    return std::make_pair(losses, model.state_dict());
  };
  attn::set_threads(1);
  const auto one = train();
  for (int threads : {2, 3}) {
    const ThreadCount count(threads);
    const auto many = train();
    CAPTURE(threads);
    REQUIRE(same_bits(one.first, many.first));
    for (size_t p = 0; p < one.second.size(); ++p) {
      CAPTURE(one.second[p].name);
      REQUIRE(same_bits(one.second[p].data, many.second[p].data));
    }
  }
}

namespace {

// One caller's work for the concurrency test: scaled dot-product attention and its backward
// (causal, on shapes that split), then two Transformer training steps on a model of its own;
// every result, flattened in order.
std::vector<float> caller_work(uint64_t seed) {
  const float rate = 0.1f + 0.01f * static_cast<float>(seed);
  const Tensor3 q = wave(4, 96, 32, rate), k = wave(4, 96, 32, rate + 0.3f),
                v = wave(4, 96, 16, rate + 0.5f);
  attn::AttentionOptions options;
  options.mask.causal = true;
  Tensor3 out(4, 96, 16);
  attn::scaled_dot_product_attention(q.view(), k.view(), v.view(), options, out.view());
  const attn::AttentionGradients g =
      attn::scaled_dot_product_attention_backward(q, k, v, out, options);
  std::vector<float> all = out.data;
  for (const Tensor3* t : {&g.dq, &g.dk, &g.dv})
    all.insert(all.end(), t->data.begin(), t->data.end());

  attn::TransformerConfig config;
  config.src_vocab_size = config.tgt_vocab_size = 24;
  config.num_hiddens = 64;
  config.ffn_num_hiddens = 128;
  config.num_heads = 4;
  config.num_blks = 2;
  config.seed = seed;
  attn::Transformer model(config);
  const Index B = 16, T = 12;
  std::vector<int32_t> src(B * T), tgt_in(B * T), tgt_out(B * T), lens(B, T);
  for (Index i = 0; i < B * T; ++i) {
    src[static_cast<size_t>(i)] = static_cast<int32_t>(1 + (i * 7 + seed) % 23);
    tgt_in[static_cast<size_t>(i)] = static_cast<int32_t>(1 + (i * 11 + seed) % 23);
    tgt_out[static_cast<size_t>(i)] = static_cast<int32_t>(1 + (i * 13 + seed) % 23);
  }
  attn::EncoderDecoderTrainOptions train;
  train.lr = 0.01f;
  for (int step = 0; step < 2; ++step) {
    all.push_back(model.train_step({src.data(), B, T}, lens, {tgt_in.data(), B, T},
                                   {tgt_out.data(), B, T}, train));
  }
  for (const attn::NamedTensor& t : model.state_dict()) {
    all.insert(all.end(), t.data.begin(), t.data.end());
  }
  return all;
}

}  // namespace

TEST_CASE("Threads that call the core at once get what each call gives alone", "[threads]") {
  const ThreadCount count(2);
  std::vector<std::vector<float>> alone;
  for (uint64_t seed = 0; seed < 4; ++seed) alone.push_back(caller_work(seed));
  for (size_t callers : {2, 4}) {
    std::vector<std::vector<float>> together(callers);
    std::vector<std::thread> threads;
    for (size_t c = 0; c < callers; ++c) {
      threads.emplace_back([&together, c] { together[c] = caller_work(c); });
    }
    for (std::thread& t : threads) t.join();
    for (size_t c = 0; c < callers; ++c) {
      CAPTURE(callers, c);
      REQUIRE(same_bits(together[c], alone[c]));
    }
  }
}

TEST_CASE("The pool runs every task exactly once over many tiny regions", "[threads]") {
  const ThreadCount count(3);
  attn::detail::ThreadPool& pool = attn::detail::thread_pool();
  std::vector<int> hits(7);
  for (int region = 0; region < 10000; ++region) {
    const Index tasks = region % 7 + 1;
    std::fill(hits.begin(), hits.end(), 0);
    // Each task writes only its own entry (Catch2's assertions are not thread-safe: checked
    // after), and the scratch slot it was given, which must lie below min(tasks, threads).
    std::vector<int> slots(7, -1);
    pool.run(tasks, [&](Index t, int slot) {
      hits[static_cast<size_t>(t)] += 1;
      slots[static_cast<size_t>(t)] = slot;
    });
    for (Index t = 0; t < tasks; ++t) {
      if (slots[static_cast<size_t>(t)] < 0 ||
          slots[static_cast<size_t>(t)] >= std::min<Index>(tasks, 3)) {
        FAIL("region " << region << " task " << t << " got slot " << slots[static_cast<size_t>(t)]);
      }
    }
    for (Index t = 0; t < 7; ++t) {
      if (hits[static_cast<size_t>(t)] != (t < tasks ? 1 : 0)) {
        FAIL("region " << region << " task " << t << " ran " << hits[static_cast<size_t>(t)]
                       << " times");
      }
    }
  }
}

// More threads than cores (8 on the 2-core machines of CI) and tasks that outlast the caller's
// spin: the caller sleeps until the workers that joined have left, and workers that wake late
// (contention, thread_pool.cpp) stay out. Every task must still have run, exactly once, by the
// time run() returns.
TEST_CASE("Oversubscribed, with tasks that outlast a spin, run() returns once every task ran",
          "[threads]") {
  const ThreadCount count(8);
  attn::detail::ThreadPool& pool = attn::detail::thread_pool();
  for (int region = 0; region < 300; ++region) {
    const Index tasks = region % 11 + 1;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(tasks));
    pool.run(tasks, [&](Index t, int) {
      // Every third region, its last task sleeps past the caller's millisecond of spinning.
      if (region % 3 == 0 && t == tasks - 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
      }
      hits[static_cast<size_t>(t)].fetch_add(1);
    });
    for (Index t = 0; t < tasks; ++t) {
      if (hits[static_cast<size_t>(t)].load() != 1) {
        FAIL("region " << region << " task " << t << " ran " << hits[static_cast<size_t>(t)].load()
                       << " times by the time run() returned");
      }
    }
  }
}

TEST_CASE("While the cores are contended, only regions long enough to ride out a lost core split",
          "[threads]") {
  using attn::detail::kContendedWorkPerThread;
  using attn::detail::kWorkPerThread;
  using attn::detail::worth_splitting;
  using Clock = std::chrono::steady_clock;
  const ThreadCount count(2);
  // Whatever the cores' state (a worker that lost its core may have noted contention already).
  CHECK(!worth_splitting(2 * kWorkPerThread - 1));
  CHECK(worth_splitting(2 * kContendedWorkPerThread));
  // As a worker that woke late would: for the next 50 ms, a shorter region stays on its caller.
  const auto noted = Clock::now();
  attn::detail::thread_pool().note_contention();
  const bool short_splits = worth_splitting(2 * kContendedWorkPerThread - 1);
  const bool long_splits = worth_splitting(2 * kContendedWorkPerThread);
  if (Clock::now() - noted < std::chrono::milliseconds(40)) {  // else this thread lost its core
    CHECK(!short_splits);
    CHECK(long_splits);
  }
}

TEST_CASE("A thread count below 1 is rejected and the pool keeps its count", "[threads]") {
  const ThreadCount count(2);
  REQUIRE_THROWS_WITH(attn::set_threads(0), "threads: expected an integer >= 1, got 0");
  REQUIRE_THROWS_WITH(attn::set_threads(-1), "threads: expected an integer >= 1, got -1");
  REQUIRE(attn::threads() == 2);
}

namespace {

// Every worker thread that ran the setup (set_worker_setup), recorded as it starts.
std::mutex setup_mutex;
std::vector<std::thread::id> set_up;

void record_setup() {
  const std::lock_guard<std::mutex> lock(setup_mutex);
  set_up.push_back(std::this_thread::get_id());
}

}  // namespace

TEST_CASE("Each worker runs the worker setup before its first task", "[threads]") {
  attn::detail::set_worker_setup(&record_setup);
  const ThreadCount count(4);
  attn::detail::set_worker_setup(nullptr);
  // Which threads ran tasks, per task: only the caller may run one without the setup.
  std::vector<std::thread::id> ran(64);
  std::vector<int> prepared(64);
  int workers_ran = 0;
  for (int region = 0; region < 200; ++region) {
    attn::detail::thread_pool().run(64, [&](Index t, int) {
      // Long enough that the workers join before the caller has claimed every task.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
      ran[static_cast<size_t>(t)] = std::this_thread::get_id();
      const std::lock_guard<std::mutex> lock(setup_mutex);
      prepared[static_cast<size_t>(t)] =
          std::find(set_up.begin(), set_up.end(), ran[static_cast<size_t>(t)]) != set_up.end();
    });
    for (size_t t = 0; t < ran.size(); ++t) {
      if (ran[t] == std::this_thread::get_id()) continue;
      REQUIRE(prepared[t] == 1);
      ++workers_ran;
    }
  }
  const std::lock_guard<std::mutex> lock(setup_mutex);
  CHECK(set_up.size() <= 3);
  CHECK(workers_ran > 0);
}
