// The one Emscripten-specific file: exposes the core to JS. The JS wrapper (web/lib) reads and
// checks each argument on its own and owns all buffers; it passes heap addresses and shapes in,
// and reads results out. The core checks how the arguments relate (web/lib/arguments.js says
// which side owns which check). Every entry point returns a Status: an empty kind on success, or
// the kind and message of the core's exception, which web/lib/heap.js maps to a JS error, so a
// C++ exception never crosses into JS as an opaque wasm exception.

#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include "attn/attn.hpp"

namespace {

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

struct AttentionArg {
  bool hasScale = false;  // false: the default 1/sqrt(d)
  float scale = 0.0f;
  float dropout = 0.0f;
  double seed = 0;  // a JS number; integral values up to 2^53 map one-to-one

  attn::AttentionOptions to_options(const MaskArg& mask) const {
    attn::AttentionOptions options;
    options.mask = mask.to_mask();
    if (hasScale) options.scale = scale;
    options.dropout = dropout;
    options.seed = static_cast<uint64_t>(seed);
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

Status kernelRegression(TensorArg keys, TensorArg values, TensorArg queries, std::string kernel,
                        float bandwidth, TensorArg out, TensorArg weights) {
  return guarded([&] {
    // Straight into the JS-owned buffers; weights (m x n) only when JS passed a buffer for them.
    attn::MatrixMap weight_map = weights.out()[0];
    attn::kernel_regression(keys.matrix(), values.matrix(), queries.matrix(),
                            attn::parse_kernel(kernel), bandwidth, out.out()[0],
                            weights.data ? &weight_map : nullptr);
  });
}

Status leaveOneOut(TensorArg keys, TensorArg values, std::string kernel, uintptr_t bandwidths,
                   int count, uintptr_t errors_out, uintptr_t best_out) {
  return guarded([&] {
    const auto* first = reinterpret_cast<const float*>(bandwidths);
    const auto search = attn::leave_one_out(keys.matrix(), values.matrix(),
                                            attn::parse_kernel(kernel), {first, first + count});
    std::copy(search.errors.begin(), search.errors.end(), reinterpret_cast<float*>(errors_out));
    *reinterpret_cast<float*>(best_out) = search.best;
  });
}

Status softmax(TensorArg x) {
  return guarded([&] { attn::softmax_in_place(x.out()[0]); });
}

Status maskedSoftmax(TensorArg x, MaskArg mask) {
  return guarded([&] { attn::masked_softmax_in_place(x.out(), mask.to_mask()); });
}

Status score(std::string fn, TensorArg q, TensorArg k, ScoreParamsArg params, TensorArg out) {
  return guarded([&] {
    attn::score(attn::parse_score_function(fn), q.in(), k.in(), params.to_params(), out.out());
  });
}

Status bmm(TensorArg a, TensorArg b, TensorArg out) {
  return guarded([&] { attn::bmm(a.in(), b.in(), out.out()); });
}

Status scaledDotProductAttention(TensorArg q, TensorArg k, TensorArg v, MaskArg mask,
                                 AttentionArg options, TensorArg out, TensorArg weights) {
  return guarded([&] {
    const attn::MutableBatch weight_view = weights.out();
    attn::scaled_dot_product_attention(q.in(), k.in(), v.in(), options.to_options(mask), out.out(),
                                       weights.data ? &weight_view : nullptr);
  });
}

Status additiveAttention(TensorArg q, TensorArg k, TensorArg v, ScoreParamsArg params, MaskArg mask,
                         AttentionArg options, TensorArg out, TensorArg weights) {
  return guarded([&] {
    const attn::MutableBatch weight_view = weights.out();
    attn::additive_attention(q.in(), k.in(), v.in(), params.to_params(), options.to_options(mask),
                             out.out(), weights.data ? &weight_view : nullptr);
  });
}

// A heap tensor copied into an owning Tensor3, for the core functions that take those.
attn::Tensor3 copy_in(const TensorArg& t) {
  attn::Tensor3 out(t.batch, t.rows, t.cols);
  const float* data = reinterpret_cast<const float*>(t.data);
  if (data) std::copy(data, data + out.data.size(), out.data.begin());
  return out;
}

void copy_out(const float* from, size_t count, uintptr_t to) {
  std::copy(from, from + count, reinterpret_cast<float*>(to));
}

void copy_out(const std::vector<float>& from, uintptr_t to) {
  copy_out(from.data(), from.size(), to);
}

Status scaledDotProductAttentionBackward(TensorArg q, TensorArg k, TensorArg v,
                                         TensorArg grad_output, MaskArg mask, AttentionArg options,
                                         TensorArg dq, TensorArg dk, TensorArg dv) {
  return guarded([&] {
    attn::scaled_dot_product_attention_backward(q.in(), k.in(), v.in(), grad_output.in(),
                                                options.to_options(mask), dq.out(), dk.out(),
                                                dv.out());
  });
}

// dWq [h, dq], dWk [h, dk], dwv [h]: heap buffers JS allocated.
Status additiveAttentionBackward(TensorArg q, TensorArg k, TensorArg v, ScoreParamsArg params,
                                 TensorArg grad_output, MaskArg mask, AttentionArg options,
                                 TensorArg dq, TensorArg dk, TensorArg dv, uintptr_t dWq,
                                 uintptr_t dWk, uintptr_t dwv) {
  return guarded([&] {
    const auto gradients =
        attn::additive_attention_backward(copy_in(q), copy_in(k), copy_in(v), params.to_params(),
                                          copy_in(grad_output), options.to_options(mask));
    copy_out(gradients.dq.data, dq.data);
    copy_out(gradients.dk.data, dk.data);
    copy_out(gradients.dv.data, dv.data);
    const attn::ScoreParams& dparams = gradients.dparams;
    copy_out(dparams.Wq.data(), static_cast<size_t>(dparams.Wq.size()), dWq);
    copy_out(dparams.Wk.data(), static_cast<size_t>(dparams.Wk.size()), dWk);
    copy_out(dparams.wv.data(), static_cast<size_t>(dparams.wv.size()), dwv);
  });
}

Status positionalEncoding(int n, int d, uintptr_t out) {
  return guarded([&] {
    const attn::Matrix encoding = attn::positional_encoding(n, d);
    std::copy(encoding.data(), encoding.data() + encoding.size(), reinterpret_cast<float*>(out));
  });
}

// Holds one attn::MultiHeadAttention; JS owns the handle and deletes it in dispose().
class MultiHeadHandle {
 public:
  Status init(int embed_dim, int num_heads, int kdim, int vdim, bool bias) {
    return guarded([&] {
      mha_.emplace(attn::MultiHeadConfig{embed_dim, num_heads, kdim, vdim, bias});
    });
  }

  // A JSON list of {name, shape}: the state-dict entries this configuration expects.
  std::string parameterSpecs() const {
    std::string json = "[";
    for (const auto& spec : mha_->parameters()) {
      if (json.size() > 1) json += ",";
      json += "{\"name\":\"" + spec.name + "\",\"shape\":[";
      for (size_t j = 0; j < spec.shape.size(); ++j) {
        json += (j ? "," : "") + std::to_string(spec.shape[j]);
      }
      json += "]}";
    }
    return json + "]";
  }

  // rows, cols: the parameter's shape; cols < 0 for a 1-D bias.
  Status setParameter(std::string name, uintptr_t data, int rows, int cols) {
    return guarded([&] {
      std::vector<Index> shape{rows};
      if (cols >= 0) shape.push_back(cols);
      mha_->set_parameter(name, reinterpret_cast<const float*>(data), shape);
    });
  }

  Status resetParameters(double seed) {
    return guarded([&] { mha_->reset_parameters(static_cast<uint64_t>(seed)); });
  }

  // Every parameter, in the order parameterSpecs() lists, back to back from `out`.
  Status stateDict(uintptr_t out) const {
    return guarded([&] { copy_entries(mha_->state_dict(), out); });
  }

  // d_parameters go to `grad_parameters` as stateDict() lays parameters out.
  Status backward(TensorArg query, TensorArg key, TensorArg value, TensorArg grad_output,
                  MaskArg mask, TensorArg d_query, TensorArg d_key, TensorArg d_value,
                  uintptr_t grad_parameters) const {
    return guarded([&] {
      attn::MultiHeadForwardOptions options;
      options.mask = mask.to_mask();
      const auto gradients = mha_->backward(copy_in(query), copy_in(key), copy_in(value),
                                            copy_in(grad_output), options);
      copy_out(gradients.d_query.data, d_query.data);
      copy_out(gradients.d_key.data, d_key.data);
      copy_out(gradients.d_value.data, d_value.data);
      copy_entries(gradients.d_parameters, grad_parameters);
    });
  }

  Status forward(TensorArg query, TensorArg key, TensorArg value, MaskArg mask,
                 bool average_weights, TensorArg out, TensorArg weights) const {
    return guarded([&] {
      attn::MultiHeadForwardOptions options;
      options.mask = mask.to_mask();
      options.average_attn_weights = average_weights;
      const attn::MutableBatch weight_view = weights.out();
      mha_->forward(query.in(), key.in(), value.in(), options, out.out(),
                    weights.data ? &weight_view : nullptr);
    });
  }

 private:
  static void copy_entries(const std::vector<attn::NamedTensor>& entries, uintptr_t out) {
    auto* next = reinterpret_cast<float*>(out);
    for (const auto& entry : entries) next = std::copy(entry.data.begin(), entry.data.end(), next);
  }

  std::optional<attn::MultiHeadAttention> mha_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attention) {
  using namespace emscripten;
  value_object<TensorArg>("TensorArg")
      .field("data", &TensorArg::data)
      .field("batch", &TensorArg::batch)
      .field("rows", &TensorArg::rows)
      .field("cols", &TensorArg::cols);
  value_object<MaskArg>("MaskArg")
      .field("validLens", &MaskArg::validLens)
      .field("validLensCount", &MaskArg::validLensCount)
      .field("boolMask", &MaskArg::boolMask)
      .field("boolMaskBatch", &MaskArg::boolMaskBatch)
      .field("additive", &MaskArg::additive)
      .field("additiveBatch", &MaskArg::additiveBatch)
      .field("keyPadding", &MaskArg::keyPadding)
      .field("causal", &MaskArg::causal)
      .field("fill", &MaskArg::fill);
  value_object<AttentionArg>("AttentionArg")
      .field("hasScale", &AttentionArg::hasScale)
      .field("scale", &AttentionArg::scale)
      .field("dropout", &AttentionArg::dropout)
      .field("seed", &AttentionArg::seed);
  value_object<ScoreParamsArg>("ScoreParamsArg")
      .field("Wq", &ScoreParamsArg::Wq)
      .field("Wk", &ScoreParamsArg::Wk)
      .field("wv", &ScoreParamsArg::wv)
      .field("W", &ScoreParamsArg::W);
  value_object<Status>("Status").field("kind", &Status::kind).field("message", &Status::message);

  function("kernelRegression", &kernelRegression);
  function("leaveOneOut", &leaveOneOut);
  function("softmax", &softmax);
  function("maskedSoftmax", &maskedSoftmax);
  function("score", &score);
  function("bmm", &bmm);
  function("scaledDotProductAttention", &scaledDotProductAttention);
  function("additiveAttention", &additiveAttention);
  function("positionalEncoding", &positionalEncoding);
  function("scaledDotProductAttentionBackward", &scaledDotProductAttentionBackward);
  function("additiveAttentionBackward", &additiveAttentionBackward);
  class_<MultiHeadHandle>("MultiHeadAttention")
      .constructor<>()
      .function("init", &MultiHeadHandle::init)
      .function("parameterSpecs", &MultiHeadHandle::parameterSpecs)
      .function("setParameter", &MultiHeadHandle::setParameter)
      .function("resetParameters", &MultiHeadHandle::resetParameters)
      .function("forward", &MultiHeadHandle::forward)
      .function("backward", &MultiHeadHandle::backward)
      .function("stateDict", &MultiHeadHandle::stateDict);
}
