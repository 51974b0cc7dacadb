#pragma once
// Whether a region repays waking the workers, and a region that stays on the calling thread
// when it does not. Either way every task runs once with the same index, so results do not
// depend on the choice (only the slot differs: 0 for every task on the calling thread).

#include <utility>

#include "thread_pool.hpp"

namespace attn::detail {

// Below this many multiply-adds (or as much other work) per thread, a region stays on the
// calling thread: waking the workers would cost more (onnxruntime's MLAS draws the line at 64K
// as well).
constexpr Index kWorkPerThread = Index{1} << 16;

inline bool worth_splitting(Index work) {
  const int threads = thread_pool().threads();
  return threads > 1 && work >= kWorkPerThread * threads;
}

// thread_pool().run(count, task) when `work` is worth splitting, else task(t, 0) in order.
template <typename Task>
void run_split(Index count, Index work, Task&& task) {
  if (worth_splitting(work)) {
    thread_pool().run(count, std::forward<Task>(task));
    return;
  }
  for (Index t = 0; t < count; ++t) task(t, 0);
}

}  // namespace attn::detail
