// A stand-in for libFuzzer's main where the compiler has no -fsanitize=fuzzer (gcc): runs
// LLVMFuzzerTestOneInput on every corpus file, then on seeded mutations of them (bit flips, byte
// sets, insertions, deletions, splices) until -runs or -max_total_time is reached. It takes
// libFuzzer's flag syntax for these, so scripts call either build the same way:
//   attn_fuzz [-seed=N] [-runs=N] [-max_total_time=SECONDS] [-other_libfuzzer_flags] DIR|FILE...
// Without coverage feedback it explores less than libFuzzer, but it is deterministic per seed.

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// Set by the sanitizer runtimes when present (a weak reference is null without them).
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

using Bytes = std::vector<uint8_t>;

// The input being run and where to save it if the run dies (a failed check aborts; a sanitizer
// report exits through its death callback), as libFuzzer saves crash-<sha1>.
const Bytes* current = nullptr;
std::string artifact = "crash-replay";

void save_current() {
  if (!current) return;
  if (std::FILE* file = std::fopen(artifact.c_str(), "wb")) {
    std::fwrite(current->data(), 1, current->size(), file);
    std::fclose(file);
    std::fprintf(stderr, "replay driver: input saved to %s\n", artifact.c_str());
  }
  current = nullptr;
}

void run(const Bytes& input) {
  current = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  current = nullptr;
}

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

Bytes mutate(Bytes input, const std::vector<Bytes>& corpus, std::mt19937_64& random) {
  const int steps = 1 + static_cast<int>(random() % 4);
  for (int step = 0; step < steps; ++step) {
    const size_t at = input.empty() ? 0 : random() % input.size();
    switch (random() % 5) {
      case 0:
        if (!input.empty()) input[at] ^= static_cast<uint8_t>(1u << (random() % 8));
        break;
      case 1:
        if (!input.empty()) input[at] = static_cast<uint8_t>(random());
        break;
      case 2:
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at),
                     static_cast<uint8_t>(random()));
        break;
      case 3:
        if (!input.empty()) input.erase(input.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      default: {  // splice: keep a prefix, take the rest from another corpus entry
        const Bytes& other = corpus[random() % corpus.size()];
        input.resize(at);
        if (!other.empty())
          input.insert(input.end(), other.begin() + random() % other.size(), other.end());
        break;
      }
    }
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  long runs = -1;           // unbounded unless given
  double max_seconds = -1;  // unbounded unless given
  std::vector<Bytes> corpus;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg.rfind("-seed=", 0) == 0) {
      seed = std::strtoull(arg.c_str() + 6, nullptr, 10);
    } else if (arg.rfind("-runs=", 0) == 0) {
      runs = std::strtol(arg.c_str() + 6, nullptr, 10);
    } else if (arg.rfind("-max_total_time=", 0) == 0) {
      max_seconds = std::strtod(arg.c_str() + 16, nullptr);
    } else if (arg.rfind("-artifact_prefix=", 0) == 0) {
      artifact = arg.substr(17) + "crash-replay";
    } else if (arg[0] == '-') {
      continue;  // a libFuzzer flag this driver has no use for
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) corpus.push_back(read_file(entry.path()));
      }
    } else {
      corpus.push_back(read_file(arg));
    }
  }
  if (runs < 0 && max_seconds < 0) runs = 10000;
  std::signal(SIGABRT, [](int) { save_current(); });
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(save_current);
  std::printf("replay driver: %zu corpus inputs, seed %llu\n", corpus.size(),
              static_cast<unsigned long long>(seed));
  for (const Bytes& input : corpus) run(input);
  if (corpus.empty()) corpus.emplace_back();

  std::mt19937_64 random(seed);
  const auto start = std::chrono::steady_clock::now();
  long done = 0;
  for (; runs < 0 || done < runs; ++done) {
    if (max_seconds >= 0 && done % 64 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            max_seconds) {
      break;
    }
    run(mutate(corpus[random() % corpus.size()], corpus, random));
  }
  std::printf("replay driver: %ld mutated inputs passed\n", done);
  return 0;
}
