// The one Emscripten-specific file: exposes the core to JS. The JS wrapper (web/lib) validates
// arguments and owns all buffers; it passes heap addresses and shapes in, and reads results out.
// Every entry point returns "" on success or the core's error message, so a C++ exception never
// crosses into JS as an opaque wasm exception.

#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
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
  float fill = -1e6f;

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
  float scale = NAN;  // NaN: the default 1/sqrt(d)
  float dropout = 0.0f;
  double seed = 0;  // a JS number; integral values up to 2^53 map one-to-one

  attn::AttentionOptions to_options(const MaskArg& mask) const {
    attn::AttentionOptions options;
    options.mask = mask.to_mask();
    if (!std::isnan(scale)) options.scale = scale;
    options.dropout = dropout;
    options.seed = static_cast<uint64_t>(seed);
    return options;
  }
};

// Additive / general score parameters; their shapes follow from q and k (checked in JS).
struct ScoreParamsArg {
  uintptr_t Wq = 0, Wk = 0, wv = 0, W = 0;
  int hidden = 0;

  attn::ScoreParams to_params(int dq, int dk) const {
    attn::ScoreParams params;
    auto matrix = [](uintptr_t data, Index rows, Index cols) {
      return data ? attn::Matrix(
                        attn::ConstMatrixMap(reinterpret_cast<const float*>(data), rows, cols))
                  : attn::Matrix();
    };
    params.Wq = matrix(Wq, hidden, dq);
    params.Wk = matrix(Wk, hidden, dk);
    if (wv) params.wv = Eigen::Map<const attn::Vector>(reinterpret_cast<const float*>(wv), hidden);
    params.W = matrix(W, dq, dk);
    return params;
  }
};

template <typename Body>
std::string guarded(Body&& body) {
  try {
    body();
    return {};
  } catch (const std::bad_alloc&) {
    return "out of memory: the wasm heap could not grow to hold this computation";
  } catch (const std::exception& error) {
    return error.what();
  }
}

std::string kernelRegression(TensorArg keys, TensorArg values, TensorArg queries,
                             std::string kernel, float bandwidth, TensorArg out,
                             TensorArg weights) {
  return guarded([&] {
    // Straight into the JS-owned buffers; weights (m x n) only when JS passed a buffer for them.
    attn::MatrixMap weight_map = weights.out()[0];
    attn::kernel_regression(keys.matrix(), values.matrix(), queries.matrix(),
                            attn::parse_kernel(kernel), bandwidth, out.out()[0],
                            weights.data ? &weight_map : nullptr);
  });
}

std::string leaveOneOut(TensorArg keys, TensorArg values, std::string kernel, uintptr_t bandwidths,
                        int count, uintptr_t errors_out, uintptr_t best_out) {
  return guarded([&] {
    const auto* first = reinterpret_cast<const float*>(bandwidths);
    const auto search = attn::leave_one_out(keys.matrix(), values.matrix(),
                                            attn::parse_kernel(kernel), {first, first + count});
    std::copy(search.errors.begin(), search.errors.end(), reinterpret_cast<float*>(errors_out));
    *reinterpret_cast<float*>(best_out) = search.best;
  });
}

std::string softmax(TensorArg x) {
  return guarded([&] { attn::softmax_in_place(x.out()[0]); });
}

std::string maskedSoftmax(TensorArg x, MaskArg mask) {
  return guarded([&] { attn::masked_softmax_in_place(x.out(), mask.to_mask()); });
}

std::string score(std::string fn, TensorArg q, TensorArg k, ScoreParamsArg params, TensorArg out) {
  return guarded([&] {
    attn::score(attn::parse_score_function(fn), q.in(), k.in(), params.to_params(q.cols, k.cols),
                out.out());
  });
}

std::string bmm(TensorArg a, TensorArg b, TensorArg out) {
  return guarded([&] { attn::bmm(a.in(), b.in(), out.out()); });
}

std::string scaledDotProductAttention(TensorArg q, TensorArg k, TensorArg v, MaskArg mask,
                                      AttentionArg options, TensorArg out, TensorArg weights) {
  return guarded([&] {
    const attn::MutableBatch weight_view = weights.out();
    attn::scaled_dot_product_attention(q.in(), k.in(), v.in(), options.to_options(mask), out.out(),
                                       weights.data ? &weight_view : nullptr);
  });
}

