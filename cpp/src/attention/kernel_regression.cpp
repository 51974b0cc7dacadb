#include "attn/kernel_regression.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "checks.hpp"
#include "compact_reach.hpp"
#include "gaussian_attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/regression_rows.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/simd/f32x4.hpp"
#include "parallel/split.hpp"

namespace attn {

namespace {

using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfinity = std::numeric_limits<float>::infinity();
// Query rows per task: every row is computed alone, so the split changes no bit of the result;
// a fixed size keeps the tasks the same whatever the thread count.
constexpr Index kRowsPerTask = 16;

Index row_tasks(Index rows) { return (rows + kRowsPerTask - 1) / kRowsPerTask; }

// The work of `rows` queries against n keys, as multiply-adds (an exp counted as 4): what
// run_split weighs against waking the workers. In 64 bits, capped at Index's largest: a
// 33000 x 33000 regression's 7.6e9 would wrap wasm32's Index negative, and run on one thread.
Index row_work(Index rows, const MatrixRef& keys, const MatrixRef& values) {
  const int64_t work = int64_t{rows} * keys.rows() * (2 * keys.cols() + values.cols() + 4);
  return static_cast<Index>(std::min<int64_t>(work, std::numeric_limits<Index>::max()));
}

// Whether the Gaussian may go through attention (gaussian_attention.hpp) at all: the fused kernel
// wants a key and a feature; without them the rows below say what there is to say (NaN, or the
// plain mean).
bool attention_shaped(Similarity similarity, const MatrixRef& keys) {
  return similarity == Similarity::Gaussian && keys.rows() > 0 && keys.cols() > 0;
}

// Features from which the products that say which keys a compact kernel reaches
// (compact_reach.hpp) save time: a distance in double costs about what its product does at few
// features (d = 1: the reach ran at 0.64-0.70 of the rows' speed), and the rows' loop computes
// it alone.
constexpr Index kReachFeatures = 8;

// Whether the kernel is compactly supported (boxcar, Epanechnikov), so that the float products
// can say which keys it reaches, and there are keys and features enough for them.
bool compact(Similarity similarity, const MatrixRef& keys) {
  return (similarity == Similarity::Boxcar || similarity == Similarity::Epanechnikov) &&
         keys.rows() > 0 && keys.cols() >= kReachFeatures;
}

void check_keys_values(const MatrixRef& keys, const MatrixRef& values) {
  detail::require_shape("values", {keys.rows(), -1}, detail::shape_of(values));
}

// The keys as the regression reads them: feature-major (feature f of key j at f * n + j), so
// that one query's distances run over contiguous keys.
class Keys {
 public:
  explicit Keys(const MatrixRef& keys) : transposed_(keys.transpose()) {}
  Index count() const { return transposed_.cols(); }
  Index dim() const { return transposed_.rows(); }
  const float* data() const { return transposed_.data(); }

 private:
  Matrix transposed_;
};

// The values as the pooling reads them: one column as it is (a dot product per query), more as
// panels of 16 columns for the GEMM micro-kernel, packed once for every query.
class Values {
 public:
  explicit Values(const MatrixRef& values)
      : n_(values.rows()),
        dy_(values.cols()),
        finite_(values.allFinite()),
        packed_(static_cast<size_t>(n_ * (dy_ == 1 ? 1 : detail::round_up(dy_, detail::kPanel)))) {
    if (dy_ == 1) {
      for (Index j = 0; j < n_; ++j) packed_[static_cast<size_t>(j)] = values(j, 0);
    } else {
      detail::f32_pack_panels(values.data(), values.outerStride(), n_, dy_, /*transposed=*/false,
                              packed_.data());
    }
  }

  Index dim() const { return dy_; }

