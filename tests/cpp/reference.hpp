#pragma once
// Independent double-precision references for the attn core, and the helpers the tests share.
//
// Every reference is a plain loop over std::vector<double>; none of them calls the library
// (attn::Mask and attn::Similarity are read only as descriptions of the input). Inputs are drawn in
// float and widened exactly, so the library and the reference see the same numbers and every
// difference is the library's float arithmetic (or a bug).

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attn/kernel_regression.hpp"
#include "attn/mask.hpp"
#include "attn/similarity.hpp"
#include "attn/tensor.hpp"

namespace ref {

using attn::Index;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// Double tensors and conversions

struct Mat {
  Index rows = 0, cols = 0;
  std::vector<double> v;
  Mat() = default;
  Mat(Index r, Index c, double fill = 0.0)
      : rows(r), cols(c), v(static_cast<size_t>(r * c), fill) {}
  double& operator()(Index i, Index j) { return v[static_cast<size_t>(i * cols + j)]; }
  double operator()(Index i, Index j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

struct Batch {
  Index batch = 0, rows = 0, cols = 0;
  std::vector<double> v;
  Batch() = default;
  Batch(Index b, Index r, Index c, double fill = 0.0)
      : batch(b), rows(r), cols(c), v(static_cast<size_t>(b * r * c), fill) {}
  double& operator()(Index b, Index i, Index j) {
    return v[static_cast<size_t>((b * rows + i) * cols + j)];
  }
  double operator()(Index b, Index i, Index j) const {
    return v[static_cast<size_t>((b * rows + i) * cols + j)];
  }
};

inline Mat to_double(const attn::Matrix& m) {
  Mat out(m.rows(), m.cols());
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) out(i, j) = m(i, j);
  return out;
}

inline Batch to_double(const attn::Tensor3& t) {
  Batch out(t.batch, t.rows, t.cols);
  for (size_t i = 0; i < t.data.size(); ++i) out.v[i] = t.data[i];
  return out;
}

inline std::vector<double> to_double(const attn::Vector& x) {
  std::vector<double> out(static_cast<size_t>(x.size()));
  for (Index i = 0; i < x.size(); ++i) out[static_cast<size_t>(i)] = x(i);
  return out;
}

// Matrix [rows, cols] -> Tensor3 [1, rows, cols] and back, for tests that cross the two APIs.
inline attn::Tensor3 as_tensor(const attn::Matrix& m) {
  attn::Tensor3 t(1, m.rows(), m.cols());
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) t.at(0, i, j) = m(i, j);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Seeded random inputs

inline std::vector<float> uniform(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (auto& x : out) x = dist(gen);
  return out;
}

inline std::vector<float> normal(size_t n, uint32_t seed, float mean = 0.0f, float stddev = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> out(n);
  for (auto& x : out) x = dist(gen);
  return out;
}

inline attn::Tensor3 random_tensor(Index b, Index r, Index c, uint32_t seed, float lo = -1.0f,
                                   float hi = 1.0f) {
  attn::Tensor3 t(b, r, c);
  t.data = uniform(t.data.size(), seed, lo, hi);
  return t;
}

inline attn::Matrix random_matrix(Index r, Index c, uint32_t seed, float lo = -1.0f,
                                  float hi = 1.0f) {
  attn::Matrix m(r, c);
  const auto values = uniform(static_cast<size_t>(r * c), seed, lo, hi);
  std::copy(values.begin(), values.end(), m.data());
  return m;
}

// Rows [from, from + t) of every matrix of x, as [x.batch, t, x.cols].
inline attn::Tensor3 rows(const attn::Tensor3& x, Index from, Index t) {
  attn::Tensor3 part(x.batch, t, x.cols);
  for (Index b = 0; b < x.batch; ++b) {
    for (Index r = 0; r < t; ++r) {
      for (Index c = 0; c < x.cols; ++c) part.at(b, r, c) = x.at(b, from + r, c);
    }
  }
  return part;
}

inline attn::Vector random_vector(Index n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  attn::Vector x(n);
  const auto values = uniform(static_cast<size_t>(n), seed, lo, hi);
  std::copy(values.begin(), values.end(), x.data());
  return x;
}

// ---------------------------------------------------------------------------------------------
// Comparison

// Tolerances of a float result against a double reference.
//  - kTight is the design's contract (1e-5 relative, 1e-6 absolute), for results that are a
//    few float operations away from their inputs: kernels, softmax, masked softmax, closed forms.
//  - kSum is for results that are sums of many float products (bmm, scores, attention outputs,
//    multi-head chains of four matmuls): each term carries a rounding error of ~6e-8 of its
//    magnitude, a sum of k terms of size ~1 accumulates up to ~k * 6e-8, and cancellation can
//    leave a result near 0 whose *relative* error is arbitrarily large. 1e-4 / 1e-5 covers
//    k up to ~100 with margin while still catching any real mistake (a wrong weight, a missed
//    mask or a transposed operand moves results by O(0.01) or more).
struct Tolerance {
  double rel;
  double abs;
};
constexpr Tolerance kTight{1e-5, 1e-6};
constexpr Tolerance kSum{1e-4, 1e-5};

inline bool close(double got, double expected, Tolerance tol) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  using Catch::Matchers::WithinAbs;
  using Catch::Matchers::WithinRel;
  return (WithinRel(expected, tol.rel) || WithinAbs(expected, tol.abs)).match(got);
}

// "[b, i, j]" for flat index `flat` of a row-major tensor of `shape` ("[flat]" without a shape).
inline std::string index_string(size_t flat, const std::vector<Index>& shape) {
  if (shape.empty()) return "[" + std::to_string(flat) + "]";
  std::vector<Index> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<Index>(flat) % shape[d];
    flat /= static_cast<size_t>(shape[d]);
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) out += (d ? ", " : "") + std::to_string(index[d]);
  return out + "]";
}

