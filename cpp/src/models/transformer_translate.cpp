#include <algorithm>

#include "attn/kv_cache.hpp"
#include "attn/positional_encoding.hpp"
#include "models/source_mask.hpp"
#include "models/transformer_pass.hpp"
#include "nn/feed_forward_projections.hpp"

namespace attn::detail {

namespace {

using Parameters = Transformer::Parameters;

// One decoder block while decoding: its self-attention's keys and values so far, the
// cross-attention's keys and values of the encoder's output, projected once, and its weights
// with their panels packed once. A step multiplies one row per sequence by each weight, and
// packing a weight costs as much as that product: packed per step, they made decoding one
// sequence twice as slow.
struct DecoderBlockState {
  KVCache cache;
  HeadProjections cross;
  MultiHeadWeights self_weights, cross_weights;
  Projection dense1, dense2;
};

// The cross-attention weights of one step [B * heads, 1, Ts] into rows t of `all`
// [B * heads, max_len, Ts], for the batch rows still decoding.
void keep_step_weights(const Tensor3& step, Index t, Index heads, const std::vector<bool>& finished,
                       Tensor3& all) {
  for (Index s = 0; s < step.batch; ++s) {
    if (finished[static_cast<size_t>(s / heads)]) continue;
    std::copy_n(&step.data[static_cast<size_t>(s * step.cols)], step.cols, &all.at(s, t, 0));
  }
}

}  // namespace

// Step t feeds the previous tokens [B, 1] at position t through every block: self-attention
// appends their keys and values to the block's cache and attends over it, cross-attention
// attends the encoder's output; the argmax of the logits is the next token.
TransformerTranslation transformer_translate(const TransformerConfig& config, const Parameters& p,
                                             TokenBatch src, const int32_t* src_valid_lens,
                                             const GreedyOptions& options) {
  const Index batch = src.batch, heads = config.num_heads, H = config.num_hiddens;
  const Index max_len = options.max_len, head_dim = H / heads;
  const float* w = p.values.data();
  const DropoutSites no_dropout(0.0f, false, 0);
  const Matrix encoding = positional_encoding(std::max(src.steps, max_len), H);
  const Mask mask = source_mask(src_valid_lens, batch);
  const EncoderRun encoder = run_encoder(p, src, mask, no_dropout, encoding, nullptr);
  const Matrix& memory = encoder.output();

  PanelStore panels;
  std::vector<DecoderBlockState> blocks;
  for (const Parameters::DecoderBlock& ids : p.decoder) {
    const MultiHeadWeights cross = packed(p.attention(w, ids.attention2), panels);
    HeadProjections projected{batch,
                              1,
                              src.steps,
                              Matrix(),
                              project_split(batch_of(memory, batch), cross.k, heads),
                              project_split(batch_of(memory, batch), cross.v, heads)};
    const FeedForwardWeights ffn = p.ffn(w, ids.ffn);
    blocks.push_back({KVCache(plain_cache_config(batch, heads, head_dim, head_dim, max_len)),
                      std::move(projected), packed(p.attention(w, ids.attention1), panels), cross,
                      panels.packed(projection_of(ffn.dense1_weight, ffn.dense1_bias)),
                      panels.packed(projection_of(ffn.dense2_weight, ffn.dense2_bias))});
  }
  const Projection dense =
      panels.packed(projection_of(p.matrix(w, p.dense_weight), p.vector(w, p.dense_bias)));

  TransformerTranslation out;
  out.batch = batch;
  out.max_len = max_len;
  out.tokens.assign(static_cast<size_t>(batch * max_len), options.eos);
  out.lengths.assign(static_cast<size_t>(batch), static_cast<int32_t>(max_len));
  out.cross_attention.assign(p.decoder.size(), Tensor3(batch * heads, max_len, src.steps));
  std::vector<bool> finished(static_cast<size_t>(batch), false);
  std::vector<int32_t> previous(static_cast<size_t>(batch), options.bos);
  Tensor3 step_weights(batch * heads, 1, src.steps);
  const MutableBatch step_view = step_weights.view();

  for (Index t = 0; t < max_len; ++t) {
    Matrix x = embed(p, w, p.decoder_embedding, {previous.data(), batch, 1}, "bos", encoding, t,
                     no_dropout.at(0));
    for (size_t i = 0; i < blocks.size(); ++i) {
      const Parameters::DecoderBlock& ids = p.decoder[i];
      DecoderBlockState& block = blocks[i];
      const MultiHeadWeights& self = block.self_weights;
      const MultiHeadWeights& cross = block.cross_weights;
      const ConstBatch xb = batch_of(x, batch);
      const Matrix y = norm(
          p, w, ids.addnorm1, x,
          project_output(attend_cached(project_heads(xb, xb, xb, self), heads, block.cache), self),
          no_dropout.at(0));
      block.cross.q = project_split(batch_of(y, batch), cross.q, heads);
      const Matrix z =
          norm(p, w, ids.addnorm2, y,
               project_output(
                   attend_heads(block.cross, cross, mask, no_dropout.kernel(0), &step_view), cross),
               no_dropout.at(0));
      keep_step_weights(step_weights, t, heads, finished, out.cross_attention[i]);
      x = norm(p, w, ids.addnorm3, z, feed_forward(z, block.dense1, block.dense2),
               no_dropout.at(0));
    }
    const Matrix logits = project(x, dense);
    for (Index b = 0; b < batch; ++b) {
      if (finished[static_cast<size_t>(b)]) continue;
      Index token = 0;
      logits.row(b).maxCoeff(&token);
      out.tokens[static_cast<size_t>(b * max_len + t)] = static_cast<int32_t>(token);
      previous[static_cast<size_t>(b)] = static_cast<int32_t>(token);
      if (token == options.eos) {
        finished[static_cast<size_t>(b)] = true;
        out.lengths[static_cast<size_t>(b)] = static_cast<int32_t>(t + 1);
      }
    }
  }
  return out;
}

}  // namespace attn::detail
