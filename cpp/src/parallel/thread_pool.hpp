#pragma once
// The core's one thread pool: created when the thread count is set (attn/threads.hpp), never per
// call. A parallel region hands out tasks 0 .. count - 1 from a shared counter; the calling
// thread takes part, workers spin briefly for the next region and then sleep (at once while the
// cores are contended: thread_pool.cpp). Splits partition
// the outputs and never depend on which thread runs a task, so results are the same bits for
// every thread count. Inside a region nothing may throw (arguments are checked before the
// fork) and nothing should allocate (scratch is sized per thread before it).
//
// Any number of threads may call the core at once. The pool runs one region at a time: a caller
// that finds it running another caller's region runs its own tasks on its own thread, in order,
// instead of waiting (pthreadpool waits, holding a mutex across the call). Its results are the
// same bits either way, and it makes progress at once, where waiting would leave its core idle
// for as long as the other caller's whole region.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "attn/tensor.hpp"
#include "pool_trace.hpp"

namespace attn::detail {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  // A simulated pool (pool_trace.hpp): threads() says `threads`, every region runs on the caller
  // and is recorded into `trace`.
  ThreadPool(int threads, PoolTrace* trace);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run a region's tasks, the caller included.
  int threads() const {
    return trace_ ? simulated_threads_ : static_cast<int>(workers_.size()) + 1;
  }
  bool simulated() const { return trace_ != nullptr; }

  // Whether other work was seen keeping the cores busy lately (thread_pool.cpp says how and for
  // how long): split.hpp then splits only regions long enough to ride out a lost core. A worker
  // that wakes late notes it; note_contention() does the same now (for tests).
  bool contended() const { return contended(Clock::now()); }
  void note_contention() { note_contention(Clock::now()); }

  // Calls task(t, slot) for every t in [0, count); returns once all have returned. slot, in
  // [0, min(count, threads())), names the per-thread scratch the call may use: each thread that
  // takes part gets one of its own, so a caller sizes min(count, threads()) scratch slots.
  // Runs inline, in order, with one thread, for a single task, when called from inside a region
  // (no nesting), or while another thread's region holds the pool.
  template <typename Task>
  void run(Index count, Task&& task) {
    if (count <= 0) return;
    if (trace_ && count > 1 && !inside_region_) {
      run_traced(count, task);
      return;
    }
    if (threads() == 1 || count == 1 || inside_region_) {
      for (Index t = 0; t < count; ++t) task(t, 0);
      return;
    }
    std::unique_lock<std::mutex> region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) {
      for (Index t = 0; t < count; ++t) task(t, 0);
      return;
    }
    // Task is a reference type when an lvalue is passed: the context points at the callable.
    using Callable = std::remove_reference_t<Task>;
    run_region(count, const_cast<void*>(static_cast<const void*>(&task)),
               [](void* context, Index t, int thread) noexcept {
                 (*static_cast<Callable*>(context))(t, thread);
               });
  }

 private:
  using Clock = std::chrono::steady_clock;
  // Tasks do not throw (see above); a throw would end the process here rather than leave a
  // region that never completes.
  using Trampoline = void (*)(void* context, Index task, int thread) noexcept;
  // One cache line: each atomic the threads write in a region has its own, so a worker claiming
  // tasks does not invalidate the line the idle workers spin on.
  static constexpr size_t kCacheLine = 64;
  void run_region(Index count, void* context, Trampoline call);

  // A simulated pool's region: the tasks in order on the caller, each timed.
  template <typename Task>
  void run_traced(Index count, Task& task) {
    std::vector<double>& times = trace_->regions.emplace_back();
    times.reserve(static_cast<size_t>(count));
    inside_region_ = true;
    for (Index t = 0; t < count; ++t) {
      const auto start = Clock::now();
      task(t, 0);
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    inside_region_ = false;
  }
  void work();
  void claim_tasks();
  // Whether the cores were seen contended lately (thread_pool.cpp says how and for how long),
  // and noting that they are: nobody spins meanwhile.
  bool contended(Clock::time_point now) const;
  void note_contention(Clock::time_point now);
  // Spins until done() or about a millisecond has passed (at once when contended); returns
  // done().
  template <typename Done>
  bool spin_until(Done done);

  std::vector<std::thread> workers_;
  // The current region: published under mutex_ with a new generation, then opened; read by the
  // workers that join it while it is open. The caller closes it once every task is claimed and
  // waits only for the workers that joined, so a worker that was asleep or descheduled never
  // holds up a region it did not take part in.
  void* context_ = nullptr;
  Trampoline call_ = nullptr;
  Index count_ = 0;
  alignas(kCacheLine) std::atomic<Index> next_{0};           // the next unclaimed task
  alignas(kCacheLine) std::atomic<int> slots_{0};            // scratch slots handed out
  alignas(kCacheLine) std::atomic<int> joined_{0};           // workers inside (or entering)
  alignas(kCacheLine) std::atomic<bool> open_{false};        // workers may join the region
  alignas(kCacheLine) std::atomic<uint64_t> generation_{0};  // bumped once per region
  std::atomic<bool> stopping_{false};
  std::atomic<bool> caller_waits_{false};  // the caller sleeps on left_ until joined_ is 0
  // When the region was published, and until when the cores count as contended, in ticks of
  // Clock: written once per region, read once per join or spin check.
  std::atomic<Clock::rep> published_at_{0};
  std::atomic<Clock::rep> calm_at_{0};
  std::mutex region_mutex_;  // held by the thread whose region runs
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable left_;
  PoolTrace* trace_ = nullptr;  // set in a simulated pool only
  int simulated_threads_ = 1;
  static thread_local bool inside_region_;
};

// The process's pool, with the thread count of set_threads (1 until then).
ThreadPool& thread_pool();

// A function each worker runs as it starts, before its first task: the wasm package puts its
// relaxed-SIMD loops in each thread's function table with it (cpp/bindings/relaxed_kernels.cpp).
// Applies to workers started after the call (set it before set_threads); nullptr for none.
void set_worker_setup(void (*setup)());

}  // namespace attn::detail
