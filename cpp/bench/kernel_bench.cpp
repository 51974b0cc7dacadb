// Times the fused attention kernel against itself and against the GEMM micro-kernel it is built
// on, in one run, and prints ratios (so that machines and builds compare): masked / unmasked,
// with weights / without, SDPA throughput / GEMM throughput on the same shapes, KV-cache decode /
// one copy of K and V. Built natively and with em++ (run under node) by
// scripts/bench-kernels.sh; one JSON line per row.
// Usage: kernel_bench [N,N,...]   (default 512,1024,2048,4096)
//        kernel_bench microkernel   (the micro-kernel row alone: `npm run bench` loads the wasm
//                                    build into its own Node process with this argument)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/kv_cache.hpp"
#include "kernels/gemm.hpp"
#include "microkernel_loop.hpp"

namespace {

using attn::Index;
using attn::Tensor3;

using Clock = std::chrono::steady_clock;

// Calls per sample so that one sample takes >= 10 ms.
int calls_per_sample(const std::function<void()>& run) {
  run();
  for (int reps = 1;; reps *= 2) {
    const auto start = Clock::now();
    for (int i = 0; i < reps; ++i) run();
    if (std::chrono::duration<double, std::milli>(Clock::now() - start).count() > 10) return reps;
  }
}

double sample_ms(const std::function<void()>& run, int reps) {
  const auto start = Clock::now();
  for (int i = 0; i < reps; ++i) run();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / reps;
}

// Milliseconds per call of each of `runs`, sampled in turn for 9 rounds so that a neighbour's
// load falls on all of them alike: each run's fastest sample (the least disturbed).
std::vector<double> interleaved_ms(const std::vector<std::function<void()>>& runs) {
  std::vector<int> reps;
  for (const auto& run : runs) reps.push_back(calls_per_sample(run));
  std::vector<double> best(runs.size(), 1e300);
  for (int round = 0; round < 9; ++round) {
    for (size_t r = 0; r < runs.size(); ++r) {
      best[r] = std::min(best[r], sample_ms(runs[r], reps[r]));
    }
  }
  return best;
}

double fastest_ms(const std::function<void()>& run) { return interleaved_ms({run})[0]; }

Tensor3 random_tensor(Index b, Index r, Index c, std::mt19937& random) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Tensor3 t(b, r, c);
  for (float& x : t.data) x = uniform(random);
  return t;
}

std::function<void()> sdpa(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                           const attn::AttentionOptions& options, bool weights) {
  auto out = std::make_shared<Tensor3>(q.batch, q.rows, v.cols);
  auto w = std::make_shared<Tensor3>(weights ? q.batch : 0, q.rows, k.rows);
  return [&q, &k, &v, options, weights, out, w] {
    const attn::MutableBatch wv = w->view();
    attn::scaled_dot_product_attention(q.view(), k.view(), v.view(), options, out->view(),
                                       weights ? &wv : nullptr);
  };
}

// The micro-kernel alone on operands that stay in L1: its peak, in GFLOP/s.
double microkernel_gflops(Index d) {
  std::vector<float> a(static_cast<size_t>(2 * d), 0.5f), b(static_cast<size_t>(d * 16), 0.25f);
  float sink = 0.0f;
  const int calls = 4096;
  const double ms = fastest_ms([&] { sink += microkernel_loop(a.data(), b.data(), d, calls); });
  if (sink == 1.0f) std::printf(" ");
  return 2.0 * 2 * 16 * d * calls / (ms * 1e6);
}

// The two products of attention at the same shapes through the GEMM (Q K^T, then P V with P
// [n, n]): the throughput the fused kernel would have with nothing around its products.
std::function<void()> gemm_same_shapes(const Tensor3& q, const Tensor3& k, const Tensor3& v) {
  const Index n = q.rows, d = q.cols, dv = v.cols;
  struct Buffers {
    std::vector<float> packed_k, packed_v, p, out;
  };
  auto b = std::make_shared<Buffers>();
  b->packed_k.resize(static_cast<size_t>(attn::detail::round_up(n, 16) * d));
  b->packed_v.resize(static_cast<size_t>(attn::detail::round_up(dv, 16) * n));
  b->p.resize(static_cast<size_t>(n * n));
  b->out.resize(static_cast<size_t>(n * dv));
  return [&q, &k, &v, b, n, d, dv] {
    attn::detail::f32_pack_panels(k.data.data(), d, d, n, true, b->packed_k.data());
    attn::detail::f32_pack_panels(v.data.data(), dv, n, dv, false, b->packed_v.data());
    attn::detail::f32_gemm_packed(q.data.data(), d, n, d, b->packed_k.data(), n, b->p.data(), n);
    attn::detail::f32_gemm_packed(b->p.data(), n, n, n, b->packed_v.data(), dv, b->out.data(), dv);
  };
}

