#pragma once
// Whether a region repays waking the workers, and a region that stays on the calling thread
// when it does not. Either way every task runs once with the same index, so results do not
// depend on the choice (only the slot differs: 0 for every task on the calling thread).

#include <algorithm>
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

// fn(i) for each of `count` independent products of `work` multiply-adds each (a batch of
// matrix products): one worth splitting by itself splits its own tiles, and they run in turn;
// smaller ones go to the threads a product each, in one region, so that a batch of many small
// products splits as one large. Either way each product sums in its own fixed order.
template <typename Fn>
void run_products(Index count, Index work, Fn&& fn) {
  if (worth_splitting(work)) {
    for (Index i = 0; i < count; ++i) fn(i);
    return;
  }
  run_split(count, count * work, [&](Index i, int) { fn(i); });
}

// The items in each chunk of run_ranges: a caller that keeps a partial result per chunk (to add
// them up in order afterwards) numbers its chunks begin / range_chunk(item_work).
inline Index range_chunk(Index item_work) {
  return std::max<Index>(1, kWorkPerThread / 4 / std::max<Index>(1, item_work));
}

// body(begin, end) over [0, n) in chunks of about a quarter of kWorkPerThread (each item costing
// `item_work`), split across the pool when the whole is worth it, so at least 4 chunks per
// thread: for loops whose items are independent (the rows of an elementwise step, the entries of
// an optimiser update). The chunks depend on n and item_work only, never on the thread count.
template <typename Body>
void run_ranges(Index n, Index item_work, Body&& body) {
  const Index chunk = range_chunk(item_work);
  run_split((n + chunk - 1) / chunk, n * item_work, [&](Index task, int) {
    const Index begin = task * chunk;
    body(begin, std::min(n, begin + chunk));
  });
}

}  // namespace attn::detail