// Checks every element; reports the first few mismatches with their index and both values, then
// the number of mismatches. A NaN expected value requires a NaN.
inline void check_close(const float* got, const double* expected, size_t n, Tolerance tol = kTight,
                        const std::string& what = "", const std::vector<Index>& shape = {}) {
  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    if (close(got[i], expected[i], tol)) continue;
    if (++mismatches <= 8) {
      std::ostringstream msg;
      msg.precision(9);
      msg << what << index_string(i, shape) << ": got " << got[i] << ", expected " << expected[i]
          << " (rel " << tol.rel << ", abs " << tol.abs << ")";
      FAIL_CHECK(msg.str());
    }
  }
  INFO(what << ": " << mismatches << " of " << n << " elements differ");
  CHECK(mismatches == 0);
}

inline void check_close(const attn::Tensor3& got, const Batch& expected, Tolerance tol = kTight,
                        const std::string& what = "tensor") {
  REQUIRE(got.batch == expected.batch);
  REQUIRE(got.rows == expected.rows);
  REQUIRE(got.cols == expected.cols);
  REQUIRE(got.data.size() == expected.v.size());
  check_close(got.data.data(), expected.v.data(), expected.v.size(), tol, what,
              {got.batch, got.rows, got.cols});
}

inline void check_close(const attn::Matrix& got, const Mat& expected, Tolerance tol = kTight,
                        const std::string& what = "matrix") {
  REQUIRE(got.rows() == expected.rows);
  REQUIRE(got.cols() == expected.cols);
  check_close(got.data(), expected.v.data(), expected.v.size(), tol, what,
              {got.rows(), got.cols()});
}

// ---------------------------------------------------------------------------------------------
// Similarity regression

// Every row of a [B, rows, cols] tensor of weights sums to 1.
inline void check_rows_sum_to_one(const attn::Tensor3& p) {
  for (Index b = 0; b < p.batch; ++b) {
    for (Index i = 0; i < p.rows; ++i) {
      double sum = 0.0;
      for (Index j = 0; j < p.cols; ++j) sum += p.at(b, i, j);
      CAPTURE(b, i);
      CHECK_THAT(sum, Catch::Matchers::WithinAbs(1.0, 1e-6));
    }
  }
}

