#pragma once
// What the PyTorch fixture tests of the two encoder-decoder models share
// (test_seq2seq_pytorch.cpp, test_transformer.cpp): a case's model loaded with the fixture's
// state dict and its token batches, the fixtures' rule for scalars and named tensors, and the
// check of two clipped Adam steps.

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/encoder_decoder.hpp"
#include "fixtures.hpp"

namespace fixtures {

// A fixture case's model (built by config_of from the case's "config", then loaded with its
// "stateDict") and its batches.
template <typename Model>
struct EncoderDecoderCase {
  template <typename ConfigOf>
  EncoderDecoderCase(const Case& c, ConfigOf config_of)
      : model(config_of(c.inputs.at("config"))),
        src(data_of<int32_t>(c.inputs.at("src"))),
        lens(data_of<int32_t>(c.inputs.at("srcValidLens"))),
        tgt_in(data_of<int32_t>(c.inputs.at("tgtInput"))),
        tgt_out(data_of<int32_t>(c.inputs.at("tgtOutput"))),
        batch(shape_of(c.inputs.at("src"))[0]),
        src_steps(shape_of(c.inputs.at("src"))[1]),
        tgt_steps(shape_of(c.inputs.at("tgtInput"))[1]) {
    std::vector<attn::NamedTensor> state;
    for (const auto& [name, t] : c.inputs.at("stateDict").items()) {
      state.push_back({name, shape_of(t), data_of<float>(t)});
    }
    model.load_state_dict(state);
  }

  attn::TokenBatch src_batch() const { return {src.data(), batch, src_steps}; }
  attn::TokenBatch in_batch() const { return {tgt_in.data(), batch, tgt_steps}; }
  attn::TokenBatch out_batch() const { return {tgt_out.data(), batch, tgt_steps}; }

  Model model;
  std::vector<int32_t> src, lens, tgt_in, tgt_out;
  Index batch, src_steps, tgt_steps;
};

// The fixtures' rule for a tensor of one element, whose max|want| is |want|.
inline void check_scalar(double got, double want, const std::string& what) {
  INFO(what);
  CHECK_THAT(got, Catch::Matchers::WithinAbs(want, 2e-4 * std::abs(want)));
}

// Every entry of `got` against the tensor of its name in `want` (and no other names).
inline void check_named(const std::vector<attn::NamedTensor>& got, const json& want,
                        const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (const auto& t : got) {
    REQUIRE(want.contains(t.name));
    check(t.data.data(), t.shape, want.at(t.name), want, what + " " + t.name);
  }
}

// The loss and every gradient of the case's batch.
template <typename Model>
void check_loss_and_gradients(EncoderDecoderCase<Model>& s, const Case& c) {
  const auto loss = s.model.loss_and_gradients(s.src_batch(), s.lens, s.in_batch(), s.out_batch(),
                                               {c.options.at("pad").get<int32_t>(), true, {}});
  check_scalar(loss.loss, c.expected.at("loss").get<double>(), "loss");
  check_named(loss.gradients, c.expected.at("gradients"), "gradient");
}

// Two train_steps (clip_grad_norm_, then torch.optim.Adam): the losses before each, and the
// weights after both.
template <typename Model>
void check_two_clipped_adam_steps(EncoderDecoderCase<Model>& s, const Case& c) {
  const attn::EncoderDecoderTrainOptions options{c.options.at("pad").get<int32_t>(),
                                                 c.options.at("lr").get<float>(),
                                                 c.options.at("clip").get<float>(),
                                                 {}};
  const auto losses = c.expected.at("trainLosses").get<std::vector<double>>();
  for (size_t step = 0; step < 2; ++step) {
    const float loss =
        s.model.train_step(s.src_batch(), s.lens, s.in_batch(), s.out_batch(), options);
    check_scalar(loss, losses[step], "loss before step " + std::to_string(step + 1));
  }
  check_named(s.model.state_dict(), c.expected.at("afterTwoSteps"), "after two steps");
}

}  // namespace fixtures
