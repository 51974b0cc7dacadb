#pragma once
// A fuzzed attn::Mask together with an independent reading of its documented meaning (mask.hpp):
// whether the core must accept it, which keys it hides from which query, and what each softmax
// row must then look like. Written from the header's contract, not from mask.cpp.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "attn/mask.hpp"
#include "fuzz_input.hpp"

namespace fuzz {

using attn::Index;

// Prints what broke and aborts: libFuzzer then saves the input as a crash artifact.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

// A float as printf's %.9g prints it: enough digits to tell any two floats apart.
inline std::string num(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

// A buffer that is never empty, so that a requested mask of size 0 still has a non-null pointer
// (null means "no mask"); any byte past `n` is still outside what the core may read.
template <typename T>
std::vector<T> sized(std::vector<T> values) {
  if (values.empty()) values.resize(1);
  return values;
}

class MaskCase {
 public:
  attn::Mask mask;
  bool valid = true;          // the contract accepts it
  bool undetermined = false;  // fill = +inf: the contract says nothing, either answer is fine
  bool tame = true;           // additive values finite or -inf, fill not +inf

  // Scores [batch * heads, nq, nk], heads sharing each batch row's valid lengths and padding.
  MaskCase(Input& in, Stream& stream, Values values, Index batch, Index nq, Index nk, Index heads,
           float default_fill)
      : batch_(batch), nq_(nq), nk_(nk), heads_(heads) {
    const Index matrices = batch * heads;
    decode_valid_lens(in, stream);
    if (Index declared = declared_batch(in, matrices); declared >= 0) {
      bool_data_ = sized(bits(static_cast<size_t>(declared * nq * nk), stream, 30));
      mask.bool_mask = bool_data_.data();
      mask.bool_mask_batch = declared;
      valid = valid && (declared == 1 || declared == matrices);
    }
    if (Index declared = declared_batch(in, matrices); declared >= 0) {
      additive_data_ = sized(tensor(static_cast<size_t>(declared * nq * nk), stream, values, 4.0f));
      for (float& x : additive_data_) {
        if (stream.chance(10)) x = -kInf;  // PyTorch's float masks hide keys with -inf
        tame = tame && (std::isfinite(x) || x == -kInf);
      }
      mask.additive = additive_data_.data();
      mask.additive_batch = declared;
      valid = valid && (declared == 1 || declared == matrices);
    }
    if (in.flag()) {
      padding_data_ = sized(bits(static_cast<size_t>(batch * nk), stream, 30));
      mask.key_padding = padding_data_.data();
    }
    mask.causal = in.flag();
    mask.fill = in.pick<float>(
        {default_fill, -1e6f, -kInf, kNaN, kInf, 0.0f, -FLT_MAX, stream.uniform(-100, 100)});
    valid = valid && !std::isnan(mask.fill);
    undetermined = mask.fill == kInf;
    tame = tame && mask.fill != kInf;
  }
  MaskCase(const MaskCase&) = delete;
  MaskCase& operator=(const MaskCase&) = delete;

  // Whether key j is hidden from query i of score matrix s = b * heads + h.
  bool hidden(Index s, Index i, Index j) const {
    const Index b = s / heads_;
    const auto& lens = mask.valid_lens;
    if (!lens.empty()) {
      const Index per_row = static_cast<Index>(lens.size()) == batch_ ? 1 : nq_;
      if (j >= lens[static_cast<size_t>(b * per_row + (per_row == 1 ? 0 : i))]) return true;
    }
    if (mask.causal && j > i) return true;
    if (mask.bool_mask && bool_data_[block(mask.bool_mask_batch, s, i, j)]) return true;
    return mask.key_padding && padding_data_[static_cast<size_t>(b * nk_ + j)];
  }

  float additive(Index s, Index i, Index j) const {
    return mask.additive ? additive_data_[block(mask.additive_batch, s, i, j)] : 0.0f;
  }

  // What row i of score matrix s must be after the softmax, given finite visible scores.
  struct Row {
    bool nan = false;        // every score is -inf: NaN, as PyTorch (documented)
    std::vector<bool> zero;  // keys that must get exactly 0
  };
  Row expect_row(Index s, Index i) const {
    Row row;
    row.zero.assign(static_cast<size_t>(nk_), false);
    std::vector<bool> minus_inf(static_cast<size_t>(nk_));
    bool finite_visible = false;
    for (Index j = 0; j < nk_; ++j) {
      const bool h = hidden(s, i, j);
      minus_inf[static_cast<size_t>(j)] = h ? mask.fill == -kInf : additive(s, i, j) == -kInf;
      finite_visible = finite_visible || (!h && additive(s, i, j) != -kInf);
    }
    row.nan = nk_ > 0 && std::all_of(minus_inf.begin(), minus_inf.end(), [](bool x) { return x; });
    if (row.nan) return row;
    for (Index j = 0; j < nk_; ++j) {
      // A fill of -1e5 or less is > 100 below any tame visible score: exp underflows to 0.
      row.zero[static_cast<size_t>(j)] = minus_inf[static_cast<size_t>(j)] ||
                                         (finite_visible && hidden(s, i, j) && mask.fill <= -1e5f);
    }
    return row;
  }

 private:
  void decode_valid_lens(Input& in, Stream& stream) {
    size_t count = 0;
    switch (in.below(4)) {
      case 0:
        return;
      case 1:
        count = static_cast<size_t>(batch_);
        break;
      case 2:
        count = static_cast<size_t>(batch_ * nq_);
        break;
      default:
        count = static_cast<size_t>(in.below(9));
        break;
    }
    auto& lens = mask.valid_lens;
    lens.resize(count);
    for (int32_t& len : lens)
      len = static_cast<int32_t>(stream.below(static_cast<uint64_t>(nk_ + 1)));
    if (count > 0 && in.below(4) == 0) {
      lens[in.byte() % count] =
          in.pick<int32_t>({-1, static_cast<int32_t>(nk_ + 1), std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max()});
    }
    const Index n = static_cast<Index>(count);
    valid = valid && (n == 0 || n == batch_ || n == batch_ * nq_);
    for (int32_t len : lens) valid = valid && len >= 0 && len <= nk_;
  }

  // -1: no such mask; else the batch it declares (1, every matrix, or something else).
  static Index declared_batch(Input& in, Index matrices) {
    switch (in.below(4)) {
      case 0:
        return -1;
      case 1:
        return 1;
      case 2:
        return matrices;
      default:
        return in.below(6);
    }
  }

  size_t block(Index declared, Index s, Index i, Index j) const {
    return static_cast<size_t>(((declared == 1 ? 0 : s) * nq_ + i) * nk_ + j);
  }

  Index batch_, nq_, nk_, heads_;
  std::vector<uint8_t> bool_data_, padding_data_;
  std::vector<float> additive_data_;
};

// Checks one softmax row against the contract: NaN throughout where every score is -inf,
// otherwise finite weights in [0, 1] summing to 1, with exact zeros where `row.zero` says.
inline void check_row(const float* w, Index nk, const MaskCase::Row& row, const std::string& what) {
  double sum = 0.0;
  for (Index j = 0; j < nk; ++j) {
    const float x = w[j];
    const std::string at = what + " [" + std::to_string(j) + "] = " + num(x);
    if (row.nan) {
      if (!std::isnan(x)) fail(at + ": a fully masked row must be NaN");
      continue;
    }
    if (!(x >= 0.0f && x <= 1.0f + 1e-6f)) fail(at + ": a weight outside [0, 1]");
    if (row.zero[static_cast<size_t>(j)] && x != 0.0f) fail(at + ": a masked key has weight");
    sum += x;
  }
  if (!row.nan && nk > 0 && std::fabs(sum - 1.0) > 1e-5) {
    fail(what + " sums to " + num(sum) + ", not 1");
  }
}

}  // namespace fuzz
