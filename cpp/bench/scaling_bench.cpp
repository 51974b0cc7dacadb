// How the core's splits would scale on 2 to 16 cores, predicted on any machine (issue 32): each
// workload runs once on a simulated pool of T threads (parallel/pool_trace.hpp: every split chosen
// as for T, its tasks timed one after another on this thread), and the pool's claim order is
// replayed on T threads. Beside the predictions, the speedup measured on this machine's 2 threads
// (one- and two-thread calls in turns, the median of the pairs), which the prediction for 2 should
// approach from above: it leaves out what cores share (memory bandwidth, a busy neighbour) and
// waking the workers. Natively, so the times are this machine's, not wasm's; the splits are
// the same code.
//   scaling_bench [--quick]
// prints a JSON line per workload: { workload, oneMs, measured2, predicted: { 2, 4, 8, 16 },
// regions, tasks, longestMs, serialShare } (the last four at 16 threads), which
// scripts/bench/threads/scaling.js turns into a table and the goals of issue 32.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.hpp"
#include "attn/causal_lm.hpp"
#include "attn/multi_head_attention.hpp"
#include "attn/seq2seq.hpp"
#include "attn/threads.hpp"
#include "attn/transformer.hpp"
#include "parallel/pool_trace.hpp"

namespace {

using attn::Index;
using Clock = std::chrono::steady_clock;

struct Workload {
  std::string name;
  std::function<void()> run;
};

double seconds_of(const std::function<void()>& run) {
  const auto start = Clock::now();
  run();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

attn::Tensor3 wave(Index batch, Index rows, Index cols, float rate) {
  attn::Tensor3 t(batch, rows, cols);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = std::sin(rate * static_cast<float>(i));
  return t;
}

// Token ids in [3, vocab) from a fixed stream (0-2: pad, bos, eos).
std::vector<int32_t> tokens(Index count, Index vocab, uint32_t seed) {
  std::vector<int32_t> ids(static_cast<size_t>(count));
  for (int32_t& id : ids) {
    seed = seed * 1664525u + 1013904223u;
    id = static_cast<int32_t>(3 + (seed >> 8) % static_cast<uint32_t>(vocab - 3));
  }
  return ids;
}

Workload sdpa(Index n, bool causal) {
  auto q = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.37f));
  auto k = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.71f));
  auto v = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.13f));
  attn::AttentionOptions options;
  options.mask.causal = causal;
  return {"SDPA " + std::string(causal ? "causal " : "") + "n = " + std::to_string(n) + ", d = 64",
          [=] { attn::scaled_dot_product_attention(*q, *k, *v, options); }};
}

Workload backward(Index n) {
  auto q = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.37f));
  auto k = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.71f));
  auto v = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.13f));
  auto g = std::make_shared<attn::Tensor3>(wave(1, n, 64, 0.53f));
  return {"SDPA backward n = " + std::to_string(n) + ", d = 64",
          [=] { attn::scaled_dot_product_attention_backward(*q, *k, *v, *g); }};
}

Workload multi_head(Index n) {
  auto layer = std::make_shared<attn::MultiHeadAttention>(attn::MultiHeadConfig{512, 8});
  auto x = std::make_shared<attn::Tensor3>(wave(1, n, 512, 0.19f));
  return {"multi-head E = 512, 8 heads, n = " + std::to_string(n),
          [=] { layer->forward(*x, *x, *x); }};
}

// d2l's sizes, as scripts/bench's training sections run them (batch 128, 10 steps, vocab 200).
struct Batch {
  std::vector<int32_t> src, tgt_in, tgt_out, lens;
  Index batch, steps;
  attn::TokenBatch of(const std::vector<int32_t>& ids) const { return {ids.data(), batch, steps}; }
};

std::shared_ptr<Batch> d2l_batch() {
  auto b = std::make_shared<Batch>();
  b->batch = 128;
  b->steps = 10;
  b->src = tokens(1280, 200, 1);
  b->tgt_in = tokens(1280, 200, 2);
  b->tgt_out = tokens(1280, 200, 3);
  b->lens.assign(128, 10);
  return b;
}

