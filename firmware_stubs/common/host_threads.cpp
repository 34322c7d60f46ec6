#include "firmware_stubs/common/host_threads.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tpb::fw {

namespace {

// One parallel_for: lives on the caller's stack until every thread that took
// it has let it go.
struct Job {
  std::size_t n = 0, chunks = 0;
  detail::ChunkFn call = nullptr;
  void* fn = nullptr;
  std::atomic<std::size_t> next{0};       // the next chunk to take
  std::atomic<std::size_t> remaining{0};  // chunks not finished
  std::exception_ptr error;               // the first, guarded by Pool::m_
};

// Set while a thread runs chunks: a parallel_for inside one runs inline.
thread_local bool in_chunk = false;

class Pool {
 public:
  ~Pool() { stop_workers(); }

  // Runs every chunk of job; false when the pool is busy (another thread's
  // parallel_for): the caller then runs them itself.
  bool run(Job& job, unsigned threads) {
    std::unique_lock<std::mutex> submit(submit_, std::try_to_lock);
    if (!submit.owns_lock()) return false;
    if (workers_.size() != threads - 1) {  // first use, or a new setting
      stop_workers();
      start_workers(threads - 1);
    }
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    drain(job);
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [&] { return job.remaining.load() == 0 && active_ == 0; });
    job_ = nullptr;  // no worker takes it from here on
    return true;
  }

  // Waits for a parallel_for in progress, then lets the workers go (they
  // restart on the next use with the new count).
  void resize() {
    std::lock_guard<std::mutex> submit(submit_);
    stop_workers();
  }

  void drain(Job& job) {
    const bool outer = in_chunk;
    in_chunk = true;
    for (;;) {
      const std::size_t i = job.next.fetch_add(1);
      if (i >= job.chunks) break;
      try {
        job.call(job.fn, job.n * i / job.chunks, job.n * (i + 1) / job.chunks);
      } catch (...) {
        std::lock_guard<std::mutex> lk(m_);
        if (!job.error) job.error = std::current_exception();
      }
      job.remaining.fetch_sub(1);
    }
    in_chunk = outer;
  }

 private:
  void start_workers(unsigned count) {
    std::uint64_t now;
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = false;
      now = generation_;
    }
    // A worker takes every job posted after `now`, however late it starts.
    for (unsigned i = 0; i < count; ++i) workers_.emplace_back([this, now] { worker(now); });
  }
  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }
  void worker(std::uint64_t seen) {
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      wake_.wait(lk, [&] { return stop_ || (job_ != nullptr && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      Job* job = job_;
      ++active_;
      lk.unlock();
      drain(*job);
      lk.lock();
      if (--active_ == 0) done_.notify_all();
    }
  }

  std::mutex submit_;  // one parallel_for at a time
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job* job_ = nullptr;            // guarded by m_
  std::uint64_t generation_ = 0;  // guarded by m_
  unsigned active_ = 0;           // workers holding job_, guarded by m_
  bool stop_ = false;             // guarded by m_
};

std::atomic<unsigned> configured{0};  // 0: the default
std::atomic<std::uint64_t> splits{0};
std::atomic<Pool*> the_pool{nullptr};
std::once_flag pool_once;

// A forked child has only the forking thread: it gets a fresh pool (the
// parent's, whose workers do not exist here, is abandoned).
void after_fork_in_child() { the_pool.store(new Pool); }

Pool& pool() {
  std::call_once(pool_once, [] {
    the_pool.store(new Pool);  // never deleted: workers may outlive static destructors
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
  });
  return *the_pool.load();
}

}  // namespace

// Asked once: glibc reads /sys/devices/system/cpu/online on every call, and
// split_count() asks for every kernel step.
unsigned default_host_threads() {
  static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

unsigned host_threads() {
  const unsigned n = configured.load(std::memory_order_relaxed);
  return n == 0 ? default_host_threads() : n;
}

void set_host_threads(unsigned n) {
  configured.store(n, std::memory_order_relaxed);
  pool().resize();
}

std::uint64_t split_jobs() { return splits.load(); }

std::size_t split_count(std::size_t n, std::size_t min_chunk) {
  const std::size_t threads = host_threads();
  if (threads <= 1) return 1;
  const std::size_t by_size = n / std::max<std::size_t>(1, min_chunk);
  return std::max<std::size_t>(1, std::min<std::size_t>(kChunksPerThread * threads, by_size));
}

namespace detail {

void run_chunks(std::size_t n, std::size_t chunks, ChunkFn call, void* fn) {
  splits.fetch_add(1);
  Job job;
  job.n = n;
  job.chunks = chunks;
  job.call = call;
  job.fn = fn;
  job.remaining = chunks;
  Pool& p = pool();
  const unsigned threads = host_threads();  // workers: threads - 1, whatever the chunks
  if (in_chunk || threads <= 1 || !p.run(job, threads)) p.drain(job);  // inline
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace detail

}  // namespace tpb::fw
