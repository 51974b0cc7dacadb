#include "attn/multi_head_attention.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"
#include "fused_attention.hpp"
#include "gemm.hpp"
#include "random_stream.hpp"

namespace attn {

namespace {

// A weight [out, in] drawn from U(-bound, bound), packed for the GEMM.
std::vector<float> uniform_weight(Index out, Index in, float bound, detail::RandomStream& random) {
  Matrix weight(out, in);
  for (Index i = 0; i < weight.size(); ++i) {
    weight.data()[i] = (2.0f * random.next_uniform() - 1.0f) * bound;
  }
  return detail::pack_transposed(weight);
}

float xavier_bound(Index fan_in, Index fan_out) {
  return std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
}

// x [B, n, in] -> x W^T + b as [B * n, out], W packed.
Matrix project(ConstBatch x, const std::vector<float>& weight, const Vector& bias) {
  const ConstMatrixMap rows(x.data, x.batch * x.rows, x.cols);
  Matrix projected = detail::matmul_transposed_packed(rows, weight, bias.size());
  projected.rowwise() += bias.transpose();
  return projected;
}

// [B * n, heads * head_dim] -> [B * heads, n, head_dim], head-major within each batch row
// (d2l's transpose_qkv, and the order PyTorch's attn_mask [B * heads, L, S] uses).
Matrix split_heads(const Matrix& projected, Index batch, Index n, Index heads) {
  const Index head_dim = projected.cols() / heads;
  Matrix split(batch * heads * n, head_dim);
  // With no rows (n = 0) there is nothing to move, and a block at a column offset of an empty
  // matrix is an offset from its null data pointer: undefined behaviour (found by UBSan).
  if (split.size() == 0) return split;
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      split.middleRows((b * heads + h) * n, n) = projected.block(b * n, h * head_dim, n, head_dim);
    }
  }
  return split;
}

// The inverse of split_heads.
Matrix merge_heads(const Matrix& split, Index batch, Index n, Index heads) {
  const Index head_dim = split.cols();
  Matrix merged(batch * n, heads * head_dim);
  if (merged.size() == 0) return merged;  // as in split_heads
  for (Index b = 0; b < batch; ++b) {
    for (Index h = 0; h < heads; ++h) {
      merged.block(b * n, h * head_dim, n, head_dim) = split.middleRows((b * heads + h) * n, n);
    }
  }
  return merged;
}

ConstBatch as_batch(const Matrix& m, Index batch, Index rows) {
  return {m.data(), batch, rows, m.cols()};
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
      w_q_ = detail::pack_transposed(packed_weight.topRows(e));
      w_k_ = detail::pack_transposed(packed_weight.middleRows(e, e));
      w_v_ = detail::pack_transposed(packed_weight.bottomRows(e));
    } else if (name == "q_proj_weight") {
      w_q_ = detail::pack_transposed(ConstMatrixMap(data, e, e));
    } else if (name == "k_proj_weight") {
      w_k_ = detail::pack_transposed(ConstMatrixMap(data, e, config_.kdim));
    } else if (name == "v_proj_weight") {
      w_v_ = detail::pack_transposed(ConstMatrixMap(data, e, config_.vdim));
    } else if (name == "in_proj_bias") {
      b_q_ = Eigen::Map<const Vector>(data, e);
      b_k_ = Eigen::Map<const Vector>(data + e, e);
      b_v_ = Eigen::Map<const Vector>(data + 2 * e, e);
    } else if (name == "out_proj.weight") {
      w_out_ = detail::pack_transposed(ConstMatrixMap(data, e, e));
    } else if (name == "out_proj.bias") {
      b_out_ = Eigen::Map<const Vector>(data, e);
    }
    return;
  }
  detail::fail("name", "one of " + known, "'" + std::string(name) + "'");
}

void MultiHeadAttention::reset_parameters(uint64_t seed) {
  const Index e = config_.embed_dim;
  detail::RandomStream random(seed);
  if (packed()) {
    // PyTorch initialises the packed [3E, E] matrix as one, so its fan_out is 3E.
    const float bound = xavier_bound(e, 3 * e);
    for (std::vector<float>* weight : {&w_q_, &w_k_, &w_v_}) {
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

void MultiHeadAttention::forward(ConstBatch query, ConstBatch key, ConstBatch value,
                                 const MultiHeadForwardOptions& options, MutableBatch output,
                                 const MutableBatch* weights) const {
  const Index e = config_.embed_dim, heads = config_.num_heads;
  const Index batch = query.batch, nq = query.rows, nk = key.rows;
  detail::require_shape("query", {-1, -1, e}, detail::shape_of(query));
  detail::require_shape("key", {batch, -1, config_.kdim}, detail::shape_of(key));
  detail::require_shape("value", {batch, nk, config_.vdim}, detail::shape_of(value));
  detail::require_shape("output", {batch, nq, e}, detail::shape_of(output));
  if (weights) {
    const Index weight_batch = options.average_attn_weights ? batch : batch * heads;
    detail::require_shape("weights", {weight_batch, nq, nk}, detail::shape_of(*weights));
  }
  validate_mask(options.mask, batch, nq, nk, heads);

  const Matrix q = split_heads(project(query, w_q_, b_q_), batch, nq, heads);
  const Matrix k = split_heads(project(key, w_k_, b_k_), batch, nk, heads);
  const Matrix v = split_heads(project(value, w_v_, b_v_), batch, nk, heads);

  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim()));
  Matrix head_outputs(batch * heads * nq, head_dim());
  const MutableBatch head_output_batch{head_outputs.data(), batch * heads, nq, head_dim()};
  Matrix head_weights(weights ? batch * heads * nq : 0, nk);
  const MutableBatch head_weight_batch{head_weights.data(), batch * heads, nq, nk};
  detail::attention_fused(as_batch(q, batch * heads, nq), as_batch(k, batch * heads, nk),
                          as_batch(v, batch * heads, nk), scale, options.mask, heads,
                          head_output_batch, weights ? &head_weight_batch : nullptr);

  MatrixMap out(output.data, batch * nq, e);
  out = detail::matmul_transposed_packed(merge_heads(head_outputs, batch, nq, heads), w_out_, e);
  out.rowwise() += b_out_.transpose();

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

}  // namespace attn
