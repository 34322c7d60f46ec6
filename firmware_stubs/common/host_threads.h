// Host threads for the functional work of one instruction (SPEC §13
// `--threads N`). Pure C++ (no SystemC).
//
// What may run on them: only pure arithmetic on buffers the kernel owns for
// the step. Every timed memory access (KernelContext::read / write / direct,
// MemPort behind them) stays on the calling (SystemC) thread, in the order
// the kernel issues it, so the simulated time, the counters and every trace
// are the same for any thread count; and the work is split so that each
// output element is computed by one thread by the same operations as with
// one thread, so every output byte is the same too.
//
// One process-wide pool: set_host_threads() is the setting the platform sets
// (--threads, Python threads=); the default is every core the host has. The
// workers start on first use and wait on a condition variable between jobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tpb::fw {

// The number of host threads (the caller included) functional work may be
// split over; 0 restores the default, std::thread::hardware_concurrency()
// (1 when unknown). Waits for a split in progress to end.
void set_host_threads(unsigned n);
unsigned host_threads();
unsigned default_host_threads();

// parallel_for calls so far (process-wide) that were cut into more than one
// chunk: tests check with it that a split happened.
std::uint64_t split_jobs();

namespace detail {
using ChunkFn = void (*)(void* fn, std::size_t begin, std::size_t end);
// Runs fn on `chunks` contiguous chunks of [0, n) over the pool.
void run_chunks(std::size_t n, std::size_t chunks, ChunkFn call, void* fn);
}  // namespace detail

// How many chunks parallel_for splits n items into: each of at least
// min_chunk items (1 when n < 2 x min_chunk), at most kChunksPerThread x
// host_threads() (threads take chunks as they come free, so a thread that
// the host preempts delays at most one small chunk), and 1 with one thread.
inline constexpr std::size_t kChunksPerThread = 4;
std::size_t split_count(std::size_t n, std::size_t min_chunk);

// Runs fn(begin, end) over [0, n) cut into split_count(n, min_chunk)
// contiguous chunks (chunk i = [n i / c, n (i+1) / c)), on the pool's
// threads and the calling one, and returns when every chunk is done. With one
// chunk it is a plain call of fn(0, n) on the calling thread, with no
// synchronisation at all. The first exception a chunk throws is rethrown
// here once every chunk has ended. A parallel_for inside a chunk, or while
// another thread's is running, runs its chunks on its own thread.
template <typename Fn>
void parallel_for(std::size_t n, std::size_t min_chunk, Fn&& fn) {
  const std::size_t chunks = split_count(n, min_chunk);
  if (chunks <= 1) {
    if (n != 0) fn(std::size_t{0}, n);
    return;
  }
  using F = std::remove_reference_t<Fn>;
  detail::run_chunks(
      n, chunks, [](void* f, std::size_t b, std::size_t e) { (*static_cast<F*>(f))(b, e); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace tpb::fw
