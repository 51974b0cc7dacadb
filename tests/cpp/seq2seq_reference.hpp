#pragma once
// A double-precision transcription of d2l's Seq2SeqEncoder + Seq2SeqAttentionDecoder (and
// Seq2SeqDecoder) from their equations, one sample at a time, reading parameters by their
// state-dict names. Dropout follows the masks attn/seq2seq.hpp documents. It shares nothing with
// the library but the GRU cell of recurrent_reference.hpp (itself written from PyTorch's docs).

#include <map>
#include <string>
#include <vector>

#include "attn/multi_head_attention.hpp"
#include "recurrent_reference.hpp"

namespace ref {

using StateDict = std::map<std::string, std::vector<double>>;

inline StateDict to_double(const std::vector<attn::NamedTensor>& entries) {
  StateDict out;
  for (const auto& e : entries) out[e.name] = std::vector<double>(e.data.begin(), e.data.end());
  return out;
}

struct Seq2SeqShape {
  Index src_vocab, tgt_vocab, embed, hidden, layers;
  bool attention;
};

struct Seq2SeqResult {
  Batch logits;     // [B, Tt, V]
  Batch attention;  // [B, Tt, Ts]
};

struct DropoutSpec {
  double p = 0.0;
  uint64_t seed = 0;  // sites: encoder GRU seed, decoder GRU seed + 1, attention seed + 2
};

inline Mat matrix_of(const StateDict& sd, const std::string& name, Index rows, Index cols) {
  Mat m(rows, cols);
  m.v = sd.at(name);
  REQUIRE(m.v.size() == static_cast<size_t>(rows * cols));
  return m;
}

inline GruLayer gru_layer_of(const StateDict& sd, const std::string& prefix, Index l, Index in,
                             Index H) {
  const std::string k = "_l" + std::to_string(l);
  return {matrix_of(sd, prefix + "weight_ih" + k, 3 * H, in),
          matrix_of(sd, prefix + "weight_hh" + k, 3 * H, H), sd.at(prefix + "bias_ih" + k),
          sd.at(prefix + "bias_hh" + k)};
}

// src [B][Ts], tgt_input [B][Tt] (row-major vectors).
inline Seq2SeqResult seq2seq(const StateDict& sd, const Seq2SeqShape& s,
                             const std::vector<int32_t>& src, const std::vector<int32_t>& lens,
                             const std::vector<int32_t>& tgt, Index B,
                             const DropoutSpec& drop = {}) {
  const Index Ts = static_cast<Index>(src.size()) / B, Tt = static_cast<Index>(tgt.size()) / B;
  const Index E = s.embed, H = s.hidden, L = s.layers, V = s.tgt_vocab;
  const auto& src_embedding = sd.at("encoder.embedding.weight");
  const auto& tgt_embedding = sd.at("decoder.embedding.weight");
  std::vector<GruLayer> encoder, decoder;
  for (Index l = 0; l < L; ++l) {
    encoder.push_back(gru_layer_of(sd, "encoder.rnn.", l, l == 0 ? E : H, H));
    decoder.push_back(gru_layer_of(sd, "decoder.rnn.", l, l == 0 ? E + H : H, H));
  }
  const Mat dense = matrix_of(sd, "decoder.dense.weight", V, H);
  const auto& dense_bias = sd.at("decoder.dense.bias");
  const auto factor = [&](uint64_t site, uint64_t index) {
    return drop.p > 0.0 ? dropout_factor(drop.p, drop.seed + site, index) : 1.0;
  };

  Seq2SeqResult out{Batch(B, Tt, V), Batch(B, Tt, s.attention ? Ts : 0)};
  for (Index b = 0; b < B; ++b) {
    // Encoder: layer by layer over the source.
    std::vector<std::vector<double>> layer_in(static_cast<size_t>(Ts));
    for (Index t = 0; t < Ts; ++t) {
      const int32_t id = src[static_cast<size_t>(b * Ts + t)];
      layer_in[t].assign(src_embedding.begin() + id * E, src_embedding.begin() + (id + 1) * E);
    }
    std::vector<std::vector<double>> state(static_cast<size_t>(L));
    for (Index l = 0; l < L; ++l) {
      std::vector<double> h(H, 0.0);
      for (Index t = 0; t < Ts; ++t) {
        std::vector<double> x = layer_in[t];
        if (l > 0) {
          for (Index j = 0; j < H; ++j) {
            x[j] *= factor(0, static_cast<uint64_t>((l - 1) * Ts * B * H + (t * B + b) * H + j));
          }
        }
        h = gru_cell(encoder[l], x.data(), h.data());
        layer_in[t] = h;
      }
      state[l] = h;
    }
    const auto& enc_out = layer_in;  // the top layer's outputs

    // Decoder, teacher-forced.
    for (Index t = 0; t < Tt; ++t) {
      const int32_t id = tgt[static_cast<size_t>(b * Tt + t)];
      const std::vector<double> e(tgt_embedding.begin() + id * E,
                                  tgt_embedding.begin() + (id + 1) * E);
      std::vector<double> x;
      if (s.attention) {
        const Mat wq = matrix_of(sd, "decoder.attention.W_q.weight", H, H);
        const Mat wk = matrix_of(sd, "decoder.attention.W_k.weight", H, H);
        const auto& wv = sd.at("decoder.attention.w_v.weight");
        const std::vector<double>& query = state[L - 1];
        std::vector<double> scores(static_cast<size_t>(Ts));
        for (Index j = 0; j < Ts; ++j) {
          double score = 0.0;
          for (Index c = 0; c < H; ++c) {
            double a = 0.0;
            for (Index d = 0; d < H; ++d) a += wq(c, d) * query[d] + wk(c, d) * enc_out[j][d];
            score += wv[c] * std::tanh(a);
          }
          scores[j] = j < lens[static_cast<size_t>(b)] ? score : -1e6;
        }
        softmax_row(scores.data(), Ts);
        std::vector<double> context(H, 0.0);
        for (Index j = 0; j < Ts; ++j) {
          out.attention(b, t, j) = scores[j];
          const double w = scores[j] * factor(2, static_cast<uint64_t>((t * B + b) * Ts + j));
          for (Index c = 0; c < H; ++c) context[c] += w * enc_out[j][c];
        }
        x = context;  // concat(context, embedding)
        x.insert(x.end(), e.begin(), e.end());
      } else {
        x = e;  // concat(embedding, encoder's last top output)
        x.insert(x.end(), enc_out[Ts - 1].begin(), enc_out[Ts - 1].end());
      }
      for (Index l = 0; l < L; ++l) {
        if (l > 0) {
          x = state[l - 1];
          for (Index j = 0; j < H; ++j) {
            x[j] *= factor(1, static_cast<uint64_t>((l - 1) * Tt * B * H + (t * B + b) * H + j));
          }
        }
        state[l] = gru_cell(decoder[l], x.data(), state[l].data());
      }
      for (Index v = 0; v < V; ++v) {
        double logit = dense_bias[v];
        for (Index c = 0; c < H; ++c) logit += dense(v, c) * state[L - 1][c];
        out.logits(b, t, v) = logit;
      }
    }
  }
  return out;
}

// d2l's Seq2Seq.loss of the logits above against tgt_output [B][Tt].
inline double seq2seq_loss(const Batch& logits, const std::vector<int32_t>& labels, int32_t pad) {
  Mat flat(logits.batch * logits.rows, logits.cols);
  flat.v = logits.v;
  return masked_cross_entropy(flat, labels, pad);
}

}  // namespace ref
