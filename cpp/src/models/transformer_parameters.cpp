#include "transformer_parameters.hpp"

#include <cmath>
#include <string>

#include "models/model_inputs.hpp"

namespace attn {

detail::TransformerParameters::TransformerParameters(const TransformerConfig& c)
    : heads(c.num_heads) {
  const Index H = c.num_hiddens, F = c.ffn_num_hiddens;
  encoder_embedding = add("encoder.embedding.weight", {c.src_vocab_size, H});
  for (Index i = 0; i < c.num_blks; ++i) {
    const std::string block = "encoder.blks.block" + std::to_string(i) + ".";
    EncoderBlock b{};
    b.attention = add_attention(block + "attention.", H);
    b.addnorm1 = add_norm(block + "addnorm1.", H);
    b.ffn = add_ffn(block + "ffn.", H, F);
    b.addnorm2 = add_norm(block + "addnorm2.", H);
    encoder.push_back(b);
  }
  decoder_embedding = add("decoder.embedding.weight", {c.tgt_vocab_size, H});
  for (Index i = 0; i < c.num_blks; ++i) {
    const std::string block = "decoder.blks.block" + std::to_string(i) + ".";
    DecoderBlock b{};
    b.attention1 = add_attention(block + "attention1.", H);
    b.addnorm1 = add_norm(block + "addnorm1.", H);
    b.attention2 = add_attention(block + "attention2.", H);
    b.addnorm2 = add_norm(block + "addnorm2.", H);
    b.ffn = add_ffn(block + "ffn.", H, F);
    b.addnorm3 = add_norm(block + "addnorm3.", H);
    decoder.push_back(b);
  }
  dense_weight = add("decoder.dense.weight", {c.tgt_vocab_size, H});
  dense_bias = add("decoder.dense.bias", {c.tgt_vocab_size});
  allocate();
  initialise(c.seed);
}

Transformer::Parameters::Attention Transformer::Parameters::add_attention(const std::string& prefix,
                                                                          Index hidden) {
  Attention a{};
  a.w_q = add(prefix + "W_q.weight", {hidden, hidden});
  a.w_k = add(prefix + "W_k.weight", {hidden, hidden});
  a.w_v = add(prefix + "W_v.weight", {hidden, hidden});
  a.w_o = add(prefix + "W_o.weight", {hidden, hidden});
  return a;
}

Transformer::Parameters::Norm Transformer::Parameters::add_norm(const std::string& prefix,
                                                                Index hidden) {
  return {add(prefix + "ln.weight", {hidden}), add(prefix + "ln.bias", {hidden})};
}

Transformer::Parameters::FeedForward Transformer::Parameters::add_ffn(const std::string& prefix,
                                                                      Index hidden,
                                                                      Index ffn_hidden) {
  FeedForward f{};
  f.dense1_weight = add(prefix + "dense1.weight", {ffn_hidden, hidden});
  f.dense1_bias = add(prefix + "dense1.bias", {ffn_hidden});
  f.dense2_weight = add(prefix + "dense2.weight", {hidden, ffn_hidden});
  f.dense2_bias = add(prefix + "dense2.bias", {hidden});
  return f;
}

// PyTorch's defaults, d2l 11.7 applying no init function: nn.Embedding N(0, 1); nn.Linear's
// kaiming_uniform_(a = sqrt(5)) weight and its bias share the bound 1/sqrt(in), in = the
// weight's columns (a bias takes its layer's); nn.LayerNorm weight 1, bias 0.
void Transformer::Parameters::initialise(uint64_t seed) {
  detail::Initializer init(seed);
  Index fan_in = 0;  // the last Linear weight's, for the bias after it
  for (size_t id = 0; id < specs.size(); ++id) {
    const ParameterSpec& spec = specs[id];
    float* w = values.data() + offsets[id];
    const Index n = detail::element_count(spec.shape);
    if (detail::ends_with(spec.name, "embedding.weight")) {
      init.normal(w, n);
    } else if (detail::ends_with(spec.name, "ln.weight")) {
      init.fill(w, n, 1.0f);
    } else if (detail::ends_with(spec.name, "ln.bias")) {
      init.fill(w, n, 0.0f);
    } else {
      if (spec.shape.size() == 2) fan_in = spec.shape[1];
      init.uniform(w, n, 1.0 / std::sqrt(static_cast<double>(fan_in)));
    }
  }
}

detail::MultiHeadWeights Transformer::Parameters::attention(const float* base,
                                                            const Attention& ids) const {
  const auto projection = [&](Index id) {
    return detail::Projection{data(base, id), rows(id), cols(id), nullptr, nullptr};
  };
  return {projection(ids.w_q), projection(ids.w_k), projection(ids.w_v), projection(ids.w_o),
          heads};
}

FeedForwardWeights Transformer::Parameters::ffn(const float* base, const FeedForward& ids) const {
  return {matrix(base, ids.dense1_weight), vector(base, ids.dense1_bias),
          matrix(base, ids.dense2_weight), vector(base, ids.dense2_bias)};
}

}  // namespace attn
