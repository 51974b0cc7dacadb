#pragma once
// Multi-head attention's chain on weights given from outside: the four projections, the heads'
// fused attention, and their backward. MultiHeadAttention (torch.nn.MultiheadAttention: biases,
// weights packed once) and the Transformer's attention layers (d2l's MultiHeadAttention: no
// biases, weights in the model's flat buffer, dropout) are two configurations of it.

#include <vector>

#include "attn/kv_cache.hpp"
#include "attn/mask.hpp"
#include "attn/tensor.hpp"
#include "kernels/seeded_dropout.hpp"
#include "nn/projection.hpp"

namespace attn::detail {

struct MultiHeadWeights {
  Projection q, k, v, out;
  Index heads = 1;
};

// The heads' queries, keys and values: [B * heads * n, head_dim], head-major within each batch
// row (d2l's transpose_qkv, and the order PyTorch's attn_mask [B * heads, L, S] uses).
struct HeadProjections {
  Index batch = 0, nq = 0, nk = 0;
  Matrix q, k, v;
};

// [B * n, heads * head_dim] -> [B * heads * n, head_dim], and back.
Matrix split_heads(const Matrix& projected, Index batch, Index n, Index heads);
Matrix merge_heads(const Matrix& split, Index batch, Index n, Index heads);

// x [B, n, in] projected by p and split into `heads` heads: [B * heads * n, out / heads].
Matrix project_split(ConstBatch x, const Projection& p, Index heads);

// The projections of query [B, nq, Eq], key [B, nk, Ek] and value [B, nk, Ev], split by head.
HeadProjections project_heads(ConstBatch query, ConstBatch key, ConstBatch value,
                              const MultiHeadWeights& weights);

// The heads' attention (mask resolved with batch_heads = heads, already validated) ->
// the heads' outputs merged back to [B * nq, heads * head_dim]; head_weights, when non-null,
// receive each head's weights [B * heads, nq, nk] before dropout.
Matrix attend_heads(const HeadProjections& heads, const MultiHeadWeights& weights, const Mask& mask,
                    const Dropout& dropout, const MutableBatch* head_weights = nullptr);

// Incremental self-attention of nq new positions: appends their keys and values (p.k, p.v, the
// cache's [B, heads, nq, head_dim]) to `cache` and attends their queries causally through it ->
// the heads' outputs merged, [B * nq, heads * head_dim]. The cache is unchanged after an error.
Matrix attend_cached(const HeadProjections& p, Index heads, KVCache& cache);

// `weights` with each projection's panels packed in `store`.
MultiHeadWeights packed(const MultiHeadWeights& weights, PanelStore& store);

// merged [B * nq, E] -> the output projection [B * nq, E].
Matrix project_output(const MatrixRef& merged, const MultiHeadWeights& weights);

// Gradients of sum(output * grad_output) through the chain: the inputs' and the projections'.
struct MultiHeadChainGradients {
  Matrix d_query, d_key, d_value;  // [B * n, E*] like the inputs' rows
  Matrix dw_q, dw_k, dw_v, dw_out;
  Vector db_q, db_k, db_v, db_out;
};

// grad_output [B * nq, E]; `heads` as project_heads gave them for these inputs; `merged`, the
// forward's attend_heads result when it was kept, else null (the fused backward recomputes it).
// The mask and dropout must be the forward's.
MultiHeadChainGradients multi_head_backward(ConstBatch query, ConstBatch key, ConstBatch value,
                                            const HeadProjections& heads, const Matrix* merged,
                                            const MultiHeadWeights& weights, const Mask& mask,
                                            const Dropout& dropout, const MatrixRef& grad_output);

}  // namespace attn::detail
