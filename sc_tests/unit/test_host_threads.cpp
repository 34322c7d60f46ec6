// The host-thread pool of the kernels' arithmetic
// (firmware_stubs/common/host_threads.h): how work is cut, that every index
// runs once, on which threads, exceptions, nesting, concurrent callers,
// resizing and fork. Runs under ThreadSanitizer too (make tsan).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "firmware_stubs/common/host_threads.h"

namespace {

using tpb::fw::parallel_for;
using tpb::fw::set_host_threads;
using tpb::fw::split_count;

// Sets the thread count for one scope, then restores the default.
struct Threads {
  explicit Threads(unsigned n) { set_host_threads(n); }
  ~Threads() { set_host_threads(0); }
};

}  // namespace

TEST(HostThreads, DefaultIsEveryCoreAndZeroRestoresIt) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(tpb::fw::default_host_threads(), hw);
  {
    Threads t(3);
    EXPECT_EQ(tpb::fw::host_threads(), 3u);
  }
  EXPECT_EQ(tpb::fw::host_threads(), hw);
}

TEST(HostThreads, SplitCountIsBoundedByThreadsAndTheMinimumChunk) {
  Threads t(3);
  EXPECT_EQ(split_count(0, 1), 1u);
  EXPECT_EQ(split_count(1, 1), 1u);
  EXPECT_EQ(split_count(2, 1), 2u);
  EXPECT_EQ(split_count(10, 1), 10u);
  EXPECT_EQ(split_count(100, 1), 12u);  // at most 4 chunks per thread
  EXPECT_EQ(split_count(10, 4), 2u);    // 10 / 4 = 2 chunks of at least 4
  EXPECT_EQ(split_count(10, 6), 1u);    // fewer than 2 x 6 items: no split
  EXPECT_EQ(split_count(100, 0), 12u);  // a zero minimum counts as 1
  set_host_threads(1);
  EXPECT_EQ(split_count(1000000, 1), 1u);
}

// Every index exactly once, in the chunks [n i / c, n (i+1) / c), for
// several thread counts and sizes.
TEST(HostThreads, EveryIndexOnceInTheDocumentedChunks) {
  for (unsigned threads : {1u, 2u, 3u, 5u}) {
    Threads t(threads);
    for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 64u, 1001u}) {
      std::vector<std::atomic<int>> hits(n);
      std::mutex m;
      std::set<std::pair<std::size_t, std::size_t>> chunks;
      parallel_for(n, 1, [&](std::size_t b, std::size_t e) {
        {
          std::lock_guard<std::mutex> lk(m);
          chunks.insert({b, e});
        }
        for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
      const std::size_t c = split_count(n, 1);
      std::set<std::pair<std::size_t, std::size_t>> want;
      for (std::size_t i = 0; n != 0 && i < c; ++i) want.insert({n * i / c, n * (i + 1) / c});
      EXPECT_EQ(chunks, want) << "threads " << threads << " n " << n;
    }
  }
}

// One chunk: a plain call on the calling thread, no split counted.
TEST(HostThreads, OneChunkRunsOnTheCallerWithoutASplit) {
  Threads t(4);
  const std::uint64_t before = tpb::fw::split_jobs();
  std::thread::id ran;
  parallel_for(100, 80, [&](std::size_t b, std::size_t e) {
    EXPECT_EQ(b, 0u);
    EXPECT_EQ(e, 100u);
    ran = std::this_thread::get_id();
  });
  EXPECT_EQ(ran, std::this_thread::get_id());
  EXPECT_EQ(tpb::fw::split_jobs(), before);
}

