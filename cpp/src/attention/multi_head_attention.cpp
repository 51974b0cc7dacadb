#include "attn/multi_head_attention.hpp"

#include <cmath>
#include <string>

#include "attn/linear.hpp"
#include "checks.hpp"
#include "kernels/gemm.hpp"
#include "kernels/random_stream.hpp"
#include "multi_head_core.hpp"
#include "state_dict_match.hpp"

namespace attn {

namespace {

detail::ProjectionWeight projection(Matrix weight) {
  std::vector<float> panels = detail::pack_transposed(weight);
  return {std::move(weight), std::move(panels)};
}

// A weight [out, in] drawn from U(-bound, bound).
detail::ProjectionWeight uniform_weight(Index out, Index in, float bound,
                                        detail::RandomStream& random) {
  Matrix weight(out, in);
  for (Index i = 0; i < weight.size(); ++i) {
    weight.data()[i] = (2.0f * random.next_uniform() - 1.0f) * bound;
  }
  return projection(std::move(weight));
}

float xavier_bound(Index fan_in, Index fan_out) {
  return std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(const MultiHeadConfig& config) : config_(config) {
  const Index e = config.embed_dim, h = config.num_heads;
  if (e <= 0) detail::fail("embed_dim", "a size > 0", std::to_string(e));
  if (h <= 0) detail::fail("num_heads", "a count > 0", std::to_string(h));
  if (e % h != 0) {
    detail::fail("num_heads", "a divisor of embed_dim " + std::to_string(e), std::to_string(h));
  }
  if (config.kdim < 0) detail::fail("kdim", "a size >= 0", std::to_string(config.kdim));
  if (config.vdim < 0) detail::fail("vdim", "a size >= 0", std::to_string(config.vdim));
  if (config_.kdim == 0) config_.kdim = e;
  if (config_.vdim == 0) config_.vdim = e;

  for (Vector* bias : {&b_q_, &b_k_, &b_v_, &b_out_}) bias->setZero(e);
  reset_parameters(0);
}

bool MultiHeadAttention::packed() const {
  return config_.kdim == config_.embed_dim && config_.vdim == config_.embed_dim;
}

std::vector<ParameterSpec> MultiHeadAttention::parameters() const {
  const Index e = config_.embed_dim;
  std::vector<ParameterSpec> specs;
  if (packed()) {
    specs.push_back({"in_proj_weight", {3 * e, e}});
  } else {
    specs.push_back({"q_proj_weight", {e, e}});
    specs.push_back({"k_proj_weight", {e, config_.kdim}});
    specs.push_back({"v_proj_weight", {e, config_.vdim}});
  }
  if (config_.bias) specs.push_back({"in_proj_bias", {3 * e}});
  specs.push_back({"out_proj.weight", {e, e}});
  if (config_.bias) specs.push_back({"out_proj.bias", {e}});
  return specs;
}

void MultiHeadAttention::set_parameter(std::string_view name, const float* data,
                                       const std::vector<Index>& shape) {
  const auto specs = parameters();
  std::string known;
  for (const auto& spec : specs) {
    if (spec.name != name) {
      known += (known.empty() ? "" : ", ") + spec.name;
      continue;
    }
    detail::require_shape(spec.name, spec.shape, shape);
    const Index e = config_.embed_dim;
    if (name == "in_proj_weight") {
      const ConstMatrixMap packed_weight(data, 3 * e, e);
      w_q_ = projection(packed_weight.topRows(e));
      w_k_ = projection(packed_weight.middleRows(e, e));
      w_v_ = projection(packed_weight.bottomRows(e));
    } else if (name == "q_proj_weight") {
      w_q_ = projection(ConstMatrixMap(data, e, e));
    } else if (name == "k_proj_weight") {
      w_k_ = projection(ConstMatrixMap(data, e, config_.kdim));
    } else if (name == "v_proj_weight") {
      w_v_ = projection(ConstMatrixMap(data, e, config_.vdim));
    } else if (name == "in_proj_bias") {
      b_q_ = Eigen::Map<const Vector>(data, e);
      b_k_ = Eigen::Map<const Vector>(data + e, e);
      b_v_ = Eigen::Map<const Vector>(data + 2 * e, e);
    } else if (name == "out_proj.weight") {
      w_out_ = projection(ConstMatrixMap(data, e, e));
    } else if (name == "out_proj.bias") {
      b_out_ = Eigen::Map<const Vector>(data, e);
    }
    return;
  }
  detail::fail("name", "one of " + known, "'" + std::string(name) + "'");
}

void MultiHeadAttention::load_state_dict(const std::vector<NamedTensor>& entries) {
  const std::vector<const NamedTensor*> matched = detail::match_state_dict(parameters(), entries);
  // Loaded into a copy, so that a failure part way (out of memory) leaves this model as it was.
  MultiHeadAttention loaded = *this;
  for (const NamedTensor* entry : matched) {
    loaded.set_parameter(entry->name, entry->data.data(), entry->shape);
  }
  *this = std::move(loaded);
}

void MultiHeadAttention::reset_parameters(uint64_t seed) {
  const Index e = config_.embed_dim;
  detail::RandomStream random(seed);
  if (packed()) {
    // PyTorch initialises the packed [3E, E] matrix as one, so its fan_out is 3E.
    const float bound = xavier_bound(e, 3 * e);
    for (detail::ProjectionWeight* weight : {&w_q_, &w_k_, &w_v_}) {
      *weight = uniform_weight(e, e, bound, random);
    }
  } else {
    w_q_ = uniform_weight(e, e, xavier_bound(e, e), random);
    w_k_ = uniform_weight(e, config_.kdim, xavier_bound(config_.kdim, e), random);
    w_v_ = uniform_weight(e, config_.vdim, xavier_bound(config_.vdim, e), random);
  }
  w_out_ = uniform_weight(e, e, 1.0f / std::sqrt(static_cast<float>(e)), random);
  for (Vector* bias : {&b_q_, &b_k_, &b_v_, &b_out_}) bias->setZero();
}

void MultiHeadAttention::check_forward_arguments(ConstBatch query, ConstBatch key, ConstBatch value,
                                                 const MultiHeadForwardOptions& options) const {
  detail::require_shape("query", {-1, -1, config_.embed_dim}, detail::shape_of(query));
  detail::require_shape("key", {query.batch, -1, config_.kdim}, detail::shape_of(key));
  detail::require_shape("value", {query.batch, key.rows, config_.vdim}, detail::shape_of(value));
  validate_mask(options.mask, query.batch, query.rows, key.rows, config_.num_heads);
}

std::vector<NamedTensor> MultiHeadAttention::named(const Matrix& w_q, const Matrix& w_k,
                                                   const Matrix& w_v, const Matrix& w_out,
                                                   const Vector& b_q, const Vector& b_k,
                                                   const Vector& b_v, const Vector& b_out) const {
  const auto flat = [](std::initializer_list<const float*> begins,
                       std::initializer_list<Index> sizes) {
    std::vector<float> data;
    auto size = sizes.begin();
    for (const float* begin : begins) data.insert(data.end(), begin, begin + *size++);
    return data;
  };
  std::vector<NamedTensor> named;
  for (const ParameterSpec& spec : parameters()) {
    std::vector<float> data;
    if (spec.name == "in_proj_weight") {
      data = flat({w_q.data(), w_k.data(), w_v.data()}, {w_q.size(), w_k.size(), w_v.size()});
    } else if (spec.name == "q_proj_weight") {
      data = flat({w_q.data()}, {w_q.size()});
    } else if (spec.name == "k_proj_weight") {
      data = flat({w_k.data()}, {w_k.size()});
    } else if (spec.name == "v_proj_weight") {
      data = flat({w_v.data()}, {w_v.size()});
    } else if (spec.name == "in_proj_bias") {
      data = flat({b_q.data(), b_k.data(), b_v.data()}, {b_q.size(), b_k.size(), b_v.size()});
    } else if (spec.name == "out_proj.weight") {
      data = flat({w_out.data()}, {w_out.size()});
    } else {  // out_proj.bias
      data = flat({b_out.data()}, {b_out.size()});
    }
    named.push_back({spec.name, spec.shape, std::move(data)});
  }
  return named;
}

std::vector<NamedTensor> MultiHeadAttention::state_dict() const {
  return named(w_q_.weight, w_k_.weight, w_v_.weight, w_out_.weight, b_q_, b_k_, b_v_, b_out_);
}

void MultiHeadAttention::forward(ConstBatch query, ConstBatch key, ConstBatch value,
                                 const MultiHeadForwardOptions& options, MutableBatch output,
                                 const MutableBatch* weights) const {
  const Index e = config_.embed_dim, heads = config_.num_heads;
  const Index batch = query.batch, nq = query.rows, nk = key.rows;
  check_forward_arguments(query, key, value, options);
  detail::require_shape("output", {batch, nq, e}, detail::shape_of(output));
  if (weights) {
    const Index weight_batch = options.average_attn_weights ? batch : batch * heads;
    detail::require_shape("weights", {weight_batch, nq, nk}, detail::shape_of(*weights));
  }

  Matrix head_weights(weights ? batch * heads * nq : 0, nk);
  const MutableBatch head_weight_batch{head_weights.data(), batch * heads, nq, nk};
  const detail::MultiHeadWeights w = projections();
  const Matrix merged =
      detail::attend_heads(detail::project_heads(query, key, value, w), w, options.mask,
                           detail::Dropout(0.0f, 0), weights ? &head_weight_batch : nullptr);
  MatrixMap(output.data, batch * nq, e) = detail::project_output(merged, w);

  if (!weights) return;
  if (!options.average_attn_weights) {
    MatrixMap(weights->data, batch * heads * nq, nk) = head_weights;
    return;
  }
  for (Index b = 0; b < batch; ++b) {
    auto mean = (*weights)[b];
    mean.setZero();
    for (Index h = 0; h < heads; ++h) mean += head_weight_batch[b * heads + h];
    mean /= static_cast<float>(heads);
  }
}

AttentionResult MultiHeadAttention::forward(const Tensor3& query, const Tensor3& key,
                                            const Tensor3& value,
                                            const MultiHeadForwardOptions& options,
                                            bool need_weights) const {
  AttentionResult result;
  result.output = Tensor3(query.batch, query.rows, config_.embed_dim);
  if (need_weights) {
    const Index rows = options.average_attn_weights ? query.batch : query.batch * config_.num_heads;
    result.weights = Tensor3(rows, query.rows, key.rows);
  }
  const MutableBatch weights = result.weights.view();
  forward(query.view(), key.view(), value.view(), options, result.output.view(),
          need_weights ? &weights : nullptr);
  return result;
}

KVCache MultiHeadAttention::create_cache(Index batch, Index capacity) const {
  return KVCache(plain_cache_config(batch, config_.num_heads, head_dim(), head_dim(), capacity));
}

void MultiHeadAttention::forward(ConstBatch query, ConstBatch key, ConstBatch value, KVCache& cache,
                                 MutableBatch output) const {
  const Index e = config_.embed_dim, heads = config_.num_heads, hd = head_dim();
  const KVCacheConfig& c = cache.config();
  // A cache of grouped heads, a window or rotary positions would compute another attention than
  // this layer's (PyTorch's): only create_cache's kind fits.
  if (c.heads != heads || c.head_dim != hd || c.value_dim != hd || c.kv_heads != heads ||
      c.window != 0 || c.rotary) {
    detail::fail("cache",
                 "a cache of " + std::to_string(heads) +
                     " heads, head_dim = value_dim = " + std::to_string(hd) +
                     ", without kv_heads, window or rotary (from create_cache)",
                 "heads " + std::to_string(c.heads) + ", head_dim " + std::to_string(c.head_dim) +
                     ", value_dim " + std::to_string(c.value_dim) + ", kv_heads " +
                     std::to_string(c.kv_heads) + ", window " + std::to_string(c.window) +
                     (c.rotary ? ", rotary" : ""));
  }
  const Index batch = c.batch, t = query.rows;
  detail::require_shape("query", {batch, -1, e}, detail::shape_of(query));
  detail::require_shape("key", {batch, t, config_.kdim}, detail::shape_of(key));
  detail::require_shape("value", {batch, t, config_.vdim}, detail::shape_of(value));
  detail::require_shape("output", {batch, t, e}, detail::shape_of(output));

  const detail::MultiHeadWeights w = projections();
  const Index length = cache.length();
  const Matrix merged =
      detail::attend_cached(detail::project_heads(query, key, value, w), heads, cache);
  try {
    MatrixMap(output.data, batch * t, e) = detail::project_output(merged, w);
  } catch (...) {
    cache.truncate(length);  // the projection's allocation failed: the call leaves no trace
    throw;
  }
}

Tensor3 MultiHeadAttention::forward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                    KVCache& cache) const {
  Tensor3 output(query.batch, query.rows, config_.embed_dim);
  forward(query.view(), key.view(), value.view(), cache, output.view());
  return output;
}

MultiHeadGradients MultiHeadAttention::backward(const Tensor3& query, const Tensor3& key,
                                                const Tensor3& value, const Tensor3& grad_output,
                                                const MultiHeadForwardOptions& options) const {
  const Index e = config_.embed_dim, batch = query.batch, nq = query.rows, nk = key.rows;
  check_forward_arguments(query.view(), key.view(), value.view(), options);
  detail::require_shape("grad_output", {batch, nq, e},
                        {grad_output.batch, grad_output.rows, grad_output.cols});

  const detail::MultiHeadWeights w = projections();
  const detail::MultiHeadChainGradients g = detail::multi_head_backward(
      query.view(), key.view(), value.view(),
      detail::project_heads(query.view(), key.view(), value.view(), w), nullptr, w, options.mask,
      detail::Dropout(0.0f, 0), ConstMatrixMap(grad_output.data.data(), batch * nq, e));

  MultiHeadGradients gradients{Tensor3(batch, nq, e),
                               Tensor3(batch, nk, config_.kdim),
                               Tensor3(batch, nk, config_.vdim),
                               {}};
  MatrixMap(gradients.d_query.data.data(), batch * nq, e) = g.d_query;
  MatrixMap(gradients.d_key.data.data(), batch * nk, config_.kdim) = g.d_key;
  MatrixMap(gradients.d_value.data.data(), batch * nk, config_.vdim) = g.d_value;
  gradients.d_parameters =
      named(g.dw_q, g.dw_k, g.dw_v, g.dw_out, g.db_q, g.db_k, g.db_v, g.db_out);
  return gradients;
}

detail::MultiHeadWeights MultiHeadAttention::projections() const {
  const auto projection_of = [](const detail::ProjectionWeight& w, const Vector& b) {
    return detail::Projection{w.weight.data(), w.weight.rows(), w.weight.cols(), &w.panels,
                              b.data()};
  };
  return {projection_of(w_q_, b_q_), projection_of(w_k_, b_k_), projection_of(w_v_, b_v_),
          projection_of(w_out_, b_out_), config_.num_heads};
}

}  // namespace attn
