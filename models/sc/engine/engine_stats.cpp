#include "models/sc/engine/engine_stats.h"

namespace tpb::sc {

EngineStatsCollector::EngineStatsCollector(isa::Engine engine, const fw::KernelRegistry& kernels,
                                           MemPort& port, const RunControl& control)
    : engine_(engine), kernels_(kernels), port_(port), control_(control) {}

void EngineStatsCollector::reset(const TimingConfig& timing) {
  timing_ = &timing;
  stats_ = trace::EngineStats{};
  stats_.name = isa::engine_name(engine_);
  stats_.clock_mhz = timing.clock(engine_);
  bundle_trips_.assign(kernels_.num_bundles(), 0);
  retired_.clear();
  retired_trips_.clear();
  inst_trips_.clear();
  inst_counts_.clear();
  in_flight_ = false;
  port_.set_counts({}, {});
}

EngineStatsCollector::Totals EngineStatsCollector::totals() const {
  return Totals{stats_.instructions,        stats_.busy_cycles,        stats_.stall_cycles,
                stats_.memory_stall_cycles, stats_.fetch_stall_cycles, port_.bytes_read(),
                port_.bytes_written()};
}

void EngineStatsCollector::on_fetch(std::uint64_t, std::uint64_t t_ps) {
  before_ = totals();
  inst_counts_.clear();
  inst_trips_.clear();
  inst_fetch_ps_ = t_ps;
  in_flight_ = true;
}

void EngineStatsCollector::on_stall(StallKind kind, std::uint64_t cycles) {
  switch (kind) {
    case StallKind::Fetch:
      stats_.fetch_stall_cycles += cycles;
      break;
    case StallKind::Semaphore:
      stats_.stall_cycles += cycles;
      break;
    case StallKind::Memory:
      stats_.memory_stall_cycles += cycles;
      break;
  }
}

void EngineStatsCollector::on_bundle(const fw::Bundle& b, std::uint64_t, std::uint64_t trips,
                                     std::uint32_t) {
  bundle_trips_[b.id] += trips;
  inst_trips_.emplace_back(b.id, trips);
}

void EngineStatsCollector::on_count(const char* name, std::uint64_t n) {
  stats_.counters[name] += n;
  inst_counts_.emplace_back(name, n);
}

void EngineStatsCollector::on_retire(const RetireRecord& r) {
  ++stats_.instructions;
  stats_.busy_cycles += engine_cycles(
      *timing_, engine_, ps_time((r.fetched_ps - r.fetch_ps) + (r.end_ps - r.start_ps)));
  in_flight_ = false;
  // Drop what the global time has passed: a fault can no longer come before it.
  const std::uint64_t now = control_.rel_ps(sc_core::sc_time_stamp());
  while (!retired_.empty() && retired_.front().end_ps < now) {
    for (std::size_t k = 0; k < retired_.front().bundles; ++k) retired_trips_.pop_front();
    retired_.pop_front();
  }
  for (const auto& t : inst_trips_) retired_trips_.push_back(t);
  retired_.push_back(Retired{r.fetch_ps, r.end_ps, before_, inst_trips_.size(), {}});
  if (!inst_counts_.empty()) retired_.back().counts.swap(inst_counts_);
  inst_trips_.clear();
}

void EngineStatsCollector::on_fault(std::uint64_t t_ps) {
  // The faulting instruction's time up to the fault is busy time.
  if (!in_flight_) return;
  if (t_ps > inst_fetch_ps_)
    stats_.busy_cycles += engine_cycles(*timing_, engine_, ps_time(t_ps - inst_fetch_ps_));
  in_flight_ = false;
}

void EngineStatsCollector::stop_at(std::uint64_t t_ps) {
  std::size_t first = 0;  // the first instruction retired after t_ps
  std::size_t trip0 = 0;  // its first retired_trips_ entry
  while (first < retired_.size() && retired_[first].end_ps <= t_ps) {
    trip0 += retired_[first].bundles;
    ++first;
  }
  std::uint64_t busy_from = in_flight_ ? inst_fetch_ps_ : t_ps;
  if (first < retired_.size()) {
    const Totals& b = retired_[first].before;
    stats_.instructions = b.instructions;
    stats_.busy_cycles = b.busy;
    stats_.stall_cycles = b.stall;
    stats_.memory_stall_cycles = b.memory_stall;
    stats_.fetch_stall_cycles = b.fetch_stall;
    port_.set_counts(b.rd, b.wr);
    for (std::size_t k = trip0; k < retired_trips_.size(); ++k)
      bundle_trips_[retired_trips_[k].first] -= retired_trips_[k].second;
    for (std::size_t i = first; i < retired_.size(); ++i)
      for (const auto& [name, n] : retired_[i].counts) stats_.counters[name] -= n;
    busy_from = retired_[first].start_ps;
  }
  if (busy_from < t_ps)
    stats_.busy_cycles += engine_cycles(*timing_, engine_, ps_time(t_ps - busy_from));
  retired_.clear();
  retired_trips_.clear();
  in_flight_ = false;
}

trace::EngineStats EngineStatsCollector::stats() const {
  trace::EngineStats s = stats_;
  for (std::uint32_t id = 0; id < bundle_trips_.size(); ++id)
    if (bundle_trips_[id] != 0) s.bundles[kernels_.bundle(id)->name] = bundle_trips_[id];
  s.bytes_read = s.bytes_written = 0;
  // Data bytes (SBUF quadrants, PSUM); instruction fetches are not counted.
  for (unsigned i = 0; i < MemPort::kCountOther; ++i) {
    s.bytes_read += port_.bytes_read()[i];
    s.bytes_written += port_.bytes_written()[i];
  }
  return s;
}

}  // namespace tpb::sc
