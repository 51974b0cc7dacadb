#include "thread_pool.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "attn/threads.hpp"

namespace attn::detail {

namespace {

// A worker spins for the next region about a millisecond before it sleeps: long enough to catch
// the next region of a run of calls (the layers of a model, the steps of a decoder, and in wasm
// the JS wrapper's copies between two calls, over 100 us at n = 1024); pthreadpool spins too.
// The spin is timed, not counted, because one spin's cost varies tenfold between processors
// (x86's pause takes 10 to 140 cycles) and engines; the clock is read every kSpinsPerCheck.
//
// Under ThreadSanitizer a worker sleeps after a few spins instead: the runtime records every
// atomic load, and LLVM 14's stalls every thread, for minutes, while a full trace is switched
// (google/sanitizers#1552); a millisecond of loads per idle worker per region fills traces fast.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ATTN_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(ATTN_THREAD_SANITIZER)
constexpr int kMaxSpins = 1 << 8;
#else
constexpr int kMaxSpins = 1 << 24;  // a bound for a clock that stood still
#endif
constexpr int kSpinsPerCheck = 64;
constexpr auto kSpinTime = std::chrono::microseconds(1000);

// Contention: more runnable threads than cores, because other work keeps the cores busy or
// because the pool has more threads than the machine has cores (WebKit rounds the core count
// up for privacy: 4 on 2 cores). A thread then waits for a core after it is woken, or loses it in
// the middle of a spin, for a scheduler's time slice: milliseconds, past kLate, where a spin's
// clock checks are microseconds apart and a futex wakes a sleeping thread within tens to
// hundreds of them. Every spin then takes a core from a thread that has work: so for kCalm
// after the last sign of it, nobody spins, and short regions stay on their caller (split.hpp).
// Waiting threads sleep at once, which leaves the cores to the threads with tasks, and a worker
// that wakes late finds its region closed and stays out: the caller and the workers that did get a
// core share the tasks. (Measured on 2 cores, docs/threads.md: 4 threads ran the backward at 0.68
// of one thread's speed, 0.95 so.)
constexpr auto kLate = std::chrono::milliseconds(1);
constexpr auto kCalm = std::chrono::milliseconds(50);

// One spin: tells the processor this is a wait loop (it yields the core's resources to its
// sibling hyper-thread, and saves power); wasm has no such instruction.
inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::mutex pool_mutex;
std::unique_ptr<ThreadPool> pool;
// The pool for thread_pool() without a lock: every matrix product asks for it.
std::atomic<ThreadPool*> current_pool{nullptr};
std::atomic<void (*)()> worker_setup{nullptr};

// Installs `next` as the process's pool; the old one's workers are joined first.
void replace_pool(std::unique_ptr<ThreadPool> next) {
  current_pool.store(nullptr);
  pool.reset();
  pool = std::move(next);
  current_pool.store(pool.get(), std::memory_order_release);
}

}  // namespace

thread_local bool ThreadPool::inside_region_ = false;

bool ThreadPool::contended(Clock::time_point now) const {
  return now.time_since_epoch().count() < calm_at_.load(std::memory_order_relaxed);
}

void ThreadPool::note_contention(Clock::time_point now) {
  calm_at_.store((now + kCalm).time_since_epoch().count(), std::memory_order_relaxed);
}

template <typename Done>
bool ThreadPool::spin_until(Done done) {
  auto last = Clock::now();
  if (contended(last)) return done();
  const auto until = last + kSpinTime;
  for (int spin = 1; spin <= kMaxSpins; ++spin) {
    if (done()) return true;
    pause();
    if (spin % kSpinsPerCheck == 0) {
      const auto now = Clock::now();
      if (now - last > kLate) note_contention(now);  // this thread lost its core mid-spin
      if (now >= until || contended(now)) break;
      last = now;
    }
  }
  return done();
}

ThreadPool::ThreadPool(int threads) {
  workers_.reserve(static_cast<size_t>(threads - 1));
  void (*setup)() = worker_setup.load();
  for (int t = 1; t < threads; ++t) {
    workers_.emplace_back([this, setup] {
      if (setup) setup();
      work();
    });
  }
}

ThreadPool::ThreadPool(int threads, PoolTrace* trace)
    : trace_(trace), simulated_threads_(threads) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::claim_tasks() {
  inside_region_ = true;
  int slot = -1;  // taken with the first task: only threads that get work use a slot
  for (Index t = next_.fetch_add(1, std::memory_order_relaxed); t < count_;
       t = next_.fetch_add(1, std::memory_order_relaxed)) {
    if (slot < 0) slot = slots_.fetch_add(1, std::memory_order_relaxed);
    call_(context_, t, slot);
  }
  inside_region_ = false;
}

// open_ and joined_ are sequentially consistent: a worker increments joined_ and then reads
// open_, the caller clears open_ and then reads joined_, so either the caller sees the worker
// and waits for it, or the worker sees the region closed and stays out.
void ThreadPool::run_region(Index count, void* context, Trampoline call) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    context_ = context;
    call_ = call;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    slots_.store(0, std::memory_order_relaxed);
    published_at_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    open_.store(true);
  }
  wake_.notify_all();
  claim_tasks();
  // Every task is claimed; the tasks of the workers that joined end when they leave. The caller
  // waits as a worker does: spinning first (the last tasks are usually short), then sleeping.
  open_.store(false);
  const auto left = [this] { return joined_.load() == 0; };
  if (!spin_until(left)) {
    // The last worker out wakes the caller when it sees caller_waits_ (both sequentially
    // consistent, as open_ and joined_ above); it notifies under the mutex, so not between the
    // caller's test of left() and its wait.
    std::unique_lock<std::mutex> lock(mutex_);
    caller_waits_.store(true);
    left_.wait(lock, left);
    caller_waits_.store(false);
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    // Spin for the next region, then sleep until one is published.
    const auto published_one = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(published_one)) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, published_one);
    }
    if (stopping_.load()) return;
    const uint64_t published = generation_.load(std::memory_order_acquire);
    // Woken, then kept from a core: noted whether or not the region is still open, since its
    // caller may have run every task meanwhile (then nobody else would see the contention).
    const auto now = Clock::now();
    const Clock::time_point published_at{
        Clock::duration(published_at_.load(std::memory_order_relaxed))};
    if (now - published_at > kLate) note_contention(now);
    joined_.fetch_add(1);
    if (open_.load()) {
      // The open region is the latest: the next cannot be published while this thread is in.
      seen = generation_.load(std::memory_order_acquire);
      claim_tasks();
    } else {
      seen = published;  // closed before this thread came: nothing left to do in it
    }
    if (joined_.fetch_sub(1) == 1 && caller_waits_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      left_.notify_one();
    }
  }
}

void set_worker_setup(void (*setup)()) { worker_setup.store(setup); }

void simulate_threads(int threads, PoolTrace* trace) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  replace_pool(std::make_unique<ThreadPool>(threads, trace));
}

ThreadPool& thread_pool() {
  if (ThreadPool* current = current_pool.load(std::memory_order_acquire)) return *current;
  std::lock_guard<std::mutex> lock(pool_mutex);
  if (!pool) {
    pool = std::make_unique<ThreadPool>(1);
    current_pool.store(pool.get(), std::memory_order_release);
  }
  return *pool;
}

}  // namespace attn::detail

namespace attn {

void set_threads(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("threads: expected an integer >= 1, got " +
                                std::to_string(threads));
  }
  std::lock_guard<std::mutex> lock(detail::pool_mutex);
  if (detail::pool && !detail::pool->simulated() && detail::pool->threads() == threads) return;
  detail::replace_pool(std::make_unique<detail::ThreadPool>(threads));
}

int threads() { return detail::thread_pool().threads(); }

}  // namespace attn
