// A DMA queue's role in its Sequencer (SPEC §10): the dispatch of a DMA
// queue's instruction, a descriptor checked and handed to the core's
// DmaEngines (or the wait-only nop), the ring of transfers in flight, and
// their completions, in queue order, as the engines report them
// (DmaEngines::Client, called from an engine's thread at its time). A
// completed transfer joins the Sequencer's completions (retire, semaphore
// update, on this core or, by a descriptor's update_core, another core of
// the device). Private to the Sequencer (sequencer.cpp, dma_queue.cpp); a
// compute engine's Sequencer has one too, unused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "models/sc/engine/dma_check.h"
#include "models/sc/engine/dma_engines.h"
#include "models/sc/engine/sequencer.h"
#include "models/sc/memory/semaphore_bank.h"

namespace tpb::sc {

class Sequencer::DmaQueue : public DmaEngines::Client {
 public:
  explicit DmaQueue(Sequencer& s) : s_(s) {}

  // A new configuration (Sequencer::configure): the capacities a descriptor
  // is checked against, the device's cores kept (set_device_semaphores).
  void configure(const timing::TimingConfig& t, std::uint64_t hbm_capacity, bool has_hbm);
  // Sequencer::set_device_semaphores.
  void set_device_semaphores(const std::vector<SemaphoreBank*>* banks,
                             std::vector<unsigned> targets);
  // The bank a completion's update_core (1 + K, already the physical core)
  // updates: core K's of the device; nullptr: the engine's own core's.
  SemaphoreBank* device_bank(unsigned update_core) const {
    if (update_core == 0 || !device_sems_) return nullptr;
    return device_sems_->at(update_core - 1);
  }

  // A run starts: nothing in flight, nothing submitted.
  void reset() {
    order_.clear();
    in_flight_ = 0;
    submitted_ = retired_ = 0;
  }
  // The dispatch of the instruction the Sequencer fetched (Sequencer::step):
  // its descriptor, checked, to the DMA engines; no kernel_info. false: it
  // faulted or a watchdog stopped it.
  bool submit();
  // One of the queue's completions was delivered (in queue order).
  void retired() { ++retired_; }
  // Transfers submitted and not yet done.
  std::size_t in_flight() const { return in_flight_; }
  // Transfers submitted and not retired: indices [first, end).
  std::uint64_t unretired_first() const { return retired_; }
  std::uint64_t unretired_end() const { return submitted_; }

  // DmaEngines::Client, called by a DMA engine's thread at the time of it.
  void transfer_done(DmaTransfer& t) override;
  void transfer_fault(DmaTransfer& t, const std::string& kind, const std::string& what) override;

 private:
  // Waits while the queue's ring is full of transfers in flight; false: a
  // watchdog stopped it meanwhile.
  bool await_slot();
  // The wait-only instruction on a DMA queue: nothing to the engines; it
  // completes in order with the queue's transfers.
  bool submit_nop();
  // Completes the queue's leading finished transfers, in order.
  void complete_in_order();
  // A descriptor's update_core byte (1 + K) as 1 + the core it updates.
  unsigned physical_update_core(unsigned update_core) const {
    if (update_core == 0 || update_core > update_targets_.size()) return update_core;
    return 1 + update_targets_[update_core - 1];
  }

  Sequencer& s_;
  std::size_t in_flight_ = 0;
  // Submitted and retired this run (retires come in queue order: the first
  // not retired is index retired_).
  std::uint64_t submitted_ = 0, retired_ = 0;
  sc_core::sc_event slot_ev_;  // one of them is done
  // The transfers in submit order, until they complete: a queue completes
  // its transfers in order (docs/CONVENTIONS.md), so one that lands before
  // an earlier one waits here for it (second: landed).
  std::deque<std::pair<Completion, bool>> order_;
  DmaCapacities caps_;
  const std::vector<SemaphoreBank*>* device_sems_ = nullptr;  // set_device_semaphores
  std::vector<unsigned> update_targets_;                      // ... and its targets
};

}  // namespace tpb::sc
