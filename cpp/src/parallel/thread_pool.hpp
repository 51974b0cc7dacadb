#pragma once
// The core's one thread pool: created when the thread count is set (attn/threads.hpp), never per
// call. A parallel region hands out tasks 0 .. count - 1 from a shared counter; the calling
// thread takes part, workers spin briefly for the next region and then sleep. Splits partition
// the outputs and never depend on which thread runs a task, so results are the same bits for
// every thread count. Inside a region nothing may throw (arguments are checked before the
// fork) and nothing should allocate (scratch is sized per thread before it).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "attn/tensor.hpp"

namespace attn::detail {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run a region's tasks, the caller included.
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls task(t, slot) for every t in [0, count); returns once all have returned. slot, in
  // [0, min(count, threads())), names the per-thread scratch the call may use: each thread that
  // takes part gets one of its own, so a caller sizes min(count, threads()) scratch slots.
  // Runs inline, in order, with one thread, for a single task, or when called from inside a
  // region (no nesting).
  template <typename Task>
  void run(Index count, Task&& task) {
    if (count <= 0) return;
    if (threads() == 1 || count == 1 || inside_region_) {
      for (Index t = 0; t < count; ++t) task(t, 0);
      return;
    }
    // Task is a reference type when an lvalue is passed: the context points at the callable.
    using Callable = std::remove_reference_t<Task>;
    run_region(
        count, const_cast<void*>(static_cast<const void*>(&task)),
        [](void* context, Index t, int thread) { (*static_cast<Callable*>(context))(t, thread); });
  }

 private:
  using Trampoline = void (*)(void* context, Index task, int thread);
  void run_region(Index count, void* context, Trampoline call);
  void work();
  void claim_tasks();

  std::vector<std::thread> workers_;
  // The current region: published under mutex_ with a new generation, then opened; read by the
  // workers that join it while it is open. The caller closes it once every task is claimed and
  // waits only for the workers that joined, so a worker that was asleep or descheduled never
  // holds up a region it did not take part in.
  void* context_ = nullptr;
  Trampoline call_ = nullptr;
  Index count_ = 0;
  std::atomic<Index> next_{0};           // the next unclaimed task
  std::atomic<int> slots_{0};            // scratch slots handed out in the current region
  std::atomic<bool> open_{false};        // workers may join the current region
  std::atomic<int> joined_{0};           // workers inside (or entering) the current region
  std::atomic<uint64_t> generation_{0};  // bumped once per region
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  static thread_local bool inside_region_;
};

// The process's pool, with the thread count of set_threads (1 until then).
ThreadPool& thread_pool();

// A function each worker runs as it starts, before its first task: the wasm package puts its
// relaxed-SIMD loops in each thread's function table with it (cpp/bindings/kernel_table.cpp).
// Applies to workers started after the call (set it before set_threads); nullptr for none.
void set_worker_setup(void (*setup)());

}  // namespace attn::detail
