// An engine's instruction fetch (SPEC §7, §9): the DMA that refills the
// ring of the engine's InstructionQueue as the sequencer consumes it. After
// each fetch the slots freed are refilled in batches (TimingConfig::fetch:
// batch size, bandwidth, latency), one batch behind the other; an
// instruction whose word has not landed yet is a wait. Programs that fit the
// ring are loaded before the start and never wait.
#pragma once

#include <cstdint>
#include <deque>

#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/instruction_queue.h"

namespace tpb::sc {

class InstructionFetch {
 public:
  InstructionFetch() = default;
  // A new run on `queue` (attached already) under `fetch`'s timing.
  void reset(InstructionQueue& queue, const timing::TimingConfig::Fetch& fetch);
  // When instruction `index` has landed in the ring, at or after now_ps.
  std::uint64_t ready_at(std::uint64_t index, std::uint64_t now_ps);
  // After instruction `index` was fetched at now_ps: issues the refill of
  // the slots it freed once a whole batch is free.
  void fetched(std::uint64_t index, std::uint64_t now_ps);

 private:
  struct Batch {
    std::uint64_t start, end;  // words [start, end)
    std::uint64_t ready_ps;    // when the last is in the ring
  };
  InstructionQueue* queue_ = nullptr;
  const timing::TimingConfig::Fetch* fetch_ = nullptr;
  std::deque<Batch> batches_;
  std::uint64_t free_ps_ = 0;  // when the fetch DMA can start the next batch
};

}  // namespace tpb::sc
