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

// While the cores are contended (other work keeps them busy: thread_pool.cpp), a worker woken
// for a region may get no core for a scheduler's time slice, milliseconds, or lose it in the
// middle of a task, and the region waits for it; a short region then gains nothing from the
// workers and its wake-ups take cores from the threads that have work. So while contended only
// regions of at least this much work per thread split (a few hundred microseconds of products).
// Measured beside two busy loops on the 2-vCPU VM ('auto' ÷ one thread, three runs each of
// scripts/bench/threads/contention.js): the small CausalLM's training step 0.56-0.72 -> 0.64-1.01,
// decode at n = 4096 0.84-1.06 -> 0.98-1.23, the other rows' lowest 0.94-0.99 -> 1.01-1.25. The
// cost: a pool with more threads than cores (WebKit's 4 on 2) counts as contended too, and its
// decode at n = 4096 fell from 1.5-1.7x one thread's speed to 1.05-1.09x (docs/threads.md).
constexpr Index kContendedWorkPerThread = Index{1} << 21;

inline bool worth_splitting(Index work) {
  ThreadPool& pool = thread_pool();
  const int threads = pool.threads();
  if (threads == 1 || work < kWorkPerThread * threads) return false;
  return work >= kContendedWorkPerThread * threads || !pool.contended();
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
