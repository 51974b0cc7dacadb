#include "transformer_layers.hpp"

#include <cmath>

#include "attn/embedding.hpp"
#include "attn/feed_forward.hpp"
#include "attn/layer_norm.hpp"
#include "models/model_inputs.hpp"

namespace attn::detail {

using Parameters = Transformer::Parameters;

Index encoder_site(Index block, Index k) { return 1 + 3 * block + k; }
Index decoder_base(Index blocks) { return 1 + 3 * blocks; }
Index decoder_site(Index blocks, Index block, Index k) {
  return decoder_base(blocks) + 1 + 5 * block + k;
}

ConstBatch batch_of(const Matrix& rows, Index batch) {
  return {rows.data(), batch, rows.rows() / batch, rows.cols()};
}

Matrix embed(const Parameters& p, const float* values, Index embedding, TokenBatch ids,
             const char* argument, const Matrix& encoding, Index offset,
             const DropoutOptions& dropout) {
  Matrix x =
      attn::embedding(p.matrix(values, embedding), ids.data, ids.batch * ids.steps, argument);
  x *= std::sqrt(static_cast<float>(x.cols()));
  for (Index b = 0; b < ids.batch; ++b) {
    x.middleRows(b * ids.steps, ids.steps) += encoding.middleRows(offset, ids.steps);
  }
  return attn::dropout(x, dropout);
}

void embed_backward(const Parameters& p, Index embedding, TokenBatch ids, const Matrix& dx,
                    const DropoutOptions& dropout, float* gradients) {
  const Matrix d = attn::dropout(dx, dropout) * std::sqrt(static_cast<float>(dx.cols()));
  embedding_backward(ids.data, ids.batch * ids.steps, d, p.matrix(gradients, embedding));
}

AttentionRun attention_layer(const Matrix& queries, const Matrix& keys_values, Index batch,
                             const MultiHeadWeights& w, const Mask& mask, const Dropout& dropout,
                             Tensor3* weights) {
  AttentionRun run;
  const ConstBatch q = batch_of(queries, batch), kv = batch_of(keys_values, batch);
  run.heads = project_heads(q, kv, kv, w);
  if (weights) *weights = Tensor3(batch * w.heads, q.rows, kv.rows);
  const MutableBatch weight_view = weights ? weights->view() : MutableBatch();
  run.merged = attend_heads(run.heads, w, mask, dropout, weights ? &weight_view : nullptr);
  run.output = project_output(run.merged, w);
  return run;
}

AttentionInputGradients attention_layer_backward(const AttentionRun& run, const Matrix& queries,
                                                 const Matrix& keys_values, const Parameters& p,
                                                 const Parameters::Attention& ids,
                                                 const float* values, const Mask& mask,
                                                 const Dropout& dropout, const Matrix& d_output,
                                                 float* gradients) {
  const Index batch = run.heads.batch;
  const ConstBatch q = batch_of(queries, batch), kv = batch_of(keys_values, batch);
  MultiHeadChainGradients g = multi_head_backward(
      q, kv, kv, run.heads, &run.merged, p.attention(values, ids), mask, dropout, d_output);
  p.matrix(gradients, ids.w_q) += g.dw_q;
  p.matrix(gradients, ids.w_k) += g.dw_k;
  p.matrix(gradients, ids.w_v) += g.dw_v;
  p.matrix(gradients, ids.w_o) += g.dw_out;
  return {std::move(g.d_query), g.d_key + g.d_value};
}

Matrix norm(const Parameters& p, const float* values, const Parameters::Norm& ids, const Matrix& x,
            const Matrix& y, const DropoutOptions& dropout) {
  return add_norm(x, y, p.vector(values, ids.weight), p.vector(values, ids.bias), dropout);
}

AddNormGradients norm_backward(const Parameters& p, const float* values,
                               const Parameters::Norm& ids, const Matrix& x, const Matrix& y,
                               const Matrix& d_output, const DropoutOptions& dropout,
                               float* gradients) {
  AddNormGradients g = add_norm_backward(x, y, p.vector(values, ids.weight), d_output, dropout);
  p.vector(gradients, ids.weight) += g.dweight;
  p.vector(gradients, ids.bias) += g.dbias;
  return g;
}

Matrix ffn_backward(const Parameters& p, const float* values, const Parameters::FeedForward& ids,
                    const Matrix& x, const Matrix& hidden, const Matrix& d_output,
                    float* gradients) {
  FeedForwardGradients g = position_wise_ffn_backward(x, p.ffn(values, ids), d_output, &hidden);
  p.matrix(gradients, ids.dense1_weight) += g.dense1_weight;
  p.vector(gradients, ids.dense1_bias) += g.dense1_bias;
  p.matrix(gradients, ids.dense2_weight) += g.dense2_weight;
  p.vector(gradients, ids.dense2_bias) += g.dense2_bias;
  return std::move(g.dx);
}

Mask causal_mask() {
  Mask mask;
  mask.causal = true;
  return mask;
}

}  // namespace attn::detail
