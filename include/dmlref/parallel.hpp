// dmlref: the engine's threads. A call large enough to gain is split into independent parts
// (disjoint output elements, each part moved in the order the one-thread loop moves it), and the
// parts run on a pool of worker threads plus the calling thread. Small calls stay on the calling
// thread, and no thread is started before the first large call, so a suite of tiny cases pays
// nothing. The standard library's threads only.
//
// The number of threads: dmlref::set_num_threads(n) where a program set it, else the environment's
// DMLREF_NUM_THREADS, else every hardware thread this process may run on.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define DMLREF_HAS_GETPID 1
#endif

#include "dmlref/error.hpp"

namespace dmlref {
namespace detail {

// At most this many threads: set_num_threads rejects more, DMLREF_NUM_THREADS is clamped to it.
inline constexpr std::uint32_t kMaxThreads = 256;

// A call moving fewer bytes than this runs on the calling thread: waking a sleeping worker costs
// a few microseconds, as long as copying tens of KiB. Each part moves at least kParallelPartBytes.
inline constexpr std::uint64_t kParallelMinBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kParallelPartBytes = std::uint64_t{256} << 10;

// The thresholds above, as the engine reads them: the thread tests lower them so that small
// random shapes are split too. Plain values, read without synchronisation: set them only while
// no operator runs (as allow_avx2).
inline std::uint64_t parallel_min_bytes = kParallelMinBytes;
inline std::uint64_t parallel_part_bytes = kParallelPartBytes;

// set_num_threads' value; 0 where the program has not set one.
inline std::atomic<std::uint32_t> requested_threads{0};

// The hardware threads this process may run on (its CPU affinity, so `taskset -c 0` means one).
inline std::uint32_t hardware_threads() noexcept {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return std::min(static_cast<std::uint32_t>(n), kMaxThreads);
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : std::min(static_cast<std::uint32_t>(n), kMaxThreads);
}

// DMLREF_NUM_THREADS as a count in [1, kMaxThreads], or 0 where it is unset, empty or not a
// positive decimal number (then the hardware's count applies).
inline std::uint32_t environment_threads() noexcept {
  const char* text = std::getenv("DMLREF_NUM_THREADS");
  if (text == nullptr || *text == '\0') return 0;
  std::uint64_t n = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return 0;
    n = std::min<std::uint64_t>(n * 10 + static_cast<std::uint64_t>(*c - '0'), kMaxThreads);
  }
  return static_cast<std::uint32_t>(n);
}

// The count used when set_num_threads has not chosen one, read once per process.
inline std::uint32_t default_threads() noexcept {
  static const std::uint32_t n = [] {
    const std::uint32_t from_environment = environment_threads();
    return from_environment != 0 ? from_environment : hardware_threads();
  }();
  return n;
}

// Set while a thread runs parts of a call: an engine call made from inside a part (a block of a
// JOIN copied whole, a slab of a SCATTER) runs on that thread, never waits on the pool it is in.
inline thread_local bool in_parallel_part = false;

// Runs part(context, i) for every i in [0, parts).
using PartFn = void (*)(const void* context, std::size_t part) noexcept;

// Worker threads, started the first time a call needs them and kept (asleep) for the next call;
// joined when the program ends. One call runs on the pool at a time: a call made while another
// thread's call has it runs on its own thread (same result, one thread's speed). A process
// forked after the workers started (Python's multiprocessing, for one) has none of them: there
// every call runs on the calling thread. A class template (ThreadPool is its one instance), so
// that a unit that runs nothing on it does not compile it.
template <class Deferred = void>
class BasicThreadPool {
 public:
  static BasicThreadPool& instance() {
    static BasicThreadPool pool;
    return pool;
  }
  BasicThreadPool() = default;
  BasicThreadPool(const BasicThreadPool&) = delete;
  BasicThreadPool& operator=(const BasicThreadPool&) = delete;
  ~BasicThreadPool() {
    if (forked()) {
      // The workers are the parent's: nothing to join, and std::thread would end the program.
      for (std::thread& t : workers_) new (&t) std::thread();
      return;
    }
    job_.fetch_or(kStop, std::memory_order_release);
    job_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // How many calls ran on more than one thread, and how many workers exist (for the tests).
  std::uint64_t calls() const noexcept { return calls_.load(std::memory_order_relaxed); }
  std::size_t workers() const noexcept { return started_.load(std::memory_order_relaxed); }

  // Every part of [0, parts), on the calling thread and up to `threads` - 1 workers, each taking
  // the next part not yet taken; returns when all are done.
  void run(std::size_t parts, std::uint32_t threads, PartFn part, const void* context) noexcept {
    std::size_t helpers = std::min<std::size_t>(threads - 1, parts - 1);
    if (helpers == 0 || forked() || busy_.test_and_set(std::memory_order_acquire)) {
      for (std::size_t i = 0; i < parts; ++i) part(context, i);
      return;
    }
    next_.store(0, std::memory_order_relaxed);
    helpers = start_workers(helpers);
    if (helpers != 0) {
      // The call's fields, then the word that announces it: a worker that reads the word (an
      // acquire) sees them.
      part_ = part;
      context_ = context;
      parts_ = parts;
      running_.store(helpers, std::memory_order_relaxed);
      calls_.fetch_add(1, std::memory_order_relaxed);
      const std::uint64_t generation =
          (job_.load(std::memory_order_relaxed) >> kGenerationShift) + 1;
      job_.store(generation << kGenerationShift | helpers, std::memory_order_release);
      job_.notify_all();
    }
    take_parts(part, context, parts);
    for (std::size_t r; (r = running_.load(std::memory_order_acquire)) != 0;) {
      running_.wait(r, std::memory_order_acquire);
    }
    busy_.clear(std::memory_order_release);
  }

 private:
  // job_: the generation of the latest call above kGenerationShift, kStop, and below it how many
  // workers that call asked for. One word, so a worker never pairs one call's count with
  // another's generation.
  static constexpr std::uint64_t kHelpersMask = 0xFFFF;
  static constexpr std::uint64_t kStop = std::uint64_t{1} << 16;
  static constexpr unsigned kGenerationShift = 17;

  // Whether this is a child process forked from the one that made the pool: its workers stayed
  // in the parent.
  bool forked() const noexcept {
#if defined(DMLREF_HAS_GETPID)
    return ::getpid() != pid_;
#else
    return false;
#endif
  }

  // Makes sure `wanted` workers exist; returns how many do (fewer where the system refuses more
  // threads: the call then runs on those it has). Only the call holding busy_ gets here.
  std::size_t start_workers(std::size_t wanted) noexcept {
    try {
      workers_.reserve(wanted);
      while (workers_.size() < wanted) {
        const std::size_t id = workers_.size();
        const std::uint64_t seen = job_.load(std::memory_order_relaxed) >> kGenerationShift;
        workers_.emplace_back([this, id, seen] { work(id, seen); });
        started_.store(workers_.size(), std::memory_order_relaxed);
      }
    } catch (...) {
      // std::system_error (no more threads) or bad_alloc: keep the workers already started.
    }
    return std::min(wanted, workers_.size());
  }

  void take_parts(PartFn part, const void* context, std::size_t parts) noexcept {
    const bool outer = in_parallel_part;
    in_parallel_part = true;
    for (std::size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < parts;) {
      part(context, i);
    }
    in_parallel_part = outer;
  }

  // A worker's loop: `seen` is the generation of the last call it knows of.
  void work(std::size_t id, std::uint64_t seen) noexcept {
    for (;;) {
      std::uint64_t job = job_.load(std::memory_order_acquire);
      while ((job & kStop) == 0 && job >> kGenerationShift == seen) {
        job_.wait(job, std::memory_order_acquire);
        job = job_.load(std::memory_order_acquire);
      }
      if ((job & kStop) != 0) return;
      seen = job >> kGenerationShift;
      if (id >= (job & kHelpersMask)) continue;  // this call asked for fewer workers
      // A worker counted in running_ reads the call's fields before the call can end.
      take_parts(part_, context_, parts_);
      if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) running_.notify_one();
    }
  }

  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;  // set by the call running on the pool
  std::atomic<std::uint64_t> job_{0};
  std::atomic<std::size_t> running_{0};  // workers still in the current call
  std::atomic<std::size_t> next_{0};     // the next part not yet taken
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::size_t> started_{0};
  std::vector<std::thread> workers_;  // changed only by the call holding busy_
  PartFn part_ = nullptr;
  const void* context_ = nullptr;
  std::size_t parts_ = 0;
#if defined(DMLREF_HAS_GETPID)
  const pid_t pid_ = ::getpid();
#endif
};
using ThreadPool = BasicThreadPool<>;

// The threads a call may use now: 1 inside a part (see in_parallel_part), else get_num_threads().
inline std::uint32_t threads_for_call() noexcept {
  if (in_parallel_part) return 1;
  const std::uint32_t requested = requested_threads.load(std::memory_order_relaxed);
  return requested != 0 ? requested : default_threads();
}

// How many parts a call moving `bytes` bytes in `items` independent items splits into: 1 (the
// calling thread alone) for small calls, else up to four per thread (so a thread slowed down by
// other work on its core leaves its later parts to the others), each at least
// parallel_part_bytes.
inline std::size_t parallel_parts(std::uint64_t bytes, std::uint64_t items) noexcept {
  if (bytes < parallel_min_bytes || items < 2) return 1;
  const std::uint32_t threads = threads_for_call();
  if (threads <= 1) return 1;
  const std::uint64_t by_size = std::max<std::uint64_t>(1, bytes / std::max<std::uint64_t>(
                                                                    parallel_part_bytes, 1));
  return static_cast<std::size_t>(std::min({by_size, items, std::uint64_t{threads} * 4}));
}

// Calls f(begin, end) over `parts` (from parallel_parts) consecutive, near-equal ranges that
// cover [0, items), on the pool; f must not throw. With one part, f(0, items) on this thread.
template <class F>
void parallel_ranges(std::size_t parts, std::uint64_t items, F&& f) {
  if (parts <= 1) {
    f(std::uint64_t{0}, items);
    return;
  }
  struct Context {
    std::remove_reference_t<F>* f;
    std::uint64_t items;
    std::size_t parts;
  } context{&f, items, parts};
  const PartFn run_part = [](const void* c, std::size_t i) noexcept {
    const Context& ctx = *static_cast<const Context*>(c);
    // The first items % parts ranges one item longer: no product that could overflow.
    const std::uint64_t size = ctx.items / ctx.parts, longer = ctx.items % ctx.parts;
    const std::uint64_t begin = size * i + std::min<std::uint64_t>(i, longer);
    const std::uint64_t end = begin + size + (i < longer ? 1 : 0);
    if (begin < end) (*ctx.f)(begin, end);
  };
  ThreadPool::instance().run(parts, threads_for_call(), run_part, &context);
}

}  // namespace detail

// The number of threads dmlref's operators use for calls large enough to gain from more than
// one (small calls always run on the calling thread). 0 returns to the default:
// DMLREF_NUM_THREADS from the environment, else every hardware thread the process may run on.
// Results never depend on it: every count gives the one-thread result, bit for bit.
inline void set_num_threads(std::uint32_t n) {
  if (n > detail::kMaxThreads) {
    detail::fail(ErrorCode::InvalidOption, "set_num_threads: n is ", n,
                 " but it must be 0 (the default) to ", detail::kMaxThreads);
  }
  detail::requested_threads.store(n, std::memory_order_relaxed);
}

// The number of threads large calls use now (set_num_threads's, or the default).
inline std::uint32_t get_num_threads() noexcept {
  const std::uint32_t requested = detail::requested_threads.load(std::memory_order_relaxed);
  return requested != 0 ? requested : detail::default_threads();
}

}  // namespace dmlref
