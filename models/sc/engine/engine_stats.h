// One engine's run statistics (SPEC §9 --stats): a SequencerObserver that
// counts instructions, busy, semaphore / memory / fetch stall cycles, bundle
// issues and kernel counters, with the engine's MemPort byte counters. After
// a fault on any engine, stop_at() takes back what this engine retired past
// the fault's time (engines run decoupled), so the stats agree with the
// traces and the retire file, which end there too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
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
  void pop_front() {
    if (++head_ == v_.size()) {
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
  EngineStatsCollector(isa::Engine engine, const fw::KernelRegistry& kernels, MemPort& port,
                       const RunControl& control);

  // A new run (and a new timing profile): everything back to zero, the
  // port's byte counters included.
  void reset(const TimingConfig& timing);

  void on_fetch(std::uint64_t index, std::uint64_t t_ps) override;
  void on_stall(StallKind kind, std::uint64_t cycles) override;
  void on_bundle(const fw::Bundle& b, std::uint64_t t_ps, std::uint64_t trips,
                 std::uint32_t cycles) override;
  bool wants_bundle_ends() const override { return false; }
  void on_count(const char* name, std::uint64_t n) override;
  void on_retire(const RetireRecord& r) override;
  void on_fault(std::uint64_t t_ps) override;

  // After the run stopped at a fault at t_ps on any engine: takes back from
  // the stats (and the port's byte counters) what this engine retired after
  // t_ps, and counts its instruction in flight as busy up to t_ps.
  void stop_at(std::uint64_t t_ps);

  // The stats so far (bytes from the port's counters).
  trace::EngineStats stats() const;

 private:
  struct Totals {
    std::uint64_t instructions, busy, stall, memory_stall, fetch_stall;
    std::array<std::uint64_t, MemPort::kNumCounters> rd, wr;
  };
  // What an instruction's retire added, kept until the global time has
  // passed its end (stop_at() may take it back until then).
  struct Retired {
    std::uint64_t start_ps, end_ps;
    Totals before;
    std::size_t bundles;  // its (bundle id, trips) entries in retired_trips_
    std::vector<std::pair<std::string, std::uint64_t>> counts;
  };
  Totals totals() const;

  isa::Engine engine_;
  const fw::KernelRegistry& kernels_;
  MemPort& port_;
  const RunControl& control_;
  const TimingConfig* timing_ = nullptr;
  trace::EngineStats stats_;
  std::vector<std::uint64_t> bundle_trips_;  // by fw::Bundle::id
  Fifo<Retired> retired_;
  Fifo<std::pair<std::uint32_t, std::uint64_t>> retired_trips_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> inst_trips_;  // of the instruction in flight
  Totals before_{};  // at the start of the current instruction
  std::vector<std::pair<std::string, std::uint64_t>> inst_counts_;
  std::uint64_t inst_fetch_ps_ = 0;
  bool in_flight_ = false;
};

}  // namespace tpb::sc
