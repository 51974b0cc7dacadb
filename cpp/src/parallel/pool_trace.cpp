#include "pool_trace.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace attn::detail {

double region_seconds(const std::vector<double>& tasks, int threads) {
  // The threads' finishing times; the earliest takes the next task (ties: any, the same time).
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int t = 0; t < std::max(threads, 1); ++t) free_at.push(0.0);
  double end = 0.0;
  for (const double task : tasks) {
    const double start = free_at.top();
    free_at.pop();
    free_at.push(start + task);
    end = std::max(end, start + task);
  }
  return end;
}

ScalingPrediction predict_scaling(const PoolTrace& trace, double traced_seconds, int threads) {
  ScalingPrediction p;
  double in_regions = 0.0;
  for (const std::vector<double>& tasks : trace.regions) {
    for (const double task : tasks) {
      in_regions += task;
      p.longest_task = std::max(p.longest_task, task);
    }
    p.seconds += region_seconds(tasks, threads);
    p.tasks += static_cast<Index>(tasks.size());
  }
  p.regions = static_cast<Index>(trace.regions.size());
  p.serial_seconds = std::max(0.0, traced_seconds - in_regions);
  p.seconds += p.serial_seconds;
  return p;
}

}  // namespace attn::detail
