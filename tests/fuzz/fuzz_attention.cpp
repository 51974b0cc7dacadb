// Fuzz target for the core's argument validation and attention entry points.
//
// Each input decodes to one call (scaled dot-product or additive attention, masked softmax, a
// score function, bmm, or a multi-head attention forward, optionally after set_parameter) with
// sizes 0..40, masks, valid lengths in and out of range, options (dropout, scale and fill
// including NaN and infinities) and buffers of exactly the declared sizes, so that AddressSanitizer
// flags any read past what a caller handed over. The checks:
//  - the call throws std::invalid_argument exactly when the documented contract says the
//    arguments do not fit (anything else thrown escapes and fails the run);
//  - with tame values, every softmax row is what mask.hpp documents (see fuzz_mask.hpp), outputs
//    are finite, and attention outputs equal weights x values computed here in double;
//  - scores and bmm equal a double-precision reference.
// Built with libFuzzer (clang -fsanitize=fuzzer) or with replay_main.cpp where libFuzzer is not
// available; see tests/fuzz/CMakeLists.txt.

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/bmm.hpp"
#include "attn/multi_head_attention.hpp"
#include "attn/scoring.hpp"
#include "attn/softmax.hpp"
#include "fuzz_input.hpp"
#include "fuzz_mask.hpp"

namespace fuzz {
namespace {

constexpr int kMaxSize = 40;

struct Shape {
  Index batch, rows, cols;
  bool operator==(const Shape& o) const {
    return batch == o.batch && rows == o.rows && cols == o.cols;
  }
  size_t size() const { return static_cast<size_t>(batch * rows * cols); }
  std::string str() const {
    return "[" + std::to_string(batch) + ", " + std::to_string(rows) + ", " + std::to_string(cols) +
           "]";
  }
};

// A tensor of exactly its declared shape's size.
struct Buffer {
  Shape shape;
  std::vector<float> data;
  Buffer(Shape s, Stream& stream, Values values, float scale)
      : shape(s), data(tensor(s.size(), stream, values, scale)) {}
  attn::ConstBatch view() const { return {data.data(), shape.batch, shape.rows, shape.cols}; }
  attn::MutableBatch view() { return {data.data(), shape.batch, shape.rows, shape.cols}; }
  float at(Index b, Index i, Index j) const {
    return data[static_cast<size_t>((b * shape.rows + i) * shape.cols + j)];
  }
};

Index size(Input& in) { return in.below(kMaxSize + 1); }

// The dimensions a case may perturb: all three of a tensor, rows and columns of a matrix.
struct Dims {
  std::vector<Index*> list;
  Dims& tensor(Shape& s) {
    list.insert(list.end(), {&s.batch, &s.rows, &s.cols});
    return *this;
  }
  Dims& matrix(Shape& s) {
    list.insert(list.end(), {&s.rows, &s.cols});
    return *this;
  }
  Dims& vector(Index& n) {
    list.push_back(&n);
    return *this;
  }
};

// One time in four, one of `dims` becomes a fuzzed size (possibly the same), so that validation
// meets every kind of mismatch; buffers are then allocated at the perturbed size.
void perturb(Input& in, const Dims& dims) {
  if (in.below(4) != 0) return;
  *dims.list[static_cast<size_t>(in.below(static_cast<int>(dims.list.size())))] = size(in);
}

attn::Matrix matrix(const Shape& shape, Stream& stream, Values values) {  // rows x cols
  const std::vector<float> data =
      tensor(static_cast<size_t>(shape.rows * shape.cols), stream, values, 1);
  return attn::ConstMatrixMap(data.data(), shape.rows, shape.cols);
}

attn::Vector vector(Index n, Stream& stream, Values values) {
  const std::vector<float> data = tensor(static_cast<size_t>(n), stream, values, 1);
  return Eigen::Map<const attn::Vector>(data.data(), n);
}

Values values_of(Input& in) { return in.below(4) == 0 ? Values::Wild : Values::Tame; }

// Runs `call` and checks that it throws std::invalid_argument exactly when `valid` is false.
// Returns whether it succeeded.
template <typename Call>
bool expect(bool valid, bool undetermined, const std::string& what, Call&& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    if (valid && !undetermined) fail(what + ": valid arguments rejected: " + e.what());
    return false;
  }
  if (!valid && !undetermined) fail(what + ": invalid arguments accepted");
  return true;
}

void check_finite(const float* x, size_t n, const std::string& what) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) fail(what + " [" + std::to_string(i) + "] is not finite");
  }
}

