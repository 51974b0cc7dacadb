// Native timing of the core's scaled dot-product attention, for `npm run bench` to set beside
// the wasm builds. Prints one JSON line per shape: {"n":..,"d":..,"ms":..}.
// Usage: attention_bench N[,N...] D[,D...]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attn/attention.hpp"

namespace {

std::vector<long> parse_list(const std::string& text) {
  std::vector<long> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) values.push_back(std::stol(item));
  return values;
}

double median_ms(const attn::Tensor3& q, const attn::Tensor3& k, const attn::Tensor3& v) {
  using clock = std::chrono::steady_clock;
  attn::Tensor3 out(1, q.rows, v.cols);
  auto run = [&] {
    attn::scaled_dot_product_attention(q.view(), k.view(), v.view(), {}, out.view());
  };
  run();
  int reps = 1;
  for (;; reps *= 2) {
    const auto start = clock::now();
    for (int i = 0; i < reps; ++i) run();
    if (std::chrono::duration<double, std::milli>(clock::now() - start).count() > 10) break;
  }
  std::vector<double> samples;
  for (int s = 0; s < 7; ++s) {
    const auto start = clock::now();
    for (int i = 0; i < reps; ++i) run();
    samples.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count() /
                      reps);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s N[,N...] D[,D...]\n", argv[0]);
    return 2;
  }
  std::mt19937 random(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (long d : parse_list(argv[2])) {
    for (long n : parse_list(argv[1])) {
      attn::Tensor3 q(1, n, d), k(1, n, d), v(1, n, d);
      for (auto* t : {&q, &k, &v}) {
        for (float& x : t->data) x = uniform(random);
      }
      std::printf("{\"n\":%ld,\"d\":%ld,\"ms\":%.6f}\n", n, d, median_ms(q, k, v));
      std::fflush(stdout);
    }
  }
  return 0;
}
