#pragma once
// How a run's parallel regions would scale on more cores than this machine has. A simulated pool
// (simulate_threads) says it has T threads, so every split is chosen as it would be for T (task
// counts, whole matrices or strips, what is worth splitting), but runs each region's tasks on the
// calling thread, one after another, timing each. Replaying the pool's claim order on T threads
// from those times (each task to the first thread that is free, as the shared counter hands them
// out) gives the time the splits allow on T cores: the time outside regions, plus each region's
// longest thread. Not modelled: memory bandwidth that cores share, and waking the workers; the
// prediction is an upper bound on the speedup (cpp/bench/scaling_bench.cpp checks it against a
// measured one on this machine).

#include <vector>

#include "attn/tensor.hpp"

namespace attn::detail {

struct PoolTrace {
  // Each region's tasks, in seconds, in the order of their indices.
  std::vector<std::vector<double>> regions;
};

// Replaces the process's pool by a simulated one of `threads` that records every region of the
// calls that follow into `trace`, until set_threads or simulate_threads replaces it. The calling
// thread alone may use the core meanwhile.
void simulate_threads(int threads, PoolTrace* trace);

// The seconds a region of tasks `tasks` takes on `threads` threads claiming them in order.
double region_seconds(const std::vector<double>& tasks, int threads);

struct ScalingPrediction {
  double seconds = 0.0;         // the traced run's predicted time on the threads
  double serial_seconds = 0.0;  // of which outside every region
  Index regions = 0, tasks = 0;
  double longest_task = 0.0;  // seconds
};

// The prediction for a run traced in `trace` that took `traced_seconds` in all.
ScalingPrediction predict_scaling(const PoolTrace& trace, double traced_seconds, int threads);

}  // namespace attn::detail