// out[s, i, :] against sum_j w[s, i, j] v[s, j, :] in double.
void check_pooled(const Buffer& out, const Buffer& w, const Buffer& v, const std::string& what) {
  for (Index s = 0; s < out.shape.batch; ++s) {
    for (Index i = 0; i < out.shape.rows; ++i) {
      for (Index c = 0; c < out.shape.cols; ++c) {
        double expected = 0.0, magnitude = 0.0;
        for (Index j = 0; j < v.shape.rows; ++j) {
          expected += double(w.at(s, i, j)) * v.at(s, j, c);
          magnitude += std::fabs(double(w.at(s, i, j)) * v.at(s, j, c));
        }
        const double got = out.at(s, i, c);
        const bool ok = std::isnan(expected) ? std::isnan(got)
                                             : std::fabs(got - expected) <= 1e-4 * magnitude + 1e-6;
        if (!ok) {
          fail(what + " output [" + std::to_string(s) + ", " + std::to_string(i) + ", " +
               std::to_string(c) + "] = " + num(got) + ", weights x values give " + num(expected));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

void fuzz_attention(Input& in, bool additive) {
  const Index batch = in.below(5), nq = size(in), nk = size(in), d = size(in), dv = size(in);
  const Index dk = additive ? size(in) : d, hidden = additive ? in.below(17) : 0;
  Shape q{batch, nq, d}, k{batch, nk, dk}, v{batch, nk, dv}, out{batch, nq, dv}, w{batch, nq, nk},
      wq{1, hidden, d}, wk{1, hidden, dk};
  Index wv = hidden;
  const bool need_weights = in.flag();
  Dims dims;
  dims.tensor(k).tensor(v).tensor(out).tensor(w);
  if (additive) dims.matrix(wq).matrix(wk).vector(wv);
  perturb(in, dims);
  const Values values = values_of(in);
  Stream stream(in.seed());
  const Buffer bq(q, stream, values, 4), bk(k, stream, values, 4), bv(v, stream, values, 4);
  Buffer bout(out, stream, values, 1), bw(w, stream, values, 1);
  attn::ScoreParams params;
  if (additive) {
    params.Wq = matrix(wq, stream, values);
    params.Wk = matrix(wk, stream, values);
    params.wv = vector(wv, stream, values);
  }

  const MaskCase mask(in, stream, values, batch, nq, nk, 1, -1e6f);
  attn::AttentionOptions options;
  options.mask = mask.mask;
  options.dropout = in.pick<float>({0, 0, 0, 0.5f, 0.1f, 0.999f, 1, -0.1f, kNaN, kInf, -0.0f});
  switch (in.below(8)) {
    case 3:
      options.scale = stream.uniform(-2, 2);
      break;
    case 4:
      options.scale = 0.0f;
      break;
    case 5:
      options.scale = stream.uniform(-100, 100);
      break;
    case 6:
      options.scale = in.pick<float>({kNaN, kInf, -kInf});
      break;
    case 7:
      options.scale = 1e30f;
      break;
    default:
      break;  // 1 / sqrt(d)
  }
  options.seed = in.seed();

  bool valid = k.batch == batch && v.batch == batch && v.rows == k.rows &&
               out == Shape{batch, nq, v.cols} && (!need_weights || w == Shape{batch, nq, k.rows});
  if (additive) {
    valid = valid && wq.rows == wv && wq.cols == d && wk.rows == wv && wk.cols == k.cols;
  } else {
    valid = valid && k.cols == d;
  }
  valid = valid && options.dropout >= 0 && options.dropout < 1 &&
          (!options.scale || std::isfinite(*options.scale)) && mask.valid;

  const std::string what = std::string(additive ? "additive_attention" : "sdpa") + " q " + q.str() +
                           " k " + k.str() + " v " + v.str() + " output " + out.str() +
                           (need_weights ? " weights " + w.str() : "");
  const attn::MutableBatch weights_view = bw.view();
  const attn::MutableBatch* weights = need_weights ? &weights_view : nullptr;
  const bool ok = expect(valid, mask.undetermined, what, [&] {
    if (additive) {
      attn::additive_attention(bq.view(), bk.view(), bv.view(), params, options, bout.view(),
                               weights);
    } else {
      attn::scaled_dot_product_attention(bq.view(), bk.view(), bv.view(), options, bout.view(),
                                         weights);
    }
  });
  const bool tame_scale = !options.scale || std::fabs(*options.scale) <= 100;
  if (!ok || values != Values::Tame || !mask.tame || !tame_scale) return;

  for (Index s = 0; s < batch; ++s) {
    for (Index i = 0; i < nq; ++i) {
      const MaskCase::Row row = mask.expect_row(s, i);
      const std::string at = what + " row [" + std::to_string(s) + ", " + std::to_string(i) + "]";
      if (need_weights) check_row(bw.data.data() + ((s * nq + i) * nk), nk, row, at);
      if (!row.nan) check_finite(bout.data.data() + ((s * nq + i) * dv), dv, at);
    }
  }
  if (need_weights && options.dropout == 0) check_pooled(bout, bw, bv, what);
  if (nk == 0) {
    for (float x : bout.data) {
      if (x != 0.0f) fail(what + ": with no keys the output must be 0");
    }
  }
}

void fuzz_masked_softmax(Input& in) {
  const Index batch = in.below(5), nq = size(in), nk = size(in);
  const Values values = values_of(in);
  const float scale = in.pick<float>({4, 1e4f});  // logits of +-1e4 must stay finite
  Stream stream(in.seed());
  Buffer scores({batch, nq, nk}, stream, values, scale);
  const MaskCase mask(in, stream, values, batch, nq, nk, 1, -1e6f);
  const std::string what = "masked_softmax " + scores.shape.str();
  const bool ok = expect(mask.valid, mask.undetermined, what,
                         [&] { attn::masked_softmax_in_place(scores.view(), mask.mask); });
  if (!ok || values != Values::Tame || !mask.tame) return;
  for (Index s = 0; s < batch; ++s) {
    for (Index i = 0; i < nq; ++i) {
      check_row(scores.data.data() + ((s * nq + i) * nk), nk, mask.expect_row(s, i),
                what + " row [" + std::to_string(s) + ", " + std::to_string(i) + "]");
    }
  }
}

void fuzz_score(Input& in) {
  const auto fn = static_cast<attn::ScoreFunction>(in.below(5));
  const bool same_width = fn != attn::ScoreFunction::Additive && fn != attn::ScoreFunction::General;
  const Index batch = in.below(5), nq = size(in), nk = size(in), dq = size(in);
  const Index dk = same_width ? dq : size(in), hidden = in.below(17);
  Shape q{batch, nq, dq}, k{batch, nk, dk}, out{batch, nq, nk}, wq{1, hidden, dq},
      wk{1, hidden, dk}, wg{1, dq, dk};
  Index wv = hidden;
  perturb(in, Dims().tensor(k).tensor(out).matrix(wq).matrix(wk).vector(wv).matrix(wg));
  const Values values = values_of(in);
  Stream stream(in.seed());
  const Buffer bq(q, stream, values, 4), bk(k, stream, values, 4);
  Buffer bout(out, stream, values, 1);
  attn::ScoreParams params;
  if (fn == attn::ScoreFunction::Additive) {
    params.Wq = matrix(wq, stream, values);
    params.Wk = matrix(wk, stream, values);
    params.wv = vector(wv, stream, values);
  } else if (fn == attn::ScoreFunction::General) {
    params.W = matrix(wg, stream, values);
  }

  bool valid = k.batch == batch && out == Shape{batch, nq, k.rows};
  if (same_width) valid = valid && k.cols == dq;
  if (fn == attn::ScoreFunction::Additive) {
    valid = valid && wq.rows == wv && wq.cols == dq && wk.rows == wv && wk.cols == k.cols;
  }
  if (fn == attn::ScoreFunction::General) valid = valid && wg.rows == dq && wg.cols == k.cols;
  const std::string what = "score " + std::to_string(int(fn)) + " q " + q.str() + " k " + k.str();
  const bool ok = expect(valid, false, what,
                         [&] { attn::score(fn, bq.view(), bk.view(), params, bout.view()); });
  if (!ok || values != Values::Tame) return;

  for (Index b = 0; b < batch; ++b) {
    for (Index i = 0; i < nq; ++i) {
      for (Index j = 0; j < nk; ++j) {
        double expected = 0.0, magnitude = 0.0;
        switch (fn) {
          case attn::ScoreFunction::Dot:
          case attn::ScoreFunction::ScaledDot:
            for (Index c = 0; c < dq; ++c) {
              expected += double(bq.at(b, i, c)) * bk.at(b, j, c);
              magnitude += std::fabs(double(bq.at(b, i, c)) * bk.at(b, j, c));
            }
            if (fn == attn::ScoreFunction::ScaledDot && dq > 0) expected /= std::sqrt(double(dq));
            break;
          case attn::ScoreFunction::NegSquaredDistance:
            for (Index c = 0; c < dq; ++c) {
              const double diff = double(bq.at(b, i, c)) - bk.at(b, j, c);
              expected -= 0.5 * diff * diff;
            }
            magnitude = std::fabs(expected);
            break;
          case attn::ScoreFunction::Additive:
            for (Index h = 0; h < wv; ++h) {  // |wv^T tanh(.)| <= sum |wv|
              magnitude += std::fabs(double(params.wv(h)));
            }
            break;
          case attn::ScoreFunction::General:
            for (Index a = 0; a < dq; ++a) {
              for (Index c = 0; c < dk; ++c) {
                const double term = double(bq.at(b, i, a)) * params.W(a, c) * bk.at(b, j, c);
                expected += term;
                magnitude += std::fabs(term);
              }
            }
            break;
        }
        const double got = bout.at(b, i, j);
        const bool ok_value = fn == attn::ScoreFunction::Additive
                                  ? std::fabs(got) <= magnitude * (1 + 1e-5) + 1e-6
                                  : std::fabs(got - expected) <= 1e-5 * magnitude + 1e-6;
        if (!ok_value) {
          fail(what + " [" + std::to_string(b) + ", " + std::to_string(i) + ", " +
               std::to_string(j) + "] = " + num(got) + ", expected " + num(expected));
        }
      }
    }
  }
}

void fuzz_bmm(Input& in) {
  const Index batch = in.below(5), n = size(in), inner = size(in), m = size(in);
  Shape a{batch, n, inner}, b{batch, inner, m}, out{batch, n, m};
  perturb(in, Dims().tensor(b).tensor(out));
  const Values values = values_of(in);
  Stream stream(in.seed());
  const Buffer ba(a, stream, values, 4), bb(b, stream, values, 4);
  Buffer bout(out, stream, values, 1);
  const bool valid = b.batch == batch && b.rows == inner && out == Shape{batch, n, b.cols};
  const std::string what = "bmm " + a.str() + " x " + b.str() + " -> " + out.str();
  if (!expect(valid, false, what, [&] { attn::bmm(ba.view(), bb.view(), bout.view()); }) ||
      values != Values::Tame) {
    return;
  }
  for (Index s = 0; s < batch; ++s) {
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < m; ++j) {
        double expected = 0.0, magnitude = 0.0;
        for (Index c = 0; c < inner; ++c) {
          expected += double(ba.at(s, i, c)) * bb.at(s, c, j);
          magnitude += std::fabs(double(ba.at(s, i, c)) * bb.at(s, c, j));
        }
        if (std::fabs(bout.at(s, i, j) - expected) > 1e-5 * magnitude + 1e-6) {
          fail(what + ": [" + std::to_string(s) + ", " + std::to_string(i) + ", " +
               std::to_string(j) + "] = " + num(bout.at(s, i, j)) + ", expected " + num(expected));
        }
      }
    }
  }
}

// One parameter by name, with the shape PyTorch gives it (or a fuzzed one).
void fuzz_set_parameter(Input& in, Stream& stream, attn::MultiHeadAttention& mha, Index e,
                        Index kdim, Index vdim, bool bias) {
  const bool packed = kdim == e && vdim == e;
  struct Known {
    const char* name;
    std::vector<Index> shape;
    bool present;
  } const known[] = {{"in_proj_weight", {3 * e, e}, packed}, {"q_proj_weight", {e, e}, !packed},
                     {"k_proj_weight", {e, kdim}, !packed},  {"v_proj_weight", {e, vdim}, !packed},
                     {"in_proj_bias", {3 * e}, bias},        {"out_proj.weight", {e, e}, true},
                     {"out_proj.bias", {e}, bias},           {"out_proj", {e, e}, false}};
  const Known& entry = known[in.below(8)];
  std::vector<Index> shape = entry.shape;
  if (in.below(4) == 0) {
    if (in.flag()) {
      shape.push_back(1);
    } else {
      shape[in.byte() % shape.size()] = in.below(49);
    }
  }
  size_t count = 1;
  for (Index dim : shape) count *= static_cast<size_t>(dim);
  const std::vector<float> data = tensor(count, stream, Values::Tame, 0.5f);
  expect(entry.present && shape == entry.shape, false, std::string("set_parameter ") + entry.name,
         [&] { mha.set_parameter(entry.name, data.data(), shape); });
}

void fuzz_multi_head(Input& in) {
  attn::MultiHeadConfig config;
  config.embed_dim = in.below(17);
  config.num_heads = in.below(6);
  config.kdim = in.below(17);
  config.vdim = in.below(17);
  config.bias = in.flag();
  const Index e = config.embed_dim, heads = config.num_heads;
  const bool config_valid = e > 0 && heads > 0 && e % heads == 0;
  std::optional<attn::MultiHeadAttention> mha;
  if (!expect(config_valid, false,
              "MultiHeadAttention(" + std::to_string(e) + ", " + std::to_string(heads) + ")",
              [&] { mha.emplace(config); })) {
    return;
  }
  const Index kdim = config.kdim ? config.kdim : e, vdim = config.vdim ? config.vdim : e;
  Stream stream(in.seed());
  if (in.flag()) fuzz_set_parameter(in, stream, *mha, e, kdim, vdim, config.bias);

  const Index batch = in.below(5), nq = size(in), nk = size(in);
  const bool need_weights = in.flag();
  attn::MultiHeadForwardOptions options;
  options.average_attn_weights = in.flag();
  const Index weight_batch = options.average_attn_weights ? batch : batch * heads;
  Shape query{batch, nq, e}, key{batch, nk, kdim}, value{batch, nk, vdim}, out{batch, nq, e},
      w{weight_batch, nq, nk};
  perturb(in, Dims().tensor(key).tensor(value).tensor(out).tensor(w));
  const Values values = values_of(in);
  const Buffer bq(query, stream, values, 4), bk(key, stream, values, 4),
      bv(value, stream, values, 4);
  Buffer bout(out, stream, values, 1), bw(w, stream, values, 1);
  const MaskCase mask(in, stream, values, batch, nq, nk, heads, -kInf);
  options.mask = mask.mask;

  const bool valid = key == Shape{batch, key.rows, kdim} && value == Shape{batch, key.rows, vdim} &&
                     out == Shape{batch, nq, e} &&
                     (!need_weights || w == Shape{weight_batch, nq, key.rows}) && mask.valid;
  const std::string what = "multi-head E " + std::to_string(e) + " heads " + std::to_string(heads) +
                           " query " + query.str() + " key " + key.str() + " value " + value.str() +
                           " output " + out.str() + (need_weights ? " weights " + w.str() : "");
  const attn::MutableBatch weights_view = bw.view();
  const bool ok = expect(valid, mask.undetermined, what, [&] {
    mha->forward(bq.view(), bk.view(), bv.view(), options, bout.view(),
                 need_weights ? &weights_view : nullptr);
  });
  if (!ok || values != Values::Tame || !mask.tame) return;

  for (Index b = 0; b < batch; ++b) {
    for (Index i = 0; i < nq; ++i) {
      const std::string at = what + " row [" + std::to_string(b) + ", " + std::to_string(i) + "]";
      MaskCase::Row mean;  // the head average: NaN if any head is, zero where every head is
      mean.zero.assign(static_cast<size_t>(nk), true);
      for (Index h = 0; h < heads; ++h) {
        const MaskCase::Row row = mask.expect_row(b * heads + h, i);
        mean.nan = mean.nan || row.nan;
        for (size_t j = 0; j < row.zero.size(); ++j) mean.zero[j] = mean.zero[j] && row.zero[j];
        if (need_weights && !options.average_attn_weights) {
          check_row(bw.data.data() + (((b * heads + h) * nq + i) * nk), nk, row,
                    at + " head " + std::to_string(h));
        }
      }
      if (need_weights && options.average_attn_weights) {
        check_row(bw.data.data() + ((b * nq + i) * nk), nk, mean, at);
      }
      if (!mean.nan) check_finite(bout.data.data() + ((b * nq + i) * e), e, at);
    }
  }
}

}  // namespace
}  // namespace fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  switch (in.below(6)) {
    case 0:
      fuzz::fuzz_attention(in, false);
      break;
    case 1:
      fuzz::fuzz_attention(in, true);
      break;
    case 2:
      fuzz::fuzz_masked_softmax(in);
      break;
    case 3:
      fuzz::fuzz_score(in);
      break;
    case 4:
      fuzz::fuzz_bmm(in);
      break;
    default:
      fuzz::fuzz_multi_head(in);
      break;
  }
  return 0;
}