  // out [dy] = weights [n] * values. Where at most a quarter of the weights are nonzero (a compact
  // kernel's few keys within reach), over those keys alone (`nonzero` is scratch): a zero weight
  // adds nothing to a finite sum, so this skips only work, and values that are not all finite
  // (0 * infinity is NaN) keep the whole product.
  void pool(const float* weights, std::vector<Index>& nonzero, float* out) const {
    if (dy_ == 1) {
      out[0] = detail::f32_dot(weights, packed_.data(), n_);
      return;
    }
    nonzero.clear();
    if (finite_) {
      for (Index j = 0; j < n_ && static_cast<Index>(nonzero.size()) <= n_ / 4; ++j) {
        if (weights[j] != 0.0f) nonzero.push_back(j);
      }
    }
    if (!finite_ || static_cast<Index>(nonzero.size()) > n_ / 4) {
      detail::f32_gemm_panels_serial(weights, n_, 1, n_, packed_.data(), n_ * detail::kPanel, dy_,
                                     out, dy_);
      return;
    }
    for (Index column = 0; column < dy_; column += detail::kPanel) {
      const float* panel = packed_.data() + column * n_;  // panel column / 16, n rows of 16
      simd::F32x4 sum[4] = {simd::splat(0.0f), simd::splat(0.0f), simd::splat(0.0f),
                            simd::splat(0.0f)};
      for (Index j : nonzero) {
        const simd::F32x4 weight = simd::splat(weights[j]);
        for (int v = 0; v < 4; ++v) {
          sum[v] =
              simd::multiply_add(weight, simd::load(panel + j * detail::kPanel + 4 * v), sum[v]);
        }
      }
      detail::store_row_tile(out + column, sum, std::min(detail::kPanel, dy_ - column));
    }
  }

 private:
  Index n_, dy_;
  bool finite_;
  std::vector<float> packed_;  // the column, or its panels
};

// What one thread works in: its task's squared distances (double; one row at a time, or the
// task's rows at once from the compact reach) and their float products, when the caller keeps
// no weights one weights row, and the pooling's list of keys.
struct RowScratch {
  RowScratch(Index n, bool weights, bool reach)
      : squared(static_cast<size_t>(reach ? kRowsPerTask * n : n)),
        products(static_cast<size_t>(reach ? kRowsPerTask * n : 0)),
        row(static_cast<size_t>(weights ? 0 : n)) {
    nonzero.reserve(static_cast<size_t>(n / 4 + 1));
  }
  std::vector<double> squared;
  std::vector<float> products;
  std::vector<float> row;
  std::vector<Index> nonzero;  // the keys of nonzero weight, for the pooling
};

// One query's estimate in `output` [dy] from its squared distances to every key (`nearest` the
// smallest, which the Gaussian alone reads; key `skip` at +infinity, or kNoKey), its normalised
// weights [n] in `weights` when non-null (else the scratch's row). The values are pooled with
// the weights before they are normalised and the sum divided once by the total, so the
// output's bits do not depend on whether weights are asked for. Returns false, with zero
// weights and a NaN output, when no key reaches the query.
bool estimate(const double* squared, double nearest, Index n, const Values& values,
              Similarity similarity, float bandwidth, Index skip, RowScratch& scratch,
              float* weights, float* output) {
  float* w = weights ? weights : scratch.row.data();
  const float total = similarity == Similarity::Gaussian
                          ? detail::gaussian_weights(squared, n, nearest, bandwidth, w)
                          : detail::similarity_weights(similarity, squared, n, bandwidth, skip, w);
  if (!(total > 0.0f)) {  // no key reached (0), or NaN inputs
    std::fill(w, w + n, 0.0f);
    std::fill(output, output + values.dim(), kNaN);
    return false;
  }
  values.pool(w, scratch.nonzero, output);
  detail::f32_divide(output, values.dim(), total);
  if (weights) detail::f32_divide(weights, n, total);
  return true;
}

// Where a task's squared distances come from: the compact reach (compact_reach.hpp) for a
// boxcar or Epanechnikov kernel where it pays, else the rows in double, a query at
// a time. `row(i)` gives query i's, with their nearest; call `task(first, last)` first.
class Distances {
 public:
  Distances(const Keys& keys, const MatrixRef& queries, const detail::CompactReach* reach,
            Similarity similarity, float bandwidth, bool leave_one_out, RowScratch& scratch)
      : keys_(keys),
        queries_(queries),
        reach_(reach),
        similarity_(similarity),
        bandwidth_(bandwidth),
        leave_one_out_(leave_one_out),
        scratch_(scratch) {}

  void task(Index first, Index last) {
    first_ = first;
    if (reach_) {
      reach_->squared_distances(similarity_, bandwidth_, first, last - first,
                                scratch_.products.data(), scratch_.squared.data());
    }
  }

