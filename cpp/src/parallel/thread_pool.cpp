#include "thread_pool.hpp"

#include <memory>
#include <stdexcept>
#include <string>

#include "attn/threads.hpp"

namespace attn::detail {

namespace {

// Spins before a worker sleeps: long enough to catch the next region of a run of calls (the
// layers of a model, the steps of a decoder), short against a sleep's wake-up cost.
constexpr int kSpins = 1 << 16;

std::mutex pool_mutex;
std::unique_ptr<ThreadPool> pool;

}  // namespace

thread_local bool ThreadPool::inside_region_ = false;

ThreadPool::ThreadPool(int threads) {
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
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

void ThreadPool::run_region(Index count, void* context, Trampoline call) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    context_ = context;
    call_ = call;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    slots_.store(0, std::memory_order_relaxed);
    busy_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  claim_tasks();
  // The region ends when every worker has left it: their writes are then visible here.
  while (busy_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    // Spin for the next region, then sleep until one is published.
    for (int spin = 0; spin < kSpins && generation_.load(std::memory_order_acquire) == seen;
         ++spin) {
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);  // pairs with the publishing lock
      seen = generation_.load(std::memory_order_acquire);
      if (stopping_) return;
    }
    claim_tasks();
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

ThreadPool& thread_pool() {
  std::lock_guard<std::mutex> lock(pool_mutex);
  if (!pool) pool = std::make_unique<ThreadPool>(1);
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
  if (detail::pool && detail::pool->threads() == threads) return;
  detail::pool.reset();  // joins the old workers first
  detail::pool = std::make_unique<detail::ThreadPool>(threads);
}

int threads() { return detail::thread_pool().threads(); }

}  // namespace attn
