#include "multi_head_core.hpp"

#include <cmath>

#include "attn/linear.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/gemm.hpp"
#include "parallel/split.hpp"

namespace attn::detail {

namespace {

// x [B, n, in] as its [B * n, in] rows.
ConstMatrixMap rows_of(ConstBatch x) { return {x.data, x.batch * x.rows, x.cols}; }

ConstBatch as_batch(const Matrix& m, Index batch, Index rows) {
  return {m.data(), batch, rows, m.cols()};
}
MutableBatch as_batch(Matrix& m, Index batch, Index rows) {
  return {m.data(), batch, rows, m.cols()};
}

float head_scale(Index head_dim) { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }

// The bias gradient of a projection that has one; an empty vector otherwise.
Vector bias_gradient(const Projection& p, const LinearGradients& g) {
  return p.bias ? g.dbias : Vector();
}

}  // namespace

Matrix split_heads(const Matrix& projected, Index batch, Index n, Index heads) {
  const Index head_dim = projected.cols() / heads;
  Matrix split(batch * heads * n, head_dim);
  // With no rows (n = 0) there is nothing to move, and a block at a column offset of an empty
  // matrix is an offset from its null data pointer: undefined behaviour (found by UBSan).
  if (split.size() == 0) return split;
  // One (batch row, head) block per task: a copy, worth sharing at the sizes of a model.
  run_split(batch * heads, split.size(), [&](Index bh, int) {
    const Index b = bh / heads, h = bh % heads;
    split.middleRows(bh * n, n) = projected.block(b * n, h * head_dim, n, head_dim);
  });
  return split;
}

Matrix merge_heads(const Matrix& split, Index batch, Index n, Index heads) {
  const Index head_dim = split.cols();
  Matrix merged(batch * n, heads * head_dim);
  if (merged.size() == 0) return merged;  // as in split_heads, and split the same way
  run_split(batch * heads, merged.size(), [&](Index bh, int) {
    const Index b = bh / heads, h = bh % heads;
    merged.block(b * n, h * head_dim, n, head_dim) = split.middleRows(bh * n, n);
  });
  return merged;
}

Matrix project_split(ConstBatch x, const Projection& p, Index heads) {
  return split_heads(project(rows_of(x), p), x.batch, x.rows, heads);
}

HeadProjections project_heads(ConstBatch query, ConstBatch key, ConstBatch value,
                              const MultiHeadWeights& weights) {
  const Index heads = weights.heads;
  return {query.batch,
          query.rows,
          key.rows,
          project_split(query, weights.q, heads),
          project_split(key, weights.k, heads),
          project_split(value, weights.v, heads)};
}

Matrix attend_cached(const HeadProjections& p, Index heads, KVCache& cache) {
  // [B * heads, nq, head_dim] is the cache's [batch, heads, nq, head_dim], row-major.
  const Index head_dim = p.q.cols();
  const std::vector<Index> shape{p.batch, heads, p.nq, head_dim};
  const Index length = cache.length();
  cache.append(p.k.data(), shape, p.v.data(), shape);
  try {
    // The cache's causal rule is exactly the causal mask of the whole sequence, restricted to
    // the rows of the new positions.
    Matrix outputs(p.batch * heads * p.nq, head_dim);
    cache.attend(p.q.data(), shape, outputs.data(), head_scale(head_dim));
    return merge_heads(outputs, p.batch, p.nq, heads);
  } catch (...) {
    cache.truncate(length);  // an allocation failed after the append: undo it
    throw;
  }
}

Matrix attend_heads(const HeadProjections& p, const MultiHeadWeights& weights, const Mask& mask,
                    const Dropout& dropout, const MutableBatch* head_weights) {
  const Index count = p.batch * weights.heads, head_dim = p.q.cols();
  Matrix outputs(count * p.nq, p.v.cols());
  attention_fused(as_batch(p.q, count, p.nq), as_batch(p.k, count, p.nk),
                  as_batch(p.v, count, p.nk), head_scale(head_dim), mask, weights.heads, dropout,
                  as_batch(outputs, count, p.nq), head_weights);
  return merge_heads(outputs, p.batch, p.nq, weights.heads);
}

MultiHeadWeights packed(const MultiHeadWeights& weights, PanelStore& store) {
  return {store.packed(weights.q), store.packed(weights.k), store.packed(weights.v),
          store.packed(weights.out), weights.heads};
}

Matrix project_output(const MatrixRef& merged, const MultiHeadWeights& weights) {
  return project(merged, weights.out);
}

// The forward's chain run backwards: the output projection, the heads' attention (flash-style,
// which also gives back the heads' outputs when they were not kept), then the three input
// projections, each an nn.Linear backward.
MultiHeadChainGradients multi_head_backward(ConstBatch query, ConstBatch key, ConstBatch value,
                                            const HeadProjections& p, const Matrix* merged,
                                            const MultiHeadWeights& weights, const Mask& mask,
                                            const Dropout& dropout, const MatrixRef& grad_output) {
  const Index heads = weights.heads, count = p.batch * heads, head_dim = p.q.cols();
  const Matrix grad_heads =
      split_heads(matmul(grad_output, weights.out.matrix()), p.batch, p.nq, heads);
  Matrix dq(count * p.nq, head_dim), dk(count * p.nk, head_dim), dv(count * p.nk, p.v.cols());
  Matrix recomputed(merged ? 0 : count * p.nq, p.v.cols());
  const MutableBatch recomputed_batch = as_batch(recomputed, count, p.nq);
  attention_fused_backward(as_batch(p.q, count, p.nq), as_batch(p.k, count, p.nk),
                           as_batch(p.v, count, p.nk), as_batch(grad_heads, count, p.nq),
                           head_scale(head_dim), mask, heads, dropout, as_batch(dq, count, p.nq),
                           as_batch(dk, count, p.nk), as_batch(dv, count, p.nk),
                           merged ? nullptr : &recomputed_batch);

  const LinearGradients out =
      linear_backward(merged ? *merged : merge_heads(recomputed, p.batch, p.nq, heads),
                      weights.out.matrix(), grad_output);
  const LinearGradients q =
      linear_backward(rows_of(query), weights.q.matrix(), merge_heads(dq, p.batch, p.nq, heads));
  const LinearGradients k =
      linear_backward(rows_of(key), weights.k.matrix(), merge_heads(dk, p.batch, p.nk, heads));
  const LinearGradients v =
      linear_backward(rows_of(value), weights.v.matrix(), merge_heads(dv, p.batch, p.nk, heads));
  return {q.dx,
          k.dx,
          v.dx,
          q.dweight,
          k.dweight,
          v.dweight,
          out.dweight,
          bias_gradient(weights.q, q),
          bias_gradient(weights.k, k),
          bias_gradient(weights.v, v),
          bias_gradient(weights.out, out)};
}

}  // namespace attn::detail
