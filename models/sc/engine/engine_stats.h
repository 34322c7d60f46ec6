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

// A first-in first-out queue over one vector: pushed at the back, taken
// from the front without freeing anything (a std::deque of large elements
// allocates a block every few pushes; this one reuses its storage).
template <typename T>
class Fifo {
 public:
  bool empty() const { return head_ == v_.size(); }
  std::size_t size() const { return v_.size() - head_; }
  T& front() { return v_[head_]; }
  T& back() { return v_.back(); }
  T& operator[](std::size_t i) { return v_[head_ + i]; }
  const T& operator[](std::size_t i) const { return v_[head_ + i]; }
  void push_back(T x) { v_.push_back(std::move(x)); }
  void pop_front() { drop_front(1); }
  void drop_front(std::size_t n) {  // n <= size()
    if (n == 0) return;
    if ((head_ += n) == v_.size()) {
      clear();
    } else if (head_ >= 1024 && head_ * 2 >= v_.size()) {
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void clear() {
    v_.clear();
    head_ = 0;
  }

 private:
  std::vector<T> v_;
  std::size_t head_ = 0;
};

class EngineStatsCollector : public SequencerObserver {
 public:
  EngineStatsCollector(isa::Queue engine, const fw::KernelRegistry& kernels, MemPort& port,
                       const RunControl& control);

  // A new run (and a new timing profile): everything back to zero, the
  // port's byte counters included.
  void reset(const timing::TimingConfig& timing);

  void on_stall(StallKind kind, std::uint64_t cycles) override;
  void on_issue(const IssueEvent& e) override;
  void on_bundle(const fw::Bundle& b, std::uint64_t t_ps, std::uint64_t trips,
                 std::uint32_t cycles) override;
  void on_bundles(const BundleRecord* b, std::size_t n) override;
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
  // of it: a stop before it takes it back). Its bundle trips and kernel
  // counts are its entries in trips_ and counts_ (flat FIFOs: no allocation
  // per instruction).
  struct InFlight {
    std::uint64_t index = 0, start_ps = 0;
    std::uint64_t end_ps = UINT64_MAX;  // its completion, once retired
    std::uint64_t busy_ps = 0;          // the busy time its retire added
    std::uint64_t stall[4] = {};
    MemPort::Counts rd{}, wr{};           // the port's counts at its issue (its bytes included)
    std::uint32_t trips = 0, counts = 0;  // its entries in trips_, counts_
  };
  std::uint64_t& stall_field(unsigned kind);
  std::uint64_t cycles(std::uint64_t ps) const;

  isa::Queue engine_;
  bool dma_queue_;
  const fw::KernelRegistry& kernels_;
  MemPort& port_;
  const RunControl& control_;
  const timing::TimingConfig* timing_ = nullptr;
  trace::EngineStats stats_;
  std::vector<std::uint64_t> bundle_trips_;                  // by fw::Bundle::id
  Fifo<InFlight> flight_;                                    // issue order
  Fifo<std::pair<std::uint32_t, std::uint64_t>> trips_;      // (bundle id, trips)
  Fifo<std::pair<const char*, std::uint64_t>> counts_fifo_;  // (counter, n)
  void forget_passed();                                      // drops records the time has passed
  std::size_t forget_at_ = 64;                               // the next forget_passed at this many
  std::size_t first_open_ = 0;  // a DMA queue: flight_'s first record not retired
  // Gathered since the last issue: the next instruction's.
  std::uint64_t stall_[4] = {};
  std::uint32_t counts_ = 0;  // entries of counts_fifo_ since the last issue
  // The port's counts at the issue of the last record dropped.
  MemPort::Counts rd_forgotten_{}, wr_forgotten_{};
  // Busy: a compute engine completes in order (its retires come in order of
  // start); a DMA queue's transfers do not, but it issues and completes at
  // the simulated time, so it counts the transfers in flight.
  std::uint64_t busy_ps_ = 0, covered_ps_ = 0;
  std::uint64_t covered_forgotten_ = 0;  // the latest completion of a record dropped
  std::size_t dma_open_ = 0;
  std::uint64_t dma_busy_from_ = 0;
};

}  // namespace tpb::sc
