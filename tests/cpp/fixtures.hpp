#pragma once
// Reads the PyTorch reference fixtures (tests/fixtures/, written by scripts/fixtures/*.py) into
// the core's types, and checks results against them with the fixtures' rule.
//
// A fixture file is {"description", "cases": [{"name", "inputs", "options", "expected"}]}; a
// tensor is {"shape": [...], "data": [flat row-major numbers]}, masks and lengths also carry
// "dtype" ("bool" with 1 = masked out, "int32", or "float32" for an additive mask).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/mask.hpp"
#include "attn/multi_head_attention.hpp"
#include "attn/scoring.hpp"
#include "attn/tensor.hpp"
#include "reference.hpp"

#ifndef ATTN_FIXTURE_DIR
#error "ATTN_FIXTURE_DIR (the tests/fixtures folder) must be defined by the build"
#endif

namespace fixtures {

using attn::Index;
using json = nlohmann::json;

struct Case {
  std::string name;
  json inputs, options, expected;
};

// The cases of a fixture file, by its path under tests/fixtures (e.g. "gradients/sdpa.json").
inline std::vector<Case> load(const std::string& file) {
  const std::string path = std::string(ATTN_FIXTURE_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  const json root = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : root.at("cases")) {
    cases.push_back({c.at("name").get<std::string>(), c.at("inputs"), c.value("options", json{}),
                     c.at("expected")});
  }
  if (cases.empty()) throw std::runtime_error("fixture " + path + " has no cases");
  return cases;
}

inline std::vector<Index> shape_of(const json& t) {
  return t.at("shape").get<std::vector<Index>>();
}

template <typename T>
std::vector<T> data_of(const json& t) {
  auto data = t.at("data").get<std::vector<T>>();
  Index size = 1;
  for (Index n : shape_of(t)) size *= n;
  if (static_cast<Index>(data.size()) != size) throw std::runtime_error("fixture: data != shape");
  return data;
}

// [batch, rows, cols]; a rank-2 tensor reads as batch 1.
inline attn::Tensor3 to_tensor3(const json& t) {
  const auto shape = shape_of(t);
  if (shape.size() != 2 && shape.size() != 3) throw std::runtime_error("fixture: not rank 2/3");
  attn::Tensor3 out(shape.size() == 3 ? shape[0] : 1, shape[shape.size() - 2], shape.back());
  out.data = data_of<float>(t);
  return out;
}

inline attn::Matrix to_matrix(const json& t) {
  const auto shape = shape_of(t);
  if (shape.size() != 2) throw std::runtime_error("fixture: not a matrix");
  const auto data = data_of<float>(t);
  return attn::ConstMatrixMap(data.data(), shape[0], shape[1]);
}

inline attn::Vector to_vector(const json& t) {
  const auto data = data_of<float>(t);
  return Eigen::Map<const attn::Vector>(data.data(), static_cast<Index>(data.size()));
}

// The attn::Mask a case's options describe (validLens, mask, causal, keyPaddingMask, attnMask),
// on top of `base` (which sets the fill). The mask points into this object's buffers, so it is
// neither copied nor moved: keep it alive while the mask is used.
class CaseMask {
 public:
  CaseMask(const json& options, attn::Mask base) : mask(std::move(base)) {
    if (options.contains("validLens")) mask.valid_lens = data_of<int32_t>(options["validLens"]);
    if (options.contains("causal")) mask.causal = options["causal"].get<bool>();
    if (options.contains("keyPaddingMask")) {
      key_padding_ = data_of<uint8_t>(options["keyPaddingMask"]);
      mask.key_padding = key_padding_.data();
    }
    for (const char* key : {"mask", "attnMask"}) {
      if (!options.contains(key)) continue;
      const json& t = options[key];
      const auto shape = shape_of(t);
      const Index batch = shape.size() == 3 ? shape[0] : 1;
      if (t.value("dtype", "bool") == "float32") {
        additive_ = data_of<float>(t);
        mask.additive = additive_.data();
        mask.additive_batch = batch;
      } else {
        bool_mask_ = data_of<uint8_t>(t);
        mask.bool_mask = bool_mask_.data();
        mask.bool_mask_batch = batch;
      }
    }
  }
  CaseMask(const CaseMask&) = delete;
  CaseMask& operator=(const CaseMask&) = delete;

  attn::Mask mask;

