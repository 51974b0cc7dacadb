#include "transformer_pass.hpp"

#include <algorithm>
#include <cmath>

#include "attn/embedding.hpp"
#include "attn/feed_forward.hpp"
#include "attn/layer_norm.hpp"
#include "attn/linear.hpp"
#include "attn/positional_encoding.hpp"
#include "models/model_inputs.hpp"
#include "models/source_mask.hpp"

namespace attn::detail {

namespace {

using Parameters = Transformer::Parameters;

void encoder_backward(const Parameters& p, TokenBatch src, const EncoderRun& encoder,
                      const Mask& mask, const DropoutSites& dropout, Matrix d, float* gradients) {
  const float* values = p.values.data();
  for (auto i = static_cast<Index>(encoder.blocks.size()) - 1; i >= 0; --i) {
    const Parameters::EncoderBlock& ids = p.encoder[static_cast<size_t>(i)];
    const EncoderBlockRun& run = encoder.blocks[static_cast<size_t>(i)];
    const Matrix& x = i == 0 ? encoder.input : encoder.blocks[static_cast<size_t>(i - 1)].output;
    const AddNormGradients n2 = norm_backward(p, values, ids.addnorm2, run.y, run.ffn, d,
                                              dropout.at(encoder_site(i, 2)), gradients);
    const Matrix dy = n2.dx + ffn_backward(p, values, ids.ffn, run.y, run.hidden, n2.dy, gradients);
    const AddNormGradients n1 = norm_backward(p, values, ids.addnorm1, x, run.attention.output, dy,
                                              dropout.at(encoder_site(i, 1)), gradients);
    const AttentionInputGradients a =
        attention_layer_backward(run.attention, x, x, p, ids.attention, values, mask,
                                 dropout.kernel(encoder_site(i, 0)), n1.dy, gradients);
    d = n1.dx + a.d_query + a.d_keys_values;
  }
  embed_backward(p, p.encoder_embedding, src, d, dropout.at(0), gradients);
}

}  // namespace

EncoderRun run_encoder(const Parameters& p, TokenBatch src, const Mask& mask,
                       const DropoutSites& dropout, const Matrix& encoding,
                       std::vector<Tensor3>* weights) {
  const float* w = p.values.data();
  EncoderRun encoder;
  encoder.input = embed(p, w, p.encoder_embedding, src, "src", encoding, 0, dropout.at(0));
  for (Index i = 0; i < static_cast<Index>(p.encoder.size()); ++i) {
    const Parameters::EncoderBlock& ids = p.encoder[static_cast<size_t>(i)];
    const Matrix& x = i == 0 ? encoder.input : encoder.output();
    EncoderBlockRun run;
    run.attention = attention_layer(x, x, src.batch, p.attention(w, ids.attention), mask,
                                    dropout.kernel(encoder_site(i, 0)),
                                    weights ? &weights->emplace_back() : nullptr);
    run.y = norm(p, w, ids.addnorm1, x, run.attention.output, dropout.at(encoder_site(i, 1)));
    run.ffn = position_wise_ffn(run.y, p.ffn(w, ids.ffn), &run.hidden);
    run.output = norm(p, w, ids.addnorm2, run.y, run.ffn, dropout.at(encoder_site(i, 2)));
    encoder.blocks.push_back(std::move(run));
  }
  return encoder;
}

TransformerPass::TransformerPass(const TransformerConfig& config, const Parameters& parameters,
                                 TokenBatch src, const int32_t* src_valid_lens,
                                 TokenBatch tgt_input, const DropoutSites& dropout,
                                 TransformerAttention* attention)
    : config_(config),
      p_(parameters),
      values_(parameters.values.data()),
      src_(src),
      tgt_(tgt_input),
      source_mask_(source_mask(src_valid_lens, src.batch)),
      causal_mask_(causal_mask()),
      dropout_(dropout),
      encoding_(positional_encoding(std::max(src.steps, tgt_input.steps), config.num_hiddens)) {
  encoder_ = run_encoder(p_, src_, source_mask_, dropout_, encoding_,
                         attention ? &attention->encoder : nullptr);
  decode(attention);
  logits_ = linear(decoder_.back().output, p_.matrix(values_, p_.dense_weight),
                   p_.vector(values_, p_.dense_bias));
}

void TransformerPass::decode(TransformerAttention* attention) {
  const Index blocks = config_.num_blks;
  const Matrix& memory = encoder_.output();
  decoder_input_ = embed(p_, values_, p_.decoder_embedding, tgt_, "tgt_input", encoding_, 0,
                         dropout_.at(decoder_base(blocks)));
  for (Index i = 0; i < blocks; ++i) {
    const Parameters::DecoderBlock& ids = p_.decoder[static_cast<size_t>(i)];
    const Matrix& x = i == 0 ? decoder_input_ : decoder_.back().output;
    DecoderBlockRun run;
    run.self = attention_layer(x, x, tgt_.batch, p_.attention(values_, ids.attention1),
                               causal_mask_, dropout_.kernel(decoder_site(blocks, i, 0)),
                               attention ? &attention->decoder_self.emplace_back() : nullptr);
    run.y = norm(p_, values_, ids.addnorm1, x, run.self.output,
                 dropout_.at(decoder_site(blocks, i, 1)));
    run.cross = attention_layer(run.y, memory, tgt_.batch, p_.attention(values_, ids.attention2),
                                source_mask_, dropout_.kernel(decoder_site(blocks, i, 2)),
                                attention ? &attention->decoder_cross.emplace_back() : nullptr);
    run.z = norm(p_, values_, ids.addnorm2, run.y, run.cross.output,
                 dropout_.at(decoder_site(blocks, i, 3)));
    run.ffn = position_wise_ffn(run.z, p_.ffn(values_, ids.ffn), &run.hidden);
    run.output =
        norm(p_, values_, ids.addnorm3, run.z, run.ffn, dropout_.at(decoder_site(blocks, i, 4)));
    decoder_.push_back(std::move(run));
  }
}

void TransformerPass::backward(const Matrix& dlogits, float* gradients) const {
  encoder_backward(p_, src_, encoder_, source_mask_, dropout_, decoder_backward(dlogits, gradients),
                   gradients);
}

Matrix TransformerPass::decoder_backward(const Matrix& dlogits, float* gradients) const {
  const Index blocks = config_.num_blks;
  const LinearGradients dense =
      linear_backward(decoder_.back().output, p_.matrix(values_, p_.dense_weight), dlogits);
  p_.matrix(gradients, p_.dense_weight) += dense.dweight;
  p_.vector(gradients, p_.dense_bias) += dense.dbias;
  const Matrix& memory = encoder_.output();
  Matrix d_memory = Matrix::Zero(memory.rows(), memory.cols());
  Matrix d = dense.dx;
  for (Index i = blocks - 1; i >= 0; --i) {
    const Parameters::DecoderBlock& ids = p_.decoder[static_cast<size_t>(i)];
    const DecoderBlockRun& run = decoder_[static_cast<size_t>(i)];
    const Matrix& x = i == 0 ? decoder_input_ : decoder_[static_cast<size_t>(i - 1)].output;
    const AddNormGradients n3 = norm_backward(p_, values_, ids.addnorm3, run.z, run.ffn, d,
                                              dropout_.at(decoder_site(blocks, i, 4)), gradients);
    const Matrix dz =
        n3.dx + ffn_backward(p_, values_, ids.ffn, run.z, run.hidden, n3.dy, gradients);
    const AddNormGradients n2 =
        norm_backward(p_, values_, ids.addnorm2, run.y, run.cross.output, dz,
                      dropout_.at(decoder_site(blocks, i, 3)), gradients);
    const AttentionInputGradients cross = attention_layer_backward(
        run.cross, run.y, memory, p_, ids.attention2, values_, source_mask_,
        dropout_.kernel(decoder_site(blocks, i, 2)), n2.dy, gradients);
    d_memory += cross.d_keys_values;
    const AddNormGradients n1 =
        norm_backward(p_, values_, ids.addnorm1, x, run.self.output, n2.dx + cross.d_query,
                      dropout_.at(decoder_site(blocks, i, 1)), gradients);
    const AttentionInputGradients self =
        attention_layer_backward(run.self, x, x, p_, ids.attention1, values_, causal_mask_,
                                 dropout_.kernel(decoder_site(blocks, i, 0)), n1.dy, gradients);
    d = n1.dx + self.d_query + self.d_keys_values;
  }
  embed_backward(p_, p_.decoder_embedding, tgt_, d, dropout_.at(decoder_base(blocks)), gradients);
  return d_memory;
}

}  // namespace attn::detail