inline double similarity_value(attn::Similarity kernel, double d, double sigma) {
  const double u = d / sigma;
  switch (kernel) {
    case attn::Similarity::Gaussian:
      return std::exp(-u * u / 2.0);
    case attn::Similarity::Boxcar:
      return u <= 1.0 ? 1.0 : 0.0;
    case attn::Similarity::Epanechnikov:
      return std::max(0.0, 1.0 - u);
    case attn::Similarity::Constant:
      return 1.0;
  }
  return kNaN;
}

inline double distance(const Mat& a, Index i, const Mat& b, Index j) {
  double sum = 0.0;
  for (Index c = 0; c < a.cols; ++c) {
    const double diff = a(i, c) - b(j, c);
    sum += diff * diff;
  }
  return std::sqrt(sum);
}

struct Regression {
  Mat output;   // [m, dy]
  Mat weights;  // [m, n]
};

// Unnormalised kernel weights of query q against every key but `skip`. The Gaussian row is
// taken in log-sum-exp form, exp(-(d^2 - min d^2) / (2 sigma^2)): the same weights after
// normalisation, and the nearest key keeps weight 1 where exp(-d^2 / (2 sigma^2)) would be 0 for
// every key (d / sigma > ~38 in double).
inline std::vector<double> kernel_row(const Mat& queries, Index q, const Mat& keys,
                                      attn::Similarity kernel, double sigma, Index skip = -1) {
  std::vector<double> w(static_cast<size_t>(keys.rows), 0.0);
  double max_log = -kInf;
  for (Index i = 0; i < keys.rows; ++i) {
    if (i == skip) continue;
    const double d = distance(queries, q, keys, i);
    if (kernel == attn::Similarity::Gaussian) {
      w[static_cast<size_t>(i)] = -d * d / (2.0 * sigma * sigma);
      max_log = std::max(max_log, w[static_cast<size_t>(i)]);
    } else {
      w[static_cast<size_t>(i)] = similarity_value(kernel, d, sigma);
    }
  }
  if (kernel == attn::Similarity::Gaussian) {
    for (Index i = 0; i < keys.rows; ++i) {
      double& x = w[static_cast<size_t>(i)];
      x = i == skip || max_log == -kInf ? 0.0 : std::exp(x - max_log);
    }
  }
  return w;
}

// Nadaraya-Watson; a query with zero total weight gets zero weights and a NaN output.
inline Regression nadaraya_watson(const Mat& keys, const Mat& values, const Mat& queries,
                                  attn::Similarity kernel, double sigma) {
  Regression r{Mat(queries.rows, values.cols), Mat(queries.rows, keys.rows)};
  for (Index q = 0; q < queries.rows; ++q) {
    const std::vector<double> w = kernel_row(queries, q, keys, kernel, sigma);
    double total = 0.0;
    for (double x : w) total += x;
    for (Index c = 0; c < values.cols; ++c) {
      double sum = 0.0;
      for (Index i = 0; i < keys.rows; ++i) sum += w[static_cast<size_t>(i)] * values(i, c);
      r.output(q, c) = total > 0.0 ? sum / total : kNaN;
    }
    for (Index i = 0; i < keys.rows; ++i) {
      r.weights(q, i) = total > 0.0 ? w[static_cast<size_t>(i)] / total : 0.0;
    }
  }
  return r;
}

struct LeaveOneOut {
  std::vector<double> errors;
  double best;
};

inline const attn::Similarity kAllKernels[] = {attn::Similarity::Gaussian, attn::Similarity::Boxcar,
                                               attn::Similarity::Epanechnikov,
                                               attn::Similarity::Constant};

// kernel_regression against nadaraya_watson for every kernel and each bandwidth.
inline void check_kernel_regression(const attn::Matrix& keys, const attn::Matrix& values,
                                    const attn::Matrix& queries,
                                    std::initializer_list<float> bandwidths) {
  for (attn::Similarity kernel : kAllKernels) {
    for (float sigma : bandwidths) {
      CAPTURE(attn::similarity_name(kernel), sigma);
      const auto got = attn::kernel_regression(keys, values, queries, kernel, sigma);
      const auto expected =
          nadaraya_watson(to_double(keys), to_double(values), to_double(queries), kernel, sigma);
      check_close(got.weights, expected.weights, kTight, "weights");
      check_close(got.output, expected.output, kSum, "output");
    }
  }
}

