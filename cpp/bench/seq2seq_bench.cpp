// Native timing of one Seq2Seq training step (forward, backward, clipping, Adam), for
// `npm run bench` (scripts/bench/seq2seq.js) to set beside the wasm builds and PyTorch.
// A small server, so that the caller can take its samples in turns with the other runners:
//   seq2seq_bench TASK.json TASK.bin
// TASK.json holds the configuration, batch and step options (flat JSON numbers, see
// seq2seq.js); TASK.bin the batch (int32 src [B, Ts], lengths [B], tgt input and output
// [B, Tt]) then the weights (float32, in parameters() order). It prints {"loss": ...} (the loss
// of the batch at these weights, no dropout: the caller checks it against its own), then reads
// one integer per line, runs that many training steps and prints {"ms": per-step time}.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/seq2seq.hpp"

namespace {

// The number after "key": in a flat JSON object (the task file is written by seq2seq.js).
double field(const std::string& json, const std::string& key) {
  const std::regex pattern("\"" + key + "\"\\s*:\\s*(-?[0-9.eE+-]+)");
  std::smatch match;
  if (!std::regex_search(json, match, pattern)) throw std::runtime_error("task: no " + key);
  return std::stod(match[1]);
}

template <typename T>
std::vector<T> take(std::ifstream& in, size_t count) {
  std::vector<T> values(count);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(T)));
  if (!in) throw std::runtime_error("task: the .bin file is too short");
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TASK.json TASK.bin\n", argv[0]);
    return 2;
  }
  std::ifstream json_file(argv[1]);
  const std::string json((std::istreambuf_iterator<char>(json_file)),
                         std::istreambuf_iterator<char>());
  const auto index = [&](const char* key) { return static_cast<attn::Index>(field(json, key)); };

  attn::Seq2SeqConfig config;
  config.src_vocab_size = index("srcVocabSize");
  config.tgt_vocab_size = index("tgtVocabSize");
  config.embed_size = index("embedSize");
  config.num_hiddens = index("numHiddens");
  config.num_layers = index("numLayers");
  config.dropout = static_cast<float>(field(json, "dropout"));
  attn::Seq2Seq model(config);

  const attn::Index B = index("batch"), Ts = index("srcSteps"), Tt = index("tgtSteps");
  std::ifstream bin(argv[2], std::ios::binary);
  const auto src = take<int32_t>(bin, B * Ts);
  const auto lens = take<int32_t>(bin, B);
  const auto tgt_input = take<int32_t>(bin, B * Tt);
  const auto tgt_output = take<int32_t>(bin, B * Tt);
  std::vector<attn::NamedTensor> weights;
  for (const attn::ParameterSpec& spec : model.parameters()) {
    attn::Index count = 1;
    for (attn::Index size : spec.shape) count *= size;
    weights.push_back({spec.name, spec.shape, take<float>(bin, count)});
  }
  model.load_state_dict(weights);

  const attn::TokenBatch s{src.data(), B, Ts}, ti{tgt_input.data(), B, Tt},
      to{tgt_output.data(), B, Tt};
  attn::Seq2SeqLossOptions check;
  check.pad = static_cast<int32_t>(field(json, "pad"));
  check.training = false;
  std::printf("{\"loss\":%.9g}\n", model.loss_and_gradients(s, lens, ti, to, check).loss);
  std::fflush(stdout);

  attn::Seq2SeqTrainOptions train;
  train.pad = check.pad;
  train.lr = static_cast<float>(field(json, "lr"));
  train.clip = static_cast<float>(field(json, "clip"));
  for (long reps; std::cin >> reps;) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < reps; ++i) model.train_step(s, lens, ti, to, train);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"ms\":%.6f}\n", ms / static_cast<double>(reps));
    std::fflush(stdout);
  }
  return 0;
}
