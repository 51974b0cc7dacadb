// The stateless functions of the core, exposed to JS (models.cpp holds the model classes,
// binding.hpp what both share). The JS wrapper (web/lib) reads and
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
#include "binding.hpp"

namespace {

using namespace binding;

Status kernelRegression(TensorArg keys, TensorArg values, TensorArg queries, std::string kernel,
                        float bandwidth, TensorArg out, TensorArg weights) {
  return guarded([&] {
    // Straight into the JS-owned buffers; weights (m x n) only when JS passed a buffer for them.
    attn::MatrixMap weight_map = weights.out()[0];
    attn::kernel_regression(keys.matrix(), values.matrix(), queries.matrix(),
                            attn::parse_similarity(kernel), bandwidth, out.out()[0],
                            weights.data ? &weight_map : nullptr);
  });
}

Status leaveOneOut(TensorArg keys, TensorArg values, std::string kernel, uintptr_t bandwidths,
                   int count, uintptr_t errors_out, uintptr_t best_out) {
  return guarded([&] {
    const auto* first = reinterpret_cast<const float*>(bandwidths);
    const auto search = attn::leave_one_out(keys.matrix(), values.matrix(),
                                            attn::parse_similarity(kernel), {first, first + count});
    std::copy(search.errors.begin(), search.errors.end(), reinterpret_cast<float*>(errors_out));
    *reinterpret_cast<float*>(best_out) = search.best;
  });
}

// In place: distances [count] become the kernel's values.
Status kernelValues(std::string kernel, uintptr_t distances, int count, float bandwidth) {
  return guarded([&] {
    auto* data = reinterpret_cast<float*>(distances);
    attn::similarity_values(attn::parse_similarity(kernel), data, count, bandwidth, data);
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

// lse: B * heads * nq floats, or 0.
Status scaledDotProductAttention(TensorArg q, TensorArg k, TensorArg v, MaskArg mask,
                                 AttentionArg options, TensorArg out, TensorArg weights,
                                 uintptr_t lse) {
  return guarded([&] {
    const attn::MutableBatch weight_view = weights.out();
    attn::scaled_dot_product_attention(q.in(), k.in(), v.in(), options.to_options(mask), out.out(),
                                       weights.data ? &weight_view : nullptr,
                                       reinterpret_cast<float*>(lse));
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

// dsinks: `heads` floats when options carry sinks, or 0.
Status scaledDotProductAttentionBackward(TensorArg q, TensorArg k, TensorArg v,
                                         TensorArg grad_output, MaskArg mask, AttentionArg options,
                                         TensorArg dq, TensorArg dk, TensorArg dv,
                                         uintptr_t dsinks) {
  return guarded([&] {
    attn::scaled_dot_product_attention_backward(q.in(), k.in(), v.in(), grad_output.in(),
                                                options.to_options(mask), dq.out(), dk.out(),
                                                dv.out(), reinterpret_cast<float*>(dsinks));
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

// The pool's thread count (web/lib/index.js, once at load and at dispose); an error when the
// build cannot start threads (a thread the pool cannot create is a std::system_error).
Status setThreads(int threads) {
  return guarded([&] { attn::set_threads(threads); });
}

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
      .field("seed", &AttentionArg::seed)
      .field("heads", &AttentionArg::heads)
      .field("kvHeads", &AttentionArg::kvHeads)
      .field("windowLeft", &AttentionArg::windowLeft)
      .field("windowRight", &AttentionArg::windowRight)
      .field("softcap", &AttentionArg::softcap)
      .field("alibiSlopes", &AttentionArg::alibiSlopes)
      .field("sinks", &AttentionArg::sinks);
  value_object<ScoreParamsArg>("ScoreParamsArg")
      .field("Wq", &ScoreParamsArg::Wq)
      .field("Wk", &ScoreParamsArg::Wk)
      .field("wv", &ScoreParamsArg::wv)
      .field("W", &ScoreParamsArg::W);
  value_object<Status>("Status").field("kind", &Status::kind).field("message", &Status::message);

  function("kernelRegression", &kernelRegression);
  function("leaveOneOut", &leaveOneOut);
  function("kernelValues", &kernelValues);
  function("softmax", &softmax);
  function("maskedSoftmax", &maskedSoftmax);
  function("score", &score);
  function("bmm", &bmm);
  function("scaledDotProductAttention", &scaledDotProductAttention);
  function("additiveAttention", &additiveAttention);
  function("positionalEncoding", &positionalEncoding);
  function("scaledDotProductAttentionBackward", &scaledDotProductAttentionBackward);
  function("additiveAttentionBackward", &additiveAttentionBackward);
  function("setThreads", &setThreads);
}