template <typename Model>
Workload training(const std::string& name, std::shared_ptr<Model> model) {
  const std::shared_ptr<Batch> b = d2l_batch();
  attn::EncoderDecoderTrainOptions options;
  options.lr = 1e-3f;
  options.clip = 1.0f;
  return {name, [=] {
            model->train_step(b->of(b->src), b->lens, b->of(b->tgt_in), b->of(b->tgt_out), options);
          }};
}

Workload seq2seq() {
  attn::Seq2SeqConfig c;
  c.src_vocab_size = c.tgt_vocab_size = 200;
  c.embed_size = c.num_hiddens = 256;
  c.num_layers = 2;
  return training("Seq2Seq training step, d2l's size", std::make_shared<attn::Seq2Seq>(c));
}

Workload transformer() {
  attn::TransformerConfig c;
  c.src_vocab_size = c.tgt_vocab_size = 200;
  c.num_hiddens = 256;
  c.ffn_num_hiddens = 64;
  c.num_heads = 4;
  c.num_blks = 2;
  return training("Transformer training step, d2l's size", std::make_shared<attn::Transformer>(c));
}

// scripts/bench/training/causal-lm.js's GPT-2-like size.
Workload causal_lm() {
  attn::CausalLMConfig c = attn::CausalLMConfig::gpt2();
  c.vocab_size = 512;
  c.hidden_size = 256;
  c.num_layers = 4;
  c.num_heads = 4;
  c.intermediate_size = 1024;
  c.max_positions = 128;
  auto model = std::make_shared<attn::CausalLM>(c);
  auto ids = std::make_shared<std::vector<int32_t>>(tokens(8 * 129, 512, 7));
  attn::AdamWOptions options;
  options.lr = 3e-4f;
  options.weight_decay = 0.1f;
  options.clip = 1.0f;
  return {"CausalLM training step, GPT-2-like", [=] {
            model->train_step({ids->data(), 8, 129}, options);
          }};
}

// The prediction of the traced run whose time is the median of `runs` (one run is as noisy as
// any single timing).
attn::detail::ScalingPrediction predict(const Workload& w, int threads, int runs) {
  std::vector<std::pair<double, attn::detail::ScalingPrediction>> traced;
  for (int r = 0; r < runs; ++r) {
    attn::detail::PoolTrace trace;
    attn::detail::simulate_threads(threads, &trace);
    const double seconds = seconds_of(w.run);
    traced.emplace_back(seconds, attn::detail::predict_scaling(trace, seconds, threads));
  }
  attn::set_threads(1);
  std::sort(traced.begin(), traced.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return traced[traced.size() / 2].second;
}

std::vector<Workload> workloads(bool quick) {
  if (quick) return {sdpa(512, false), backward(512), multi_head(128)};
  return {sdpa(2048, false), sdpa(4096, false), sdpa(4096, true), backward(2048), backward(4096),
          multi_head(512),   multi_head(1024),  seq2seq(),        transformer(),  causal_lm()};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int pairs = quick ? 3 : 5;
  for (const Workload& w : workloads(quick)) {
    attn::set_threads(1);
    w.run();  // warm: first touches, packed panels, the pool's workers
    std::vector<double> one, two;
    for (int p = 0; p < pairs; ++p) {
      attn::set_threads(1);
      one.push_back(seconds_of(w.run));
      attn::set_threads(2);
      two.push_back(seconds_of(w.run));
    }
    const double alone = median(one);
    std::printf("{\"workload\":\"%s\",\"oneMs\":%.3f,\"measured2\":%.3f,\"predicted\":{",
                w.name.c_str(), 1e3 * alone, alone / median(two));
    attn::detail::ScalingPrediction last;
    for (const int threads : {2, 4, 8, 16}) {
      last = predict(w, threads, pairs);
      std::printf("%s\"%d\":%.3f", threads == 2 ? "" : ",", threads, alone / last.seconds);
    }
    // At 16 threads: the regions, their tasks, the longest task and the time outside regions.
    std::printf("},\"regions\":%ld,\"tasks\":%ld,\"longestMs\":%.3f,\"serialShare\":%.4f}\n",
                static_cast<long>(last.regions), static_cast<long>(last.tasks),
                1e3 * last.longest_task, last.serial_seconds / last.seconds);
  }
}
