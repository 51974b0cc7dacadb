// The model learns: on a copy task (the target is the source sequence), a seeded training run
// of a few hundred Adam steps reaches a stated accuracy on sequences it never saw, and its
// attention learns the alignment, target step t looking at source position t (the diagonal).

#include <catch2/catch.hpp>
#include <iomanip>
#include <vector>

#include "attn/seq2seq.hpp"
#include "recurrent_reference.hpp"

using attn::Index;

namespace {

constexpr int32_t kPad = 0, kBos = 1, kEos = 2, kFirstSymbol = 3;
constexpr Index kSymbols = 10, kSteps = 7, kMinLength = 3, kMaxLength = 6;

// A batch of copy examples, d2l-style: src = x eos pad..., tgt_input = bos x pad...,
// tgt_output = x eos pad..., valid length |x| + 1. Drawn from a seeded splitmix64 stream.
struct CopyBatch {
  CopyBatch(Index batch, uint64_t seed) : batch(batch) {
    src.assign(static_cast<size_t>(batch * kSteps), kPad);
    tgt_in = tgt_out = src;
    uint64_t draw = 0;
    auto next = [&](Index n) {
      return static_cast<Index>(ref::splitmix_uniform(seed, draw++) * n);
    };
    for (Index b = 0; b < batch; ++b) {
      const Index length = kMinLength + next(kMaxLength - kMinLength + 1);
      lens.push_back(static_cast<int32_t>(length + 1));
      tgt_in[static_cast<size_t>(b * kSteps)] = kBos;
      for (Index t = 0; t < length; ++t) {
        const int32_t symbol = static_cast<int32_t>(kFirstSymbol + next(kSymbols));
        src[static_cast<size_t>(b * kSteps + t)] = symbol;
        tgt_out[static_cast<size_t>(b * kSteps + t)] = symbol;
        tgt_in[static_cast<size_t>(b * kSteps + t + 1)] = symbol;
      }
      src[static_cast<size_t>(b * kSteps + length)] = kEos;
      tgt_out[static_cast<size_t>(b * kSteps + length)] = kEos;
    }
  }
  attn::TokenBatch tokens(const std::vector<int32_t>& t) const { return {t.data(), batch, kSteps}; }

  Index batch;
  std::vector<int32_t> src, tgt_in, tgt_out, lens;
};

}  // namespace

TEST_CASE("a seeded run learns to copy sequences, attending along the diagonal",
          "[seq2seq][learning]") {
  attn::Seq2Seq model({kFirstSymbol + kSymbols, kFirstSymbol + kSymbols, 16, 32, 1, 0.0f, 3, true});
  float first_loss = 0.0f, loss = 0.0f;
  for (int step = 0; step < 500; ++step) {
    const CopyBatch data(32, 1000 + static_cast<uint64_t>(step));
    loss = model.train_step(data.tokens(data.src), data.lens, data.tokens(data.tgt_in),
                            data.tokens(data.tgt_out), {kPad, 0.01f, 1.0f, {}});
    if (step == 0) first_loss = loss;
  }
  INFO("loss " << first_loss << " -> " << loss);
  CHECK(loss < 0.1f * first_loss);

  // Held out: another stream of the generator.
  const CopyBatch test(200, 7);
  const auto out = model.translate(test.tokens(test.src), test.lens, {kBos, kEos, kSteps});
  Index exact = 0, positions = 0, aligned = 0;
  double diagonal_mass = 0.0;
  for (Index b = 0; b < test.batch; ++b) {
    const Index length = test.lens[static_cast<size_t>(b)];  // symbols and eos
    bool same = out.lengths[static_cast<size_t>(b)] == length;
    for (Index t = 0; t < length; ++t) {
      const size_t i = static_cast<size_t>(b * kSteps + t);
      same = same && out.tokens[i] == test.tgt_out[i];
      // Target step t emits source token t: its attention should sit on source position t.
      Index best = 0;
      for (Index j = 1; j < kSteps; ++j) {
        if (out.attention.at(b, t, j) > out.attention.at(b, t, best)) best = j;
      }
      aligned += best == t;
      diagonal_mass += out.attention.at(b, t, t);
      ++positions;
    }
    exact += same;
  }
  const double accuracy = static_cast<double>(exact) / static_cast<double>(test.batch);
  const double alignment = static_cast<double>(aligned) / static_cast<double>(positions);
  const double mass = diagonal_mass / static_cast<double>(positions);
  INFO(std::setprecision(3) << "exact copies " << accuracy << ", argmax on the diagonal "
                            << alignment << ", mean diagonal weight " << mass);
  CHECK(accuracy >= 0.95);
  CHECK(alignment >= 0.9);
  CHECK(mass >= 0.7);
}