std::string additiveAttention(TensorArg q, TensorArg k, TensorArg v, ScoreParamsArg params,
                              MaskArg mask, AttentionArg options, TensorArg out,
                              TensorArg weights) {
  return guarded([&] {
    const attn::MutableBatch weight_view = weights.out();
    attn::additive_attention(q.in(), k.in(), v.in(), params.to_params(q.cols, k.cols),
                             options.to_options(mask), out.out(),
                             weights.data ? &weight_view : nullptr);
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

std::string scaledDotProductAttentionBackward(TensorArg q, TensorArg k, TensorArg v,
                                              TensorArg grad_output, MaskArg mask,
                                              AttentionArg options, TensorArg dq, TensorArg dk,
                                              TensorArg dv) {
  return guarded([&] {
    attn::scaled_dot_product_attention_backward(q.in(), k.in(), v.in(), grad_output.in(),
                                                options.to_options(mask), dq.out(), dk.out(),
                                                dv.out());
  });
}

// dWq [h, dq], dWk [h, dk], dwv [h]: heap buffers JS allocated.
std::string additiveAttentionBackward(TensorArg q, TensorArg k, TensorArg v, ScoreParamsArg params,
                                      TensorArg grad_output, MaskArg mask, AttentionArg options,
                                      TensorArg dq, TensorArg dk, TensorArg dv, uintptr_t dWq,
                                      uintptr_t dWk, uintptr_t dwv) {
  return guarded([&] {
    const auto gradients = attn::additive_attention_backward(
        copy_in(q), copy_in(k), copy_in(v), params.to_params(q.cols, k.cols), copy_in(grad_output),
        options.to_options(mask));
    copy_out(gradients.dq.data, dq.data);
    copy_out(gradients.dk.data, dk.data);
    copy_out(gradients.dv.data, dv.data);
    const attn::ScoreParams& dparams = gradients.dparams;
    copy_out(dparams.Wq.data(), static_cast<size_t>(dparams.Wq.size()), dWq);
    copy_out(dparams.Wk.data(), static_cast<size_t>(dparams.Wk.size()), dWk);
    copy_out(dparams.wv.data(), static_cast<size_t>(dparams.wv.size()), dwv);
  });
}

std::string positionalEncoding(int n, int d, uintptr_t out) {
  return guarded([&] {
    const attn::Matrix encoding = attn::positional_encoding(n, d);
    std::copy(encoding.data(), encoding.data() + encoding.size(), reinterpret_cast<float*>(out));
  });
}

// Holds one attn::MultiHeadAttention; JS owns the handle and deletes it in dispose().
class MultiHeadHandle {
 public:
  std::string init(int embed_dim, int num_heads, int kdim, int vdim, bool bias) {
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
  std::string setParameter(std::string name, uintptr_t data, int rows, int cols) {
    return guarded([&] {
      std::vector<Index> shape{rows};
      if (cols >= 0) shape.push_back(cols);
      mha_->set_parameter(name, reinterpret_cast<const float*>(data), shape);
    });
  }

  std::string resetParameters(double seed) {
    return guarded([&] { mha_->reset_parameters(static_cast<uint64_t>(seed)); });
  }

  // Every parameter, in the order parameterSpecs() lists, back to back from `out`.
  std::string stateDict(uintptr_t out) const {
    return guarded([&] { copy_entries(mha_->state_dict(), out); });
  }

  // d_parameters go to `grad_parameters` as stateDict() lays parameters out.
  std::string backward(TensorArg query, TensorArg key, TensorArg value, TensorArg grad_output,
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

  std::string forward(TensorArg query, TensorArg key, TensorArg value, MaskArg mask,
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
      .field("scale", &AttentionArg::scale)
      .field("dropout", &AttentionArg::dropout)
      .field("seed", &AttentionArg::seed);
  value_object<ScoreParamsArg>("ScoreParamsArg")
      .field("Wq", &ScoreParamsArg::Wq)
      .field("Wk", &ScoreParamsArg::Wk)
      .field("wv", &ScoreParamsArg::wv)
      .field("W", &ScoreParamsArg::W)
      .field("hidden", &ScoreParamsArg::hidden);

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