void decode_row(Index n, std::mt19937& random) {
  const Index heads = 12, d = 64;
  attn::KVCache cache({1, heads, d, d, n});
  const Tensor3 k = random_tensor(heads, n, d, random), v = random_tensor(heads, n, d, random);
  cache.append(k.data.data(), {1, heads, n, d}, v.data.data(), {1, heads, n, d});
  const Tensor3 q = random_tensor(heads, 1, d, random);
  Tensor3 out(heads, 1, d);
  std::vector<float> copy(k.data.size() + v.data.size());
  const std::vector<double> ms = interleaved_ms(
      {[&] {
         cache.attend(q.data.data(), {1, heads, 1, d}, out.data.data());
       },
       [&] {
         std::copy(k.data.begin(), k.data.end(), copy.begin());
         std::copy(v.data.begin(), v.data.end(), copy.begin() + static_cast<long>(k.data.size()));
       }});
  const double decode = ms[0], copy_ms = ms[1];
  std::printf(
      "{\"row\":\"decode\",\"heads\":%ld,\"d\":%ld,\"n\":%ld,\"ms\":%.4f,\"copy_kv_ms\":%.4f,"
      "\"decode_per_copy\":%.2f}\n",
      static_cast<long>(heads), static_cast<long>(d), static_cast<long>(n), decode, copy_ms,
      decode / copy_ms);
  std::fflush(stdout);
}

std::vector<long> parse_list(const std::string& text) {
  std::vector<long> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) values.push_back(std::stol(item));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "512,1024,2048,4096";
  std::mt19937 random(1);
  const Index d = 64;
  const double peak = microkernel_gflops(d);
  std::printf(
      "{\"row\":\"microkernel\",\"kernel\":\"f32_gemm_tile<2> "
      "(2x16)\",\"d\":%ld,\"gflops\":%.2f}\n",
      static_cast<long>(d), peak);
  std::fflush(stdout);
  if (first == "microkernel") return 0;
  const std::vector<long> sizes = parse_list(first);
  for (long n : sizes) {
    const Tensor3 q = random_tensor(1, n, d, random), k = random_tensor(1, n, d, random);
    const Tensor3 v = random_tensor(1, n, d, random);
    const double flops = 4.0 * n * n * d;
    attn::AttentionOptions causal;
    causal.mask.causal = true;
    attn::AttentionOptions quarter;
    quarter.mask.valid_lens = {static_cast<int32_t>(n / 4)};
    const std::vector<double> ms = interleaved_ms(
        {sdpa(q, k, v, {}, false), sdpa(q, k, v, causal, false), sdpa(q, k, v, quarter, false),
         sdpa(q, k, v, {}, true), gemm_same_shapes(q, k, v)});
    const double plain = ms[0], causal_ms = ms[1], quarter_ms = ms[2], weights_ms = ms[3];
    const double gemm_ms = ms[4];
    std::printf(
        "{\"row\":\"sdpa\",\"n\":%ld,\"d\":%ld,\"ms\":%.3f,\"gflops\":%.2f,"
        "\"causal_per_plain\":%.3f,\"quarter_lens_per_plain\":%.3f,\"weights_per_plain\":%.3f,"
        "\"per_gemm_same_shapes\":%.3f,\"per_microkernel\":%.3f}\n",
        n, static_cast<long>(d), plain, flops / (plain * 1e6), causal_ms / plain,
        quarter_ms / plain, weights_ms / plain, gemm_ms / plain, flops / (plain * 1e6) / peak);
    std::fflush(stdout);
  }
  for (long n : sizes) decode_row(n * 4, random);
  return 0;
}
