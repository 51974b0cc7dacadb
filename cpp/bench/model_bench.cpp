// Native timing of one training step (forward, backward, clipping, Adam) of an encoder-decoder
// model, for `npm run bench` to set beside the wasm builds and PyTorch
// (scripts/bench/training/seq2seq.js for Seq2Seq with Bahdanau attention, transformer.js for the
// Transformer). A small server, so that the caller can take its samples in turns with the other
// runners:
//   model_bench seq2seq|transformer TASK.json TASK.bin
// TASK.json holds the configuration, batch and step options (flat JSON numbers, written by
// scripts/bench/training/training.js); TASK.bin the batch (int32 src [B, Ts], lengths [B], tgt
// input and output [B, Tt]) then the weights (float32, in parameters() order). It prints {"loss":
// ...} (the loss of the batch at these weights, no dropout: the caller checks it against its own),
// then reads one integer per line, runs that many training steps and prints {"ms": per-step time}.
// Both models have the same training interface (attn/encoder_decoder.hpp), so one loop serves them.

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
#include "attn/transformer.hpp"

namespace {

// The number after "key": in a flat JSON object.
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

attn::Index index(const std::string& json, const char* key) {
  return static_cast<attn::Index>(field(json, key));
}

// The fields both models' configurations have.
template <typename Config>
Config common_config(const std::string& json) {
  Config config;
  config.src_vocab_size = index(json, "srcVocabSize");
  config.tgt_vocab_size = index(json, "tgtVocabSize");
  config.num_hiddens = index(json, "numHiddens");
  config.dropout = static_cast<float>(field(json, "dropout"));
  return config;
}

attn::Seq2Seq seq2seq(const std::string& json) {
  auto config = common_config<attn::Seq2SeqConfig>(json);
  config.embed_size = index(json, "embedSize");
  config.num_layers = index(json, "numLayers");
  return attn::Seq2Seq(config);
}

attn::Transformer transformer(const std::string& json) {
  auto config = common_config<attn::TransformerConfig>(json);
  config.ffn_num_hiddens = index(json, "ffnNumHiddens");
  config.num_heads = index(json, "numHeads");
  config.num_blks = index(json, "numBlks");
  return attn::Transformer(config);
}

// Loads the task's weights into `model`, prints its loss, then serves training steps.
template <typename Model>
void serve(Model model, const std::string& json, const char* bin_path) {
  const attn::Index B = index(json, "batch"), Ts = index(json, "srcSteps"),
                    Tt = index(json, "tgtSteps");
  std::ifstream bin(bin_path, std::ios::binary);
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
  attn::EncoderDecoderLossOptions check;
  check.pad = static_cast<int32_t>(field(json, "pad"));
  check.training = false;
  std::printf("{\"loss\":%.9g}\n", model.loss_and_gradients(s, lens, ti, to, check).loss);
  std::fflush(stdout);

  attn::EncoderDecoderTrainOptions train;
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
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kind = argc == 4 ? argv[1] : "";
  if (kind != "seq2seq" && kind != "transformer") {
    std::fprintf(stderr, "usage: %s seq2seq|transformer TASK.json TASK.bin\n", argv[0]);
    return 2;
  }
  std::ifstream json_file(argv[2]);
  if (!json_file) {
    std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[2]);
    return 2;
  }
  const std::string json((std::istreambuf_iterator<char>(json_file)),
                         std::istreambuf_iterator<char>());
  if (kind == "seq2seq") {
    serve(seq2seq(json), json, argv[3]);
  } else {
    serve(transformer(json), json, argv[3]);
  }
  return 0;
}
