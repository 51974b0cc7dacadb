#include "compact_reach.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/gemm.hpp"
#include "kernels/regression_rows.hpp"

namespace attn::detail {

namespace {

// The rows' own rounding of the weight's argument d / sigma, as a share of sigma^2: d^2 to float,
// its square root and the division by sigma round once each (u = 2^-24), and the thresholds below
// once more to float. An exact d^2 beyond sigma^2 (1 + 30u) still gives d / sigma >= 1 + 12u
// after them, above the float after 1 (1 + 2u), and one below sigma^2 (1 - 30u) below 1: 32u
// keeps the rows' weight on the side the float d^2 says.
constexpr double kRowRounding = 32 * 0x1p-24;

// The queries whose reach pays() counts: one task's.
constexpr Index kSampleQueries = 16;

std::vector<float> to_float(const std::vector<double>& x) { return {x.begin(), x.end()}; }

}  // namespace

CompactReach::CompactReach(const MatrixRef& keys, const float* keys_t, const MatrixRef* queries)
    : keys_(keys),
      keys_t_(keys_t),
      queries_(queries ? *queries : keys),
      data_(keys, queries),
      packed_keys_(static_cast<size_t>(round_up(keys.rows(), kPanel) * keys.cols())),
      key_norms_(to_float(data_.key_squared_norms)),
      query_norms_(to_float(data_.query_norms())) {
  f32_pack_panels(data_.keys.data(), keys.cols(), keys.cols(), keys.rows(), /*transposed=*/true,
                  packed_keys_.data());
}

bool CompactReach::narrow_enough(float bandwidth) const {
  const double sigma2 = double{bandwidth} * double{bandwidth};
  return data_.rounding_bound() <= sigma2 / 4;  // false for NaN and infinite data
}

bool CompactReach::pays(Similarity similarity, float bandwidth) const {
  if (!narrow_enough(bandwidth)) return false;
  if (similarity == Similarity::Boxcar) return true;
  const Index n = keys_.rows(), rows = std::min<Index>(kSampleQueries, queries_.rows());
  std::vector<float> products(static_cast<size_t>(rows * n));
  std::vector<double> squared(products.size());
  squared_distances(Similarity::Boxcar, bandwidth, 0, rows, products.data(), squared.data());
  const auto reached =
      std::count_if(squared.begin(), squared.end(), [](double x) { return !std::isinf(x); });
  return reached <= rows * n / 8;
}

void CompactReach::squared_distances(Similarity similarity, float bandwidth, Index first,
                                     Index rows, float* products, double* squared) const {
  const Index n = keys_.rows(), dim = keys_.cols();
  f32_gemm_panels_serial(data_.centred_queries().row(first).data(), dim, rows, dim,
                         packed_keys_.data(), dim * kPanel, n, products, n);
  const double sigma2 = double{bandwidth} * double{bandwidth};
  const double band = data_.rounding_bound() + kRowRounding * sigma2;
  const auto beyond = static_cast<float>(sigma2 + band);  // rounds to within an ulp: in the band
  const auto inside = static_cast<float>(sigma2 - band);
  const bool boxcar = similarity == Similarity::Boxcar;
  constexpr double unreached = std::numeric_limits<double>::infinity();
  constexpr double pending = std::numeric_limits<double>::quiet_NaN();
  for (Index r = 0; r < rows; ++r) {
    const Index i = first + r;
    const float* query = queries_.row(i).data();
    const float query_norm = query_norms_[static_cast<size_t>(i)];
    const float* product = products + r * n;
    double* out = squared + r * n;
    Index exact = 0;
    for (Index j = 0; j < n; ++j) {
      const float estimate = query_norm + key_norms_[static_cast<size_t>(j)] - 2.0f * product[j];
      if (estimate > beyond) {
        out[j] = unreached;
      } else if (boxcar && estimate < inside) {
        out[j] = 0.0;
      } else {  // near the edge, inside Epanechnikov's support, or NaN
        out[j] = pending;
        ++exact;
      }
    }
    // One distance alone sums its features in a chain of dependent adds; the rows' loop runs
    // over many keys at once, a few times faster per key: past an eighth of the keys, the whole
    // row in double costs less (the same bits either way).
    if (exact > n / 8) {
      f64_squared_distances(query, keys_t_, n, dim, kNoKey, out);
    } else {
      for (Index j = 0; j < n && exact > 0; ++j) {
        if (!std::isnan(out[j])) continue;
        out[j] = f64_squared_distance(query, keys_.row(j).data(), dim);
        --exact;
      }
    }
    if (data_.leave_one_out) out[i] = unreached;
  }
}

}  // namespace attn::detail
