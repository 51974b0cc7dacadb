#pragma once
// Double-precision references for the learning building blocks, written from the equations
// (PyTorch's nn.GRU documentation, d2l's loss, torch.optim.Adam's algorithm), never from the
// library: a GRU cell and a multi-layer GRU over a time-major sequence, the padded
// cross-entropy, and the seeded dropout mask the library documents.

#include <cmath>
#include <cstdint>
#include <vector>

#include "attn/gru.hpp"
#include "reference.hpp"

namespace ref {

// The dropout stream the library documents (splitmix64, 24 bits): draw `index` of `seed`.
inline double splitmix_uniform(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 40) / 16777216.0;
}

// Inverted dropout's factor: 0 when the draw falls below p, else 1 / (1 - p).
inline double dropout_factor(double p, uint64_t seed, uint64_t index) {
  return splitmix_uniform(seed, index) < p ? 0.0 : 1.0 / (1.0 - p);
}

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct GruLayer {
  Mat w_ih, w_hh;  // [3H, in], [3H, H], gates r, z, n
  std::vector<double> b_ih, b_hh;
  Index hidden() const { return w_hh.cols; }
};

inline GruLayer random_gru_layer(Index in, Index hidden, uint32_t seed) {
  const auto draw = [&](Index r, Index c, uint32_t s) {
    Mat m(r, c);
    const auto values = uniform(static_cast<size_t>(r * c), s, -0.6f, 0.6f);
    for (size_t i = 0; i < values.size(); ++i) m.v[i] = values[i];
    return m;
  };
  GruLayer layer{draw(3 * hidden, in, seed), draw(3 * hidden, hidden, seed + 1), {}, {}};
  layer.b_ih = draw(3 * hidden, 1, seed + 2).v;
  layer.b_hh = draw(3 * hidden, 1, seed + 3).v;
  return layer;
}

// One step of one sample: x [in], h [H] -> h'.
inline std::vector<double> gru_cell(const GruLayer& w, const double* x, const double* h) {
  const Index H = w.hidden(), in = w.w_ih.cols;
  std::vector<double> gi(3 * H), gh(3 * H), out(H);
  for (Index g = 0; g < 3 * H; ++g) {
    double a = w.b_ih[g], b = w.b_hh[g];
    for (Index c = 0; c < in; ++c) a += w.w_ih(g, c) * x[c];
    for (Index c = 0; c < H; ++c) b += w.w_hh(g, c) * h[c];
    gi[g] = a;
    gh[g] = b;
  }
  for (Index j = 0; j < H; ++j) {
    const double r = sigmoid(gi[j] + gh[j]);
    const double z = sigmoid(gi[H + j] + gh[H + j]);
    const double n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
    out[j] = (1.0 - z) * n + z * h[j];
  }
  return out;
}

struct GruResult {
  Batch output;  // [T, B, H]
  Batch h_n;     // [L, B, H]
};

// x [T, B, in], h0 [L, B, H] (or empty for zeros). Layer l >= 1's input entry i (row-major over
// [T, B, H]) is multiplied by dropout_factor(p, seed, (l - 1) T B H + i) when training.
inline GruResult gru(const std::vector<GruLayer>& layers, const Batch& x, const Batch& h0,
                     double p = 0.0, uint64_t seed = 0, bool training = false) {
  const Index T = x.batch, B = x.rows, L = static_cast<Index>(layers.size());
  const Index H = layers[0].hidden();
  Batch input = x;
  GruResult out{Batch(), Batch(L, B, H)};
  for (Index l = 0; l < L; ++l) {
    if (l > 0 && training && p > 0.0) {
      for (size_t i = 0; i < input.v.size(); ++i) {
        input.v[i] *= dropout_factor(p, seed, static_cast<uint64_t>((l - 1) * T * B * H) + i);
      }
    }
    Batch output(T, B, H);
    for (Index b = 0; b < B; ++b) {
      std::vector<double> h(H, 0.0);
      if (!h0.v.empty()) {
        for (Index j = 0; j < H; ++j) h[j] = h0(l, b, j);
      }
      for (Index t = 0; t < T; ++t) {
        h = gru_cell(layers[l], &input.v[static_cast<size_t>((t * B + b) * input.cols)], h.data());
        for (Index j = 0; j < H; ++j) output(t, b, j) = h[j];
      }
      for (Index j = 0; j < H; ++j) out.h_n(l, b, j) = h[j];
    }
    input = output;
  }
  out.output = input;
  return out;
}

// d2l's Seq2Seq.loss: mean over labels != pad of logsumexp(row) - row[label].
inline double masked_cross_entropy(const Mat& logits, const std::vector<int32_t>& labels,
                                   int32_t pad) {
  double total = 0.0, count = 0.0;
  for (Index i = 0; i < logits.rows; ++i) {
    if (labels[i] == pad) continue;
    double max = -kInf;
    for (Index j = 0; j < logits.cols; ++j) max = std::max(max, logits(i, j));
    double sum = 0.0;
    for (Index j = 0; j < logits.cols; ++j) sum += std::exp(logits(i, j) - max);
    total += max + std::log(sum) - logits(i, labels[i]);
    count += 1.0;
  }
  return total / count;
}

}  // namespace ref
