#pragma once
// What the binding files share: the argument records JS passes in (heap addresses and shapes),
// the Status every entry point returns, and the flat layout of state dicts. Emscripten-specific
// code lives only in cpp/bindings/.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attn.hpp"

namespace binding {

using attn::Index;

// A [batch, rows, cols] float tensor in the wasm heap; data == 0 means "not given".
struct TensorArg {
  uintptr_t data = 0;
  int batch = 1, rows = 0, cols = 0;

  attn::ConstBatch in() const { return {reinterpret_cast<const float*>(data), batch, rows, cols}; }
  attn::MutableBatch out() const { return {reinterpret_cast<float*>(data), batch, rows, cols}; }
  attn::ConstMatrixMap matrix() const {
    return {reinterpret_cast<const float*>(data), Index{batch} * rows, cols};
  }
};

struct MaskArg {
  uintptr_t validLens = 0;
  int validLensCount = 0;
  uintptr_t boolMask = 0;
  int boolMaskBatch = 0;
  uintptr_t additive = 0;
  int additiveBatch = 0;
  uintptr_t keyPadding = 0;
  bool causal = false;
  float fill = 0.0f;  // always set by JS, which owns the default (web/lib/mask.js)

  attn::Mask to_mask() const {
    attn::Mask mask;
    const auto* lens = reinterpret_cast<const int32_t*>(validLens);
    mask.valid_lens.assign(lens, lens + validLensCount);
    mask.bool_mask = reinterpret_cast<const uint8_t*>(boolMask);
    mask.bool_mask_batch = boolMaskBatch;
    mask.additive = reinterpret_cast<const float*>(additive);
    mask.additive_batch = additiveBatch;
    mask.key_padding = reinterpret_cast<const uint8_t*>(keyPadding);
    mask.causal = causal;
    mask.fill = fill;
    return mask;
  }
};

// `count` floats JS put in the heap at `address` (a per-head option), or none when it is 0.
inline std::vector<float> heap_floats(uintptr_t address, Index count) {
  const auto* first = reinterpret_cast<const float*>(address);
  return address ? std::vector<float>(first, first + count) : std::vector<float>();
}

struct AttentionArg {
  bool hasScale = false;  // false: the default 1/sqrt(d)
  float scale = 0.0f;
  float dropout = 0.0f;
  double seed = 0;  // a JS number; integral values up to 2^53 map one-to-one
  // Scaled dot-product attention's heads and modifiers (1, 1, -1, -1, 0, 0, 0 when not given).
  int heads = 1, kvHeads = 1;
  int windowLeft = -1, windowRight = -1;
  float softcap = 0.0f;       // 0: none
  uintptr_t alibiSlopes = 0;  // `heads` floats, or 0
  uintptr_t sinks = 0;        // `heads` floats, or 0

  attn::AttentionOptions to_options(const MaskArg& mask) const {
    attn::AttentionOptions options;
    options.mask = mask.to_mask();
    options.mask.window_left = windowLeft;
    options.mask.window_right = windowRight;
    if (hasScale) options.scale = scale;
    options.dropout = dropout;
    options.seed = static_cast<uint64_t>(seed);
    options.heads = heads;
    options.kv_heads = kvHeads;
    if (softcap != 0.0f) options.softcap = softcap;
    options.alibi_slopes = heap_floats(alibiSlopes, heads);
    options.sinks = heap_floats(sinks, heads);
    return options;
  }
};

// Additive / general score parameters, each with its own shape (a parameter not given is
// [0, 0]), so that the core checks them against q and k. An empty one may have address 0.
struct ScoreParamsArg {
  TensorArg Wq, Wk, wv, W;

  attn::ScoreParams to_params() const {
    attn::ScoreParams params;
    params.Wq = Wq.matrix();
    params.Wk = Wk.matrix();
    // wv crosses as [h, 1].
    params.wv = Eigen::Map<const attn::Vector>(reinterpret_cast<const float*>(wv.data),
                                               Index{wv.rows} * wv.cols);
    params.W = W.matrix();
    return params;
  }
};

// The outcome of a call: kind "" (success), "range" (an argument the core rejects), "memory"
// (an allocation failed) or "internal" (anything else: a bug).
struct Status {
  std::string kind;
  std::string message;
};

template <typename Body>
Status guarded(Body&& body) {
  try {
    body();
    return {};
  } catch (const std::bad_alloc&) {
    return {"memory", "the wasm heap (at most 4 GiB) could not grow to hold this computation"};
  } catch (const std::invalid_argument& error) {
    return {"range", error.what()};
  } catch (const std::out_of_range& error) {
    return {"range", error.what()};
  } catch (const std::length_error& error) {
    return {"range", error.what()};
  } catch (const std::exception& error) {
    return {"internal", error.what()};
  }
}

// A heap tensor copied into an owning Tensor3, for the core functions that take those.
inline attn::Tensor3 copy_in(const TensorArg& t) {
  attn::Tensor3 out(t.batch, t.rows, t.cols);
  const float* data = reinterpret_cast<const float*>(t.data);
  if (data) std::copy(data, data + out.data.size(), out.data.begin());
  return out;
}

inline void copy_out(const float* from, size_t count, uintptr_t to) {
  std::copy(from, from + count, reinterpret_cast<float*>(to));
}

inline void copy_out(const std::vector<float>& from, uintptr_t to) {
  copy_out(from.data(), from.size(), to);
}

// State dicts cross as one flat heap buffer: the entries back to back, in the order the
// model's parameters() lists them (JS splits and joins them by the same list).
inline void copy_entries(const std::vector<attn::NamedTensor>& entries, uintptr_t out) {
  auto* next = reinterpret_cast<float*>(out);
  for (const auto& entry : entries) next = std::copy(entry.data.begin(), entry.data.end(), next);
}

inline std::vector<attn::NamedTensor> read_entries(const std::vector<attn::ParameterSpec>& specs,
                                                   uintptr_t data) {
  std::vector<attn::NamedTensor> entries;
  const auto* next = reinterpret_cast<const float*>(data);
  for (const auto& spec : specs) {
    Index count = 1;
    for (Index size : spec.shape) count *= size;
    entries.push_back({spec.name, spec.shape, std::vector<float>(next, next + count)});
    next += count;
  }
  return entries;
}

}  // namespace binding