 private:
  std::vector<uint8_t> bool_mask_, key_padding_;
  std::vector<float> additive_;
};

// The arguments of a scaled dot-product or additive attention case: q, k, v, gradOutput, the
// options (the case's mask with d2l's fill -1e6, the default; its scale when given) and additive
// attention's parameters when given. options.mask points into `mask`: not copied, not moved.
struct AttentionCase {
  explicit AttentionCase(const Case& c)
      : q(to_tensor3(c.inputs.at("q"))),
        k(to_tensor3(c.inputs.at("k"))),
        v(to_tensor3(c.inputs.at("v"))),
        grad_output(to_tensor3(c.inputs.at("gradOutput"))),
        mask(c.options, attn::Mask{}) {
    options.mask = mask.mask;
    if (c.options.contains("scale")) options.scale = c.options["scale"].get<float>();
    if (c.options.contains("Wq")) {
      params.Wq = to_matrix(c.options["Wq"]);
      params.Wk = to_matrix(c.options.at("Wk"));
      params.wv = to_vector(c.options.at("wv"));
    }
  }

  attn::Tensor3 q, k, v, grad_output;
  CaseMask mask;
  attn::AttentionOptions options;
  attn::ScoreParams params;  // additive: Wq [h, dq], Wk [h, dk], wv [h]
};

// The arguments of a multi-head case: the module (inputs.config, every inputs.stateDict entry),
// query, key, value, gradOutput and the options (the case's mask with PyTorch's fill -inf).
// options.mask points into `mask`: not copied, not moved.
struct MultiHeadCase {
  explicit MultiHeadCase(const Case& c)
      : mha(module(c.inputs)),
        query(to_tensor3(c.inputs.at("query"))),
        key(to_tensor3(c.inputs.at("key"))),
        value(to_tensor3(c.inputs.at("value"))),
        grad_output(to_tensor3(c.inputs.at("gradOutput"))),
        mask(c.options, attn::MultiHeadForwardOptions::default_mask()) {
    options.mask = mask.mask;
  }

  attn::MultiHeadAttention mha;
  attn::Tensor3 query, key, value, grad_output;
  CaseMask mask;
  attn::MultiHeadForwardOptions options;

 private:
  static attn::MultiHeadAttention module(const json& inputs) {
    const json& c = inputs.at("config");
    attn::MultiHeadConfig config;
    config.embed_dim = c.at("embedDim").get<Index>();
    config.num_heads = c.at("numHeads").get<Index>();
    config.kdim = c.at("kdim").get<Index>();
    config.vdim = c.at("vdim").get<Index>();
    config.bias = c.at("bias").get<bool>();
    attn::MultiHeadAttention mha(config);
    for (const auto& [name, t] : inputs.at("stateDict").items()) {
      mha.set_parameter(name, data_of<float>(t).data(), shape_of(t));
    }
    return mha;
  }
};

inline double peak(const json& t) {
  double out = 0.0;
  for (double x : t.at("data")) out = std::max(out, std::abs(x));
  return out;
}

// The largest |entry| of all of a case's expected tensors (nested objects included).
inline double case_peak(const json& expected) {
  double out = 0.0;
  for (const json& t : expected) out = std::max(out, t.contains("data") ? peak(t) : case_peak(t));
  return out;
}

// The fixtures' rule (issue 10): |got - want| <= 2e-4 * max|want| over the tensor, shapes equal.
// A reference that vanishes exactly (dq with one key, where the softmax is constant) is held to
// 2e-4 of the case's largest reference entry instead: float rounding of its cancelling sums.
inline void check(const float* got, const std::vector<Index>& got_shape, const json& want,
                  const json& case_expected, const std::string& what) {
  const auto shape = shape_of(want);
  INFO(what);
  REQUIRE(got_shape == shape);
  const auto expected = data_of<double>(want);
  double scale = peak(want);
  if (scale == 0.0) scale = case_peak(case_expected);
  ref::check_close(got, expected.data(), expected.size(), ref::Tolerance{0.0, 2e-4 * scale}, what,
                   shape);
}

inline void check(const attn::Tensor3& got, const json& want, const json& case_expected,
                  const std::string& what) {
  // A rank-2 reference compares with a batch-1 tensor.
  std::vector<Index> got_shape{got.batch, got.rows, got.cols};
  if (shape_of(want).size() == 2 && got.batch == 1) got_shape.erase(got_shape.begin());
  check(got.data.data(), got_shape, want, case_expected, what);
}

}  // namespace fixtures
