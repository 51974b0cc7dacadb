#include "attn/rotary.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "checks.hpp"
#include "parallel/split.hpp"

namespace attn {

namespace {

// A call's sizes once its arguments are checked.
struct RotaryLayout {
  Index heads = 1, n = 0, d = 0;
  Index half = 0;              // pairs per row: dim / 2
  Index table_rows = 0;        // n, or batch * n when each batch row has its own positions
  bool per_batch_row = false;  // positions holds batch * n entries
};

RotaryLayout check_rotary(ConstBatch x, Index heads, const RotaryOptions& options,
                          MutableBatch out) {
  if (heads < 1 || x.batch % heads != 0) {
    detail::fail("heads",
                 "a count >= 1 that divides the input's " + std::to_string(x.batch) + " matrices",
                 std::to_string(heads));
  }
  detail::require_shape("out", detail::shape_of(x), detail::shape_of(out));
  RotaryLayout layout;
  layout.heads = heads;
  layout.n = x.rows;
  layout.d = x.cols;
  const Index dim = options.dim == 0 ? layout.d : options.dim;
  if (options.dim < 0 || dim > layout.d || dim % 2 != 0) {
    const std::string all = layout.d % 2 != 0 ? " (0 means all d, which is odd here)" : "";
    detail::fail("dim",
                 "an even count of features in [0, d = " + std::to_string(layout.d) + "]" + all,
                 std::to_string(options.dim));
  }
  layout.half = dim / 2;
  detail::require_positive_finite("base", options.base);
  if (options.offset < 0) detail::fail("offset", "an integer >= 0", std::to_string(options.offset));
  const Index batch = x.batch / heads;
  const auto count = static_cast<Index>(options.positions.size());
  layout.per_batch_row = count != layout.n && count == batch * layout.n;
  if (count != 0 && count != layout.n && !layout.per_batch_row) {
    detail::fail("positions",
                 std::to_string(layout.n) + " (n) or " + std::to_string(batch * layout.n) +
                     " (batch * n) entries",
                 std::to_string(count));
  }
  for (Index i = 0; i < count; ++i) {
    const int32_t position = options.positions[static_cast<size_t>(i)];
    if (position < 0) {
      detail::fail("positions", "positions >= 0",
                   std::to_string(position) + " at index " + std::to_string(i));
    }
  }
  layout.table_rows = layout.per_batch_row ? count : layout.n;
  return layout;
}

// A cos/sin per table row and pair, row t holding [cos_0 .. cos_{half-1}, sin_0 .. sin_{half-1}]
// for the position of table row t (`sign` -1 turns the sines into those of the opposite angles:
// the backward). The frequencies, angles and their cosines and sines are computed in double and
// rounded once: in float, position * theta_k would carry an error of position * 2^-24 radians
// (0.06 at position 2^20), while rounded double values are float's best at any position.
constexpr Index kRotaryTrigWork = 32;  // one cos and one sin, in multiply-adds (roughly)

std::vector<float> rotary_table(const RotaryOptions& options, const RotaryLayout& layout,
                                double sign) {
  const Index half = layout.half;
  std::vector<double> frequencies(static_cast<size_t>(half));
  for (Index k = 0; k < half; ++k) {
    frequencies[static_cast<size_t>(k)] =
        std::pow(static_cast<double>(options.base), -static_cast<double>(k) / half);
  }
  std::vector<float> table(static_cast<size_t>(layout.table_rows * 2 * half));
  detail::run_ranges(layout.table_rows, kRotaryTrigWork * half, [&](Index begin, Index end) {
    for (Index t = begin; t < end; ++t) {
      const double position = options.positions.empty()
                                  ? static_cast<double>(options.offset + t)
                                  : static_cast<double>(options.positions[static_cast<size_t>(t)]);
      float* cosines = table.data() + t * 2 * half;
      float* sines = cosines + half;
      for (Index k = 0; k < half; ++k) {
        const double angle = position * frequencies[static_cast<size_t>(k)];
        cosines[k] = static_cast<float>(std::cos(angle));
        sines[k] = static_cast<float>(sign * std::sin(angle));
      }
    }
  });
  return table;
}

// One row: pairs (k, k + half) or (2k, 2k + 1) turned by the table row's angles, the features
// from 2 * half on copied. Each pair is read before it is written, so `out` may be `in`.
void rotary_rotate_row(const float* in, const float* cosines, const float* sines, Index half,
                       Index d, bool interleaved, float* out) {
  if (interleaved) {
    for (Index k = 0; k < half; ++k) {
      const float a = in[2 * k], b = in[2 * k + 1];
      out[2 * k] = a * cosines[k] - b * sines[k];
      out[2 * k + 1] = b * cosines[k] + a * sines[k];
    }
  } else {
    for (Index k = 0; k < half; ++k) {
      const float a = in[k], b = in[k + half];
      out[k] = a * cosines[k] - b * sines[k];
      out[k + half] = b * cosines[k] + a * sines[k];
    }
  }
  if (out != in) std::copy(in + 2 * half, in + d, out + 2 * half);
}

// Both directions: the forward turns by +angle, the backward (sign -1) by -angle. Rows are
// independent, so runs of them go to the pool's threads; every element is computed by the same
// operations whichever thread runs it, so the result is the same bits on any thread count.
void rotary_rotate(ConstBatch x, Index heads, const RotaryOptions& options, MutableBatch out,
                   double sign) {
  const RotaryLayout layout = check_rotary(x, heads, options, out);
  const Index n = layout.n, d = layout.d, half = layout.half;
  if (x.size() == 0) return;
  const std::vector<float> table = rotary_table(options, layout, sign);
  detail::run_ranges(x.batch * n, 3 * d, [&](Index begin, Index end) {
    for (Index row = begin; row < end; ++row) {
      const Index matrix = row / n, i = row % n;
      const Index t = layout.per_batch_row ? matrix / layout.heads * n + i : i;
      const float* cosines = table.data() + t * 2 * half;
      rotary_rotate_row(x.data + row * d, cosines, cosines + half, half, d, options.interleaved,
                        out.data + row * d);
    }
  });
}

}  // namespace

void apply_rotary(ConstBatch x, Index heads, const RotaryOptions& options, MutableBatch out) {
  rotary_rotate(x, heads, options, out, 1.0);
}

void apply_rotary_backward(ConstBatch grad, Index heads, const RotaryOptions& options,
                           MutableBatch out) {
  rotary_rotate(grad, heads, options, out, -1.0);
}

Tensor3 apply_rotary(const Tensor3& x, Index heads, const RotaryOptions& options) {
  Tensor3 out(x.batch, x.rows, x.cols);
  apply_rotary(x.view(), heads, options, out.view());
  return out;
}

}  // namespace attn