// A split runs on more than one thread: every chunk waits (up to 10 s) until
// a second thread has entered one.
TEST(HostThreads, ASplitRunsOnSeveralThreads) {
  Threads t(3);
  const std::uint64_t before = tpb::fw::split_jobs();
  std::mutex m;
  std::condition_variable cv;
  std::set<std::thread::id> ids;
  parallel_for(3, 1, [&](std::size_t, std::size_t) {
    std::unique_lock<std::mutex> lk(m);
    ids.insert(std::this_thread::get_id());
    cv.notify_all();
    cv.wait_for(lk, std::chrono::seconds(10), [&] { return ids.size() >= 2; });
  });
  EXPECT_GE(ids.size(), 2u);
  EXPECT_EQ(tpb::fw::split_jobs(), before + 1);
}

// The first exception is rethrown once every chunk has ended; the other
// chunks still ran.
TEST(HostThreads, AnExceptionReachesTheCallerAfterEveryChunk) {
  Threads t(3);
  std::atomic<int> ran{0};
  try {
    parallel_for(6, 2, [&](std::size_t b, std::size_t) {
      ran.fetch_add(1);
      if (b == 2) throw std::runtime_error("chunk at 2");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk at 2");
  }
  EXPECT_EQ(ran.load(), 3);  // 3 chunks of 2
  // The pool still works.
  std::atomic<int> sum{0};
  parallel_for(10, 1, [&](std::size_t b, std::size_t e) { sum += int(e - b); });
  EXPECT_EQ(sum.load(), 10);
}

// A parallel_for inside a chunk runs its chunks on that chunk's thread.
TEST(HostThreads, NestedSplitsRunInline) {
  Threads t(3);
  std::atomic<int> total{0}, foreign{0};
  parallel_for(3, 1, [&](std::size_t, std::size_t) {
    const std::thread::id outer = std::this_thread::get_id();
    parallel_for(4, 1, [&](std::size_t b, std::size_t e) {
      if (std::this_thread::get_id() != outer) foreign.fetch_add(1);
      total += int(e - b);
    });
  });
  EXPECT_EQ(total.load(), 12);
  EXPECT_EQ(foreign.load(), 0);
}

// Two threads splitting at once: both get every index (one of them may run
// inline while the other holds the pool).
TEST(HostThreads, ConcurrentCallersBothComplete) {
  Threads t(3);
  auto worker = [](std::uint64_t seed, std::uint64_t& out) {
    std::uint64_t total = 0;
    for (int rep = 0; rep < 200; ++rep) {
      std::vector<std::uint64_t> v(257);
      parallel_for(v.size(), 8, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) v[i] = seed * i + rep;
      });
      for (std::uint64_t x : v) total += x;
    }
    out = total;
  };
  std::uint64_t a = 0, b = 0;
  std::thread ta(worker, 3, std::ref(a)), tb(worker, 5, std::ref(b));
  ta.join();
  tb.join();
  // sum over rep < 200, i < 257 of seed i + rep = seed x 200 x 32896 + 257 x 19900
  EXPECT_EQ(a, 3ull * 200 * 32896 + 257ull * 19900);
  EXPECT_EQ(b, 5ull * 200 * 32896 + 257ull * 19900);
}

// Changing the count between splits (workers stop and restart).
TEST(HostThreads, ResizingBetweenSplits) {
  for (unsigned n : {2u, 4u, 1u, 3u, 2u}) {
    Threads t(n);
    std::atomic<std::size_t> sum{0};
    parallel_for(1000, 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) sum += i;
    });
    EXPECT_EQ(sum.load(), 499500u) << n;
  }
}

// ThreadSanitizer does not follow threads started after a multi-threaded
// fork: not under TSan.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TPB_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TPB_UNDER_TSAN 1
#endif
#if !defined(TPB_UNDER_TSAN)
// A child forked after the pool started (the benchmarks fork per iteration)
// gets a working pool of its own.
TEST(HostThreads, AForkedChildSplitsToo) {
  Threads t(3);
  std::atomic<int> warm{0};
  parallel_for(3, 1, [&](std::size_t b, std::size_t e) { warm += int(e - b); });
  ASSERT_EQ(warm.load(), 3);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::atomic<std::size_t> sum{0};
    parallel_for(1000, 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) sum += i;
    });
    ::_exit(sum.load() == 499500u ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}
#endif