inline LeaveOneOut leave_one_out(const Mat& keys, const Mat& values, attn::Similarity kernel,
                                 const std::vector<double>& bandwidths) {
  LeaveOneOut r{{}, kNaN};
  double best_error = kInf;
  for (double sigma : bandwidths) {
    double error = 0.0;
    for (Index i = 0; i < keys.rows; ++i) {
      // Predict key i from every key but i.
      const std::vector<double> w = kernel_row(keys, i, keys, kernel, sigma, i);
      double total = 0.0;
      std::vector<double> sum(static_cast<size_t>(values.cols), 0.0);
      for (Index j = 0; j < keys.rows; ++j) {
        total += w[static_cast<size_t>(j)];
        for (Index c = 0; c < values.cols; ++c) {
          sum[static_cast<size_t>(c)] += w[static_cast<size_t>(j)] * values(j, c);
        }
      }
      if (!(total > 0.0)) {
        error = kInf;
        break;
      }
      for (Index c = 0; c < values.cols; ++c) {
        const double diff = values(i, c) - sum[static_cast<size_t>(c)] / total;
        error += diff * diff;
      }
    }
    if (keys.rows < 2) error = kInf;
    if (std::isfinite(error)) error /= static_cast<double>(keys.rows);
    r.errors.push_back(error);
    if (error < best_error) {
      best_error = error;
      r.best = sigma;
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Softmax and masks

// Softmax of one row, max-subtracted. A row whose max is -inf (every entry -inf) is NaN, as in
// PyTorch; +inf entries are not expected.
inline void softmax_row(double* row, Index n) {
  double max = -kInf;
  for (Index j = 0; j < n; ++j) max = std::max(max, row[j]);
  if (max == -kInf) {
    for (Index j = 0; j < n; ++j) row[j] = kNaN;
    return;
  }
  double sum = 0.0;
  for (Index j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max);
    sum += row[j];
  }
  for (Index j = 0; j < n; ++j) row[j] /= sum;
}

inline Mat softmax(Mat x) {
  for (Index i = 0; i < x.rows; ++i) softmax_row(x.v.data() + i * x.cols, x.cols);
  return x;
}

// Whether score (s, i, j) of scores [batch * heads, nq, nk] is hidden by the mask.
// valid_lens: [batch] or [batch * nq]; bool_mask: one [nq, nk] block or one per score matrix;
// key_padding: [batch, nk]; causal: j > i.
inline bool masked(const attn::Mask& mask, Index batch, Index heads, Index nq, Index nk, Index s,
                   Index i, Index j) {
  const Index b = s / heads;
  if (!mask.valid_lens.empty()) {
    const Index count = static_cast<Index>(mask.valid_lens.size());
    const Index len = count == batch ? mask.valid_lens[static_cast<size_t>(b)]
                                     : mask.valid_lens[static_cast<size_t>(b * nq + i)];
    if (j >= len) return true;
  }
  if (mask.bool_mask) {
    const Index block = mask.bool_mask_batch == 1 ? 0 : s;
    if (mask.bool_mask[(block * nq + i) * nk + j]) return true;
  }
  if (mask.key_padding && mask.key_padding[b * nk + j]) return true;
  if (mask.causal && j > i) return true;
  return false;
}

// d2l's masked softmax generalised to every mask kind: the additive mask is added, every masked
// position is replaced by fill, then the max-subtracted softmax. (Tests that combine an additive
// mask with the others use fill = -inf, where the order of the two does not matter.)
inline Batch masked_softmax(Batch scores, const attn::Mask& mask, Index heads = 1) {
  const Index batch = scores.batch / heads, nq = scores.rows, nk = scores.cols;
  for (Index s = 0; s < scores.batch; ++s) {
    for (Index i = 0; i < nq; ++i) {
      for (Index j = 0; j < nk; ++j) {
        double& x = scores(s, i, j);
        if (mask.additive) {
          const Index block = mask.additive_batch == 1 ? 0 : s;
          x += mask.additive[(block * nq + i) * nk + j];
        }
        if (masked(mask, batch, heads, nq, nk, s, i, j)) x = mask.fill;
      }
      softmax_row(&scores(s, i, 0), nk);
    }
  }
  return scores;
}

// ---------------------------------------------------------------------------------------------
// Products and scores

inline Batch bmm(const Batch& a, const Batch& b) {
  Batch out(a.batch, a.rows, b.cols);
  for (Index s = 0; s < a.batch; ++s)
    for (Index i = 0; i < a.rows; ++i)
      for (Index j = 0; j < b.cols; ++j) {
        double sum = 0.0;
        for (Index k = 0; k < a.cols; ++k) sum += a(s, i, k) * b(s, k, j);
        out(s, i, j) = sum;
      }
  return out;
}

// x W^T + b for x [n, in] (rows of a batch flattened), W [out, in], b [out] (or empty).
inline Batch linear(const Batch& x, const Mat& w, const std::vector<double>& b = {}) {
  Batch out(x.batch, x.rows, w.rows);
  for (Index s = 0; s < x.batch; ++s)
    for (Index i = 0; i < x.rows; ++i)
      for (Index o = 0; o < w.rows; ++o) {
        double sum = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
        for (Index c = 0; c < w.cols; ++c) sum += x(s, i, c) * w(o, c);
        out(s, i, o) = sum;
      }
  return out;
}

inline Batch score_dot(const Batch& q, const Batch& k, double scale = 1.0) {
  Batch out(q.batch, q.rows, k.rows);
  for (Index s = 0; s < q.batch; ++s)
    for (Index i = 0; i < q.rows; ++i)
      for (Index j = 0; j < k.rows; ++j) {
        double sum = 0.0;
        for (Index c = 0; c < q.cols; ++c) sum += q(s, i, c) * k(s, j, c);
        out(s, i, j) = sum * scale;
      }
  return out;
}

inline Batch score_scaled_dot(const Batch& q, const Batch& k) {
  return score_dot(q, k, 1.0 / std::sqrt(static_cast<double>(q.cols)));
}

inline Batch score_neg_sq_dist(const Batch& q, const Batch& k) {
  Batch out(q.batch, q.rows, k.rows);
  for (Index s = 0; s < q.batch; ++s)
    for (Index i = 0; i < q.rows; ++i)
      for (Index j = 0; j < k.rows; ++j) {
        double sum = 0.0;
        for (Index c = 0; c < q.cols; ++c) {
          const double diff = q(s, i, c) - k(s, j, c);
          sum += diff * diff;
        }
        out(s, i, j) = -sum / 2.0;
      }
  return out;
}

// wv^T tanh(Wq q + Wk k), Wq [h, dq], Wk [h, dk], wv [h].
inline Batch score_additive(const Batch& q, const Batch& k, const Mat& wq, const Mat& wk,
                            const std::vector<double>& wv) {
  const Batch qh = linear(q, wq), kh = linear(k, wk);
  Batch out(q.batch, q.rows, k.rows);
  for (Index s = 0; s < q.batch; ++s)
    for (Index i = 0; i < q.rows; ++i)
      for (Index j = 0; j < k.rows; ++j) {
        double sum = 0.0;
        for (Index h = 0; h < wq.rows; ++h)
          sum += wv[static_cast<size_t>(h)] * std::tanh(qh(s, i, h) + kh(s, j, h));
        out(s, i, j) = sum;
      }
  return out;
}

// q^T W k, W [dq, dk].
inline Batch score_general(const Batch& q, const Batch& k, const Mat& w) {
  Batch out(q.batch, q.rows, k.rows);
  for (Index s = 0; s < q.batch; ++s)
    for (Index i = 0; i < q.rows; ++i)
      for (Index j = 0; j < k.rows; ++j) {
        double sum = 0.0;
        for (Index a = 0; a < q.cols; ++a)
          for (Index c = 0; c < k.cols; ++c) sum += q(s, i, a) * w(a, c) * k(s, j, c);
        out(s, i, j) = sum;
      }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Attention

struct Attention {
  Batch output;
  Batch weights;
};

// Attention pooling from scores: masked softmax, then the weighted sum of values.
inline Attention pool(Batch scores, const Batch& v, const attn::Mask& mask, Index heads = 1) {
  Attention r;
  r.weights = masked_softmax(std::move(scores), mask, heads);
  r.output = bmm(r.weights, v);
  return r;
}

inline Attention scaled_dot_product_attention(const Batch& q, const Batch& k, const Batch& v,
                                              const attn::Mask& mask = {},
                                              std::optional<double> scale = std::nullopt) {
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.cols));
  return pool(score_dot(q, k, s), v, mask);
}

inline Attention additive_attention(const Batch& q, const Batch& k, const Batch& v, const Mat& wq,
                                    const Mat& wk, const std::vector<double>& wv,
                                    const attn::Mask& mask = {}) {
  return pool(score_additive(q, k, wq, wk, wv), v, mask);
}

// torch.nn.MultiheadAttention(batch_first=True) parameters, in double, separate projections
// (a packed in_proj_weight [3E, E] is rows [0, E) = q, [E, 2E) = k, [2E, 3E) = v).
struct MultiHeadParams {
  Mat w_q, w_k, w_v, w_out;                  // [E, E], [E, kdim], [E, vdim], [E, E]
  std::vector<double> b_q, b_k, b_v, b_out;  // [E] each, or empty without bias
};

// What torch's multi_head_attention_forward computes: q/k/v = x W^T + b; split the E features
// into `heads` contiguous chunks of head_dim; scores q_h k_h^T / sqrt(head_dim); masks (score
// matrix index b * heads + h); softmax; weights . v_h; concatenate the heads; out_proj.
// weights: [B, L, S] averaged over heads, or [B * heads, L, S].
inline Attention multi_head_attention(const Batch& query, const Batch& key, const Batch& value,
                                      const MultiHeadParams& p, Index heads, const attn::Mask& mask,
                                      bool average_weights = true) {
  const Index B = query.batch, L = query.rows, S = key.rows, E = p.w_q.rows;
  const Index hd = E / heads;
  const Batch q = linear(query, p.w_q, p.b_q);
  const Batch k = linear(key, p.w_k, p.b_k);
  const Batch v = linear(value, p.w_v, p.b_v);
  Batch scores(B * heads, L, S);
  Batch vh(B * heads, S, hd);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  for (Index b = 0; b < B; ++b)
    for (Index h = 0; h < heads; ++h) {
      const Index s = b * heads + h;
      for (Index i = 0; i < L; ++i)
        for (Index j = 0; j < S; ++j) {
          double sum = 0.0;
          for (Index c = 0; c < hd; ++c) sum += q(b, i, h * hd + c) * k(b, j, h * hd + c);
          scores(s, i, j) = sum * scale;
        }
      for (Index j = 0; j < S; ++j)
        for (Index c = 0; c < hd; ++c) vh(s, j, c) = v(b, j, h * hd + c);
    }
  const Batch w = masked_softmax(std::move(scores), mask, heads);
  const Batch heads_out = bmm(w, vh);  // [B * heads, L, hd]
  Batch concat(B, L, E);
  for (Index b = 0; b < B; ++b)
    for (Index h = 0; h < heads; ++h)
      for (Index i = 0; i < L; ++i)
        for (Index c = 0; c < hd; ++c) concat(b, i, h * hd + c) = heads_out(b * heads + h, i, c);
  Attention r;
  r.output = linear(concat, p.w_out, p.b_out);
  if (average_weights) {
    r.weights = Batch(B, L, S);
    for (Index b = 0; b < B; ++b)
      for (Index h = 0; h < heads; ++h)
        for (Index i = 0; i < L; ++i)
          for (Index j = 0; j < S; ++j)
            r.weights(b, i, j) += w(b * heads + h, i, j) / static_cast<double>(heads);
  } else {
    r.weights = w;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Positional encoding

// P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(i / 10000^(2j/d)).
inline Mat positional_encoding(Index n, Index d) {
  Mat p(n, d);
  for (Index i = 0; i < n; ++i)
    for (Index c = 0; c < d; ++c) {
      const Index even = c - c % 2;
      const double angle =
          static_cast<double>(i) / std::pow(10000.0, static_cast<double>(even) / d);
      p(i, c) = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return p;
}

}  // namespace ref
