// Zeroed storage for a memory-like target (a memory, an instruction queue):
// bytes that read as zero until written, paid for only where they are
// touched.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>

#include "models/isa/sanitizer.h"

namespace tpb::sc {

// Storage of zero bytes from an anonymous mapping: pages the target never
// touches stay unmapped, so a memory or a queue costs resident memory (and
// start-up time) only for what a run uses. calloc promises that only above
// glibc's mmap threshold, which rises to the size of any large block freed
// before (a program file read whole, say): below it calloc zeroes every byte.
// Under AddressSanitizer, calloc: its red zones then guard the storage.
struct ZeroedStorageDeleter {
  std::size_t bytes = 0;
  void operator()(std::uint8_t* p) const {
#if TPB_ADDRESS_SANITIZER
    std::free(p);
#else
    if (p) ::munmap(p, bytes);
#endif
  }
};
using ZeroedStorage = std::unique_ptr<std::uint8_t, ZeroedStorageDeleter>;

// The host has no memory or address space left for storage a run needs
// (an HBM chunk first touched in the middle of a run, under `ulimit -v`):
// the run ends at that point with this message (docs/BAD_INPUT.md), never
// an abort.
class HostSpaceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
inline ZeroedStorage zeroed_storage(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
#if TPB_ADDRESS_SANITIZER
  void* p = std::calloc(bytes, 1);
  if (!p) throw std::bad_alloc();
#else
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#endif
  return ZeroedStorage(static_cast<std::uint8_t*>(p), ZeroedStorageDeleter{bytes});
}

}  // namespace tpb::sc
