// One engine's run statistics (SPEC §9 --stats): a SequencerObserver that
// counts instructions, busy time (an instruction of the engine in flight),
// semaphore / memory / fetch / interlock stall cycles, bundle issues and
// kernel counters, with the bytes its MemPort moved. An instruction's
// contributions are known at its issue; it counts as retired at its
// completion. After a stop (a fault on any engine, or a watchdog) at t,
// stop_at() takes back what the instructions still in flight added (engines
// run ahead of each other) and counts their time up to t as busy, so the
// stats agree with the traces and the retire file, which end there too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "models/sc/engine/run_control.h"
#include "models/sc/engine/sequencer_observer.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/mem_port.h"
#include "models/trace/stats.h"

namespace tpb::sc {

class EngineStatsCollector : public SequencerObserver {
 public:
  EngineStatsCollector(isa::Engine engine, const fw::KernelRegistry& kernels, MemPort& port,
                       const RunControl& control);

  // A new run (and a new timing profile): everything back to zero, the
  // port's byte counters included.
  void reset(const TimingConfig& timing);

  void on_stall(StallKind kind, std::uint64_t cycles) override;
  void on_issue(const IssueEvent& e) override;
  void on_bundle(const fw::Bundle& b, std::uint64_t t_ps, std::uint64_t trips,
                 std::uint32_t cycles) override;
  bool wants_bundle_ends() const override { return false; }
  void on_count(const char* name, std::uint64_t n) override;
  void on_retire(const RetireRecord& r) override;

  // After the run stopped at t_ps: takes back what the instructions not
  // completed by then added, and counts their time up to t_ps as busy.
  void stop_at(std::uint64_t t_ps);

  // The stats so far (bytes from the port's counters).
  trace::EngineStats stats() const;

 private:
  // What one instruction added, kept from its issue until the simulated
  // time has passed its completion (a compute engine's retire is told ahead
  // of it: a stop before it takes it back).
  struct InFlight {
    std::uint64_t index = 0, start_ps = 0;
    std::uint64_t end_ps = UINT64_MAX;  // its completion, once retired
    std::uint64_t busy_ps = 0;          // the busy time its retire added
    std::uint64_t stall[4] = {};
    MemPort::Counts rd{}, wr{};
    std::vector<std::pair<std::uint32_t, std::uint64_t>> trips;  // (bundle id, trips)
    std::vector<std::pair<std::string, std::uint64_t>> counts;
  };
  std::uint64_t& stall_field(unsigned kind);
  std::uint64_t cycles(std::uint64_t ps) const;

  isa::Engine engine_;
  bool dma_queue_;
  const fw::KernelRegistry& kernels_;
  MemPort& port_;
  const RunControl& control_;
  const TimingConfig* timing_ = nullptr;
  trace::EngineStats stats_;
  std::vector<std::uint64_t> bundle_trips_;  // by fw::Bundle::id
  std::deque<InFlight> flight_;              // issue order
  void forget_passed();                      // drops records the time has passed
  // Gathered since the last issue: the next instruction's.
  std::uint64_t stall_[4] = {};
  std::vector<std::pair<std::string, std::uint64_t>> counts_;
  MemPort::Counts rd_at_issue_{}, wr_at_issue_{};
  // Busy: a compute engine completes in order (its retires come in order of
  // start); a DMA queue's transfers do not, but it issues and completes at
  // the simulated time, so it counts the transfers in flight.
  std::uint64_t busy_ps_ = 0, covered_ps_ = 0;
  std::uint64_t covered_forgotten_ = 0;  // the latest completion of a record dropped
  std::size_t dma_open_ = 0;
  std::uint64_t dma_busy_from_ = 0;
};

}  // namespace tpb::sc
