#pragma once
// A double-precision reference for scaled dot-product attention with grouped K/V heads and the
// score modifiers, written from the formulas of attn/attention.hpp: softmax(modify(scale q k^T))
// v with the sink in the denominator, and each row's log-sum-exp. valid_lens: one per batch row.

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/attention.hpp"
#include "reference.hpp"

namespace ref {

struct Shape {
  Index batch, heads, kv_heads, nq, nk, d, dv;
};

struct Reference {
  Batch output, weights;
  std::vector<double> lse;
};

// Whether the boolean masks hide key j from query i of batch row b.
inline bool hidden(const attn::Mask& m, Index b, Index i, Index j) {
  return (m.causal && j > i) || (m.window_left >= 0 && j < i - m.window_left) ||
         (m.window_right >= 0 && j > i + m.window_right) ||
         (!m.valid_lens.empty() && j >= m.valid_lens[static_cast<size_t>(b)]);
}

// q [batch * heads, nq, d], k [batch * kv_heads, nk, d], v [.., nk, dv], flat.
inline Reference reference(const Shape& s, const std::vector<double>& q,
                           const std::vector<double>& k, const std::vector<double>& v,
                           const attn::AttentionOptions& o) {
  const Index group = s.heads / s.kv_heads;
  const double scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(s.d));
  Reference r{Batch(s.batch * s.heads, s.nq, s.dv), Batch(s.batch * s.heads, s.nq, s.nk),
              std::vector<double>(static_cast<size_t>(s.batch * s.heads * s.nq))};
  std::vector<double> logits(static_cast<size_t>(s.nk));
  for (Index b = 0; b < s.batch; ++b) {
    for (Index h = 0; h < s.heads; ++h) {
      const Index m = b * s.heads + h, kv = b * s.kv_heads + h / group;
      for (Index i = 0; i < s.nq; ++i) {
        double max = -kInf;
        for (Index j = 0; j < s.nk; ++j) {
          double x = 0.0;
          for (Index t = 0; t < s.d; ++t) {
            x += q[static_cast<size_t>((m * s.nq + i) * s.d + t)] *
                 k[static_cast<size_t>((kv * s.nk + j) * s.d + t)];
          }
          x *= scale;
          if (o.softcap) x = *o.softcap * std::tanh(x / *o.softcap);
          if (!o.alibi_slopes.empty()) {
            x -= o.alibi_slopes[static_cast<size_t>(h)] * std::abs(static_cast<double>(i - j));
          }
          if (hidden(o.mask, b, i, j)) x = o.mask.fill;
          logits[static_cast<size_t>(j)] = x;
          max = std::max(max, x);
        }
        const bool sink = !o.sinks.empty();
        const double sink_logit = sink ? o.sinks[static_cast<size_t>(h)] : 0.0;
        if (sink) max = std::max(max, sink_logit);
        double sum = sink ? std::exp(sink_logit - max) : 0.0;
        for (double x : logits) sum += std::exp(x - max);
        r.lse[static_cast<size_t>(m * s.nq + i)] = max + std::log(sum);
        for (Index j = 0; j < s.nk; ++j) {
          const double w = std::exp(logits[static_cast<size_t>(j)] - max) / sum;
          r.weights(m, i, j) = w;
          for (Index c = 0; c < s.dv; ++c) {
            r.output(m, i, c) += w * v[static_cast<size_t>((kv * s.nk + j) * s.dv + c)];
          }
        }
      }
    }
  }
  return r;
}

}  // namespace ref