  const double* row(Index i, double& nearest) {
    if (reach_) {
      nearest = 0.0;  // unread: the compact kernels' weights need no shift
      return scratch_.squared.data() + (i - first_) * keys_.count();
    }
    nearest = detail::f64_squared_distances(queries_.row(i).data(), keys_.data(), keys_.count(),
                                            keys_.dim(), leave_one_out_ ? i : detail::kNoKey,
                                            scratch_.squared.data());
    return scratch_.squared.data();
  }

 private:
  const Keys& keys_;
  const MatrixRef& queries_;
  const detail::CompactReach* reach_;
  Similarity similarity_;
  float bandwidth_;
  bool leave_one_out_;
  RowScratch& scratch_;
  Index first_ = 0;
};

}  // namespace

void kernel_regression(const MatrixRef& keys, const MatrixRef& values, const MatrixRef& queries,
                       Similarity similarity, float bandwidth, MatrixMap output,
                       MatrixMap* weights) {
  check_keys_values(keys, values);
  detail::require_shape("queries", {-1, keys.cols()}, detail::shape_of(queries));
  detail::require_positive_finite("bandwidth", bandwidth);
  detail::require_shape("output", {queries.rows(), values.cols()}, detail::shape_of(output));
  if (weights) {
    detail::require_shape("weights", {queries.rows(), keys.rows()}, detail::shape_of(*weights));
  }
  if (attention_shaped(similarity, keys) && queries.rows() > 0) {
    const detail::GaussianAttention gaussian(keys, values, &queries);
    if (gaussian.exact_enough(bandwidth)) {
      gaussian.run(bandwidth, output.data(), weights ? weights->data() : nullptr);
      return;
    }
  }
  const Index m = queries.rows(), tasks = row_tasks(m);
  const Keys keyed(keys);
  std::optional<detail::CompactReach> reach;
  if (compact(similarity, keys) && m > 0) {
    reach.emplace(keys, keyed.data(), &queries);
    if (!reach->pays(similarity, bandwidth)) reach.reset();
  }
  const detail::CompactReach* reach_path = reach ? &*reach : nullptr;
  const Values pooled(values);
  std::vector<RowScratch> scratch(
      static_cast<size_t>(std::min<Index>(detail::thread_pool().threads(), tasks)),
      RowScratch(keys.rows(), weights != nullptr, reach_path != nullptr));
  detail::run_split(tasks, row_work(m, keys, values), [&](Index task, int slot) {
    RowScratch& own = scratch[static_cast<size_t>(slot)];
    const Index first = task * kRowsPerTask, last = std::min(m, first + kRowsPerTask);
    Distances distances(keyed, queries, reach_path, similarity, bandwidth, /*leave_one_out=*/false,
                        own);
    distances.task(first, last);
    for (Index i = first; i < last; ++i) {
      double nearest = 0.0;
      const double* squared = distances.row(i, nearest);
      estimate(squared, nearest, keys.rows(), pooled, similarity, bandwidth, detail::kNoKey, own,
               weights ? weights->row(i).data() : nullptr, output.row(i).data());
    }
  });
}

KernelRegression kernel_regression(const MatrixRef& keys, const MatrixRef& values,
                                   const MatrixRef& queries, Similarity similarity, float bandwidth,
                                   bool need_weights) {
  KernelRegression result;  // sized from the inputs; the call below checks that they fit
  result.output.resize(queries.rows(), values.cols());
  if (need_weights) result.weights.resize(queries.rows(), keys.rows());
  MatrixMap output(result.output.data(), result.output.rows(), result.output.cols());
  MatrixMap weights(result.weights.data(), result.weights.rows(), result.weights.cols());
  kernel_regression(keys, values, queries, similarity, bandwidth, output,
                    need_weights ? &weights : nullptr);
  return result;
}

BandwidthSearch leave_one_out(const MatrixRef& keys, const MatrixRef& values, Similarity similarity,
                              const std::vector<float>& bandwidths) {
  check_keys_values(keys, values);
  if (bandwidths.empty()) detail::fail("bandwidths", "at least one bandwidth", "none");
  for (float bandwidth : bandwidths) detail::require_positive_finite("bandwidths", bandwidth);

  const Index n = keys.rows(), tasks = row_tasks(n);
  const auto count = static_cast<Index>(bandwidths.size());
  // Each (bandwidth, key) prediction is computed alone into its own entries; the sums then run
  // in key order, as one thread would add them. Bandwidths at which the Gaussian goes through
  // attention (gaussian_attention.hpp) predict every key in one call; the others a block of keys
  // a task, all of them in one split.
  std::vector<double> errors(static_cast<size_t>(count * n));
  std::vector<char> reached(errors.size());
  std::vector<Index> by_rows;  // the bandwidths left to the rows
  if (attention_shaped(similarity, keys) && n >= 2) {
    const detail::GaussianAttention gaussian(keys, values, /*queries=*/nullptr);
    Matrix predictions(n, values.cols());
    for (Index b = 0; b < count; ++b) {
      const float bandwidth = bandwidths[static_cast<size_t>(b)];
      if (!gaussian.exact_enough(bandwidth)) {
        by_rows.push_back(b);
        continue;
      }
      gaussian.run(bandwidth, predictions.data(), nullptr);
      for (Index i = 0; i < n; ++i) {
        const auto at = static_cast<size_t>(b * n + i);
        reached[at] = 1;  // the Gaussian reaches every other key
        errors[at] = (predictions.row(i) - values.row(i)).cast<double>().squaredNorm();
      }
    }
  } else {
    for (Index b = 0; b < count; ++b) by_rows.push_back(b);
  }
  const Keys keyed(keys);
  // The compact kernels' reach (compact_reach.hpp), for the bandwidths where it pays.
  std::optional<detail::CompactReach> reach;
  std::vector<char> reach_pays(static_cast<size_t>(count), 0);
  if (compact(similarity, keys)) {
    reach.emplace(keys, keyed.data(), /*queries=*/nullptr);
    for (Index b = 0; b < count; ++b) {
      reach_pays[static_cast<size_t>(b)] =
          reach->pays(similarity, bandwidths[static_cast<size_t>(b)]);
    }
  }
  const Values pooled(values);
  const auto row_count = static_cast<Index>(by_rows.size());
  const auto slots =
      static_cast<size_t>(std::min<Index>(detail::thread_pool().threads(), row_count * tasks));
  const bool any_reach = std::find(reach_pays.begin(), reach_pays.end(), 1) != reach_pays.end();
  std::vector<RowScratch> scratch(slots, RowScratch(n, /*weights=*/false, any_reach));
  std::vector<RowVector> prediction(slots, RowVector(values.cols()));
  detail::run_split(
      row_count * tasks, row_work(row_count * n, keys, values), [&](Index task, int slot) {
        const Index b = by_rows[static_cast<size_t>(task / tasks)],
                    first = task % tasks * kRowsPerTask, last = std::min(n, first + kRowsPerTask);
        const float bandwidth = bandwidths[static_cast<size_t>(b)];
        RowScratch& own = scratch[static_cast<size_t>(slot)];
        RowVector& p = prediction[static_cast<size_t>(slot)];
        const detail::CompactReach* reach_path =
            reach_pays[static_cast<size_t>(b)] ? &*reach : nullptr;
        Distances distances(keyed, keys, reach_path, similarity, bandwidth, /*leave_one_out=*/true,
                            own);
        distances.task(first, last);
        for (Index i = first; i < last; ++i) {
          const auto at = static_cast<size_t>(b * n + i);
          double nearest = 0.0;
          const double* squared = distances.row(i, nearest);
          reached[at] = estimate(squared, nearest, n, pooled, similarity, bandwidth, i, own,
                                 nullptr, p.data());
          errors[at] = reached[at] ? (p - values.row(i)).cast<double>().squaredNorm() : 0.0;
        }
      });
  BandwidthSearch search{{}, kNaN};
  float best_error = kInfinity;
  for (Index b = 0; b < count; ++b) {
    // Summed in double: n squared errors of similar size would lose ~log2(n) bits in float.
    double total = n >= 2 ? 0.0 : double{kInfinity};
    for (Index i = 0; i < n; ++i) {
      if (!reached[static_cast<size_t>(b * n + i)]) {
        total = double{kInfinity};  // key i has no estimate: this bandwidth cannot be scored
        break;
      }
      total += errors[static_cast<size_t>(b * n + i)];
    }
    const float error = static_cast<float>(total / static_cast<double>(n));
    search.errors.push_back(error);
    // NaN (from NaN inputs) compares false: like +infinity, it is never the best.
    if (error < best_error) {
      best_error = error;
      search.best = bandwidths[static_cast<size_t>(b)];
    }
  }
  return search;
}

}  // namespace attn
