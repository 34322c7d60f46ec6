// A tap on a memory target (PartitionedMemory::add_observer): records the
// timed writes that land in an address window, word by word, so a harness can
// hand the model's output stream to the scoreboard or compare two runs.
// Attaching a tap turns DMI off for that target (every access is seen).
#pragma once

#include <cstdint>
#include <vector>

#include "models/sc/memory/partitioned_memory.h"

namespace tpb::cosim {

struct TappedWrite {
  std::uint64_t time_ps;
  std::uint64_t addr;  // target-local byte address of the word
  std::uint32_t word;
};

class MemoryTap {
 public:
  // Taps timed writes to [lo, hi] (target-local, inclusive) of `mem`;
  // debug (backdoor) writes are not recorded.
  MemoryTap(sc::PartitionedMemory& mem, std::uint64_t lo, std::uint64_t hi);
  const std::vector<TappedWrite>& writes() const { return writes_; }
  std::uint64_t ops_seen() const { return ops_; }

 private:
  void on_op(const sc::MemOp& op);
  std::uint64_t lo_, hi_;
  std::uint64_t ops_ = 0;
  std::vector<TappedWrite> writes_;
};

}  // namespace tpb::cosim
