#include "models/sc/engine/engine_stats.h"

#include <algorithm>

namespace tpb::sc {

EngineStatsCollector::EngineStatsCollector(isa::Engine engine, const fw::KernelRegistry& kernels,
                                           MemPort& port, const RunControl& control)
    : engine_(engine),
      dma_queue_(isa::is_dma_queue(engine)),
      kernels_(kernels),
      port_(port),
      control_(control) {}

void EngineStatsCollector::reset(const TimingConfig& timing) {
  timing_ = &timing;
  stats_ = trace::EngineStats{};
  stats_.name = isa::engine_name(engine_);
  stats_.clock_mhz = timing.clock(engine_);
  bundle_trips_.assign(kernels_.num_bundles(), 0);
  flight_.clear();
  std::fill(std::begin(stall_), std::end(stall_), 0);
  counts_.clear();
  port_.set_counts({}, {});
  rd_at_issue_ = wr_at_issue_ = {};
  busy_ps_ = covered_ps_ = covered_forgotten_ = 0;
  dma_open_ = 0;
  dma_busy_from_ = 0;
}

std::uint64_t& EngineStatsCollector::stall_field(unsigned kind) {
  switch (static_cast<StallKind>(kind)) {
    case StallKind::Fetch:
      return stats_.fetch_stall_cycles;
    case StallKind::Semaphore:
      return stats_.stall_cycles;
    case StallKind::Memory:
      return stats_.memory_stall_cycles;
    case StallKind::Interlock:
      break;
  }
  return stats_.interlock_stall_cycles;
}

std::uint64_t EngineStatsCollector::cycles(std::uint64_t ps) const {
  return engine_cycles(*timing_, engine_, ps_time(ps));
}

void EngineStatsCollector::on_stall(StallKind kind, std::uint64_t n) {
  stall_field(static_cast<unsigned>(kind)) += n;
  stall_[static_cast<unsigned>(kind)] += n;
}

void EngineStatsCollector::on_count(const char* name, std::uint64_t n) {
  stats_.counters[name] += n;
  counts_.emplace_back(name, n);
}

void EngineStatsCollector::on_issue(const IssueEvent& e) {
  InFlight& f = flight_.emplace_back();
  f.index = e.index;
  f.start_ps = e.t_ps;
  std::copy(std::begin(stall_), std::end(stall_), f.stall);
  std::fill(std::begin(stall_), std::end(stall_), 0);
  f.counts.swap(counts_);
  counts_.clear();
  // The bytes its kernel moved: the port's since the last issue.
  const MemPort::Counts& rd = port_.bytes_read();
  const MemPort::Counts& wr = port_.bytes_written();
  for (unsigned i = 0; i < MemPort::kNumCounters; ++i) {
    f.rd[i] = rd[i] - rd_at_issue_[i];
    f.wr[i] = wr[i] - wr_at_issue_[i];
  }
  rd_at_issue_ = rd;
  wr_at_issue_ = wr;
  if (dma_queue_ && dma_open_++ == 0) dma_busy_from_ = e.t_ps;
}

void EngineStatsCollector::on_bundle(const fw::Bundle& b, std::uint64_t, std::uint64_t trips,
                                     std::uint32_t) {
  bundle_trips_[b.id] += trips;
  if (!flight_.empty()) flight_.back().trips.emplace_back(b.id, trips);
}

void EngineStatsCollector::forget_passed() {
  const std::uint64_t now = control_.rel_ps(sc_core::sc_time_stamp());
  while (!flight_.empty() && flight_.front().end_ps < now) {
    covered_forgotten_ = std::max(covered_forgotten_, flight_.front().end_ps);
    flight_.pop_front();
  }
}

void EngineStatsCollector::on_retire(const RetireRecord& r) {
  ++stats_.instructions;
  std::uint64_t added = 0;
  if (dma_queue_) {
    if (dma_open_ > 0 && --dma_open_ == 0) added = r.end_ps - dma_busy_from_;
  } else {
    const std::uint64_t from = std::max(r.start_ps, covered_ps_);
    if (r.end_ps > from) added = r.end_ps - from;
    covered_ps_ = std::max(covered_ps_, r.end_ps);
  }
  busy_ps_ += added;
  stats_.busy_cycles = cycles(busy_ps_);
  const auto it = std::find_if(flight_.begin(), flight_.end(),
                               [&](const InFlight& f) { return f.index == r.index; });
  if (it != flight_.end()) {
    it->end_ps = r.end_ps;
    it->busy_ps = added;
  }
  forget_passed();
}

void EngineStatsCollector::stop_at(std::uint64_t t_ps) {
  std::uint64_t rd_back[MemPort::kNumCounters] = {}, wr_back[MemPort::kNumCounters] = {};
  std::uint64_t open_from = UINT64_MAX;
  covered_ps_ = covered_forgotten_;
  for (const InFlight& f : flight_) {
    if (f.end_ps <= t_ps) {  // complete by the stop: it stays
      covered_ps_ = std::max(covered_ps_, f.end_ps);
      continue;
    }
    for (const auto& [id, n] : f.trips) bundle_trips_[id] -= n;
    for (const auto& [name, n] : f.counts) stats_.counters[name] -= n;
    for (unsigned i = 0; i < MemPort::kNumCounters; ++i) {
      rd_back[i] += f.rd[i];
      wr_back[i] += f.wr[i];
    }
    if (f.end_ps != UINT64_MAX) {  // retired ahead of the stop: taken back
      --stats_.instructions;
      busy_ps_ -= f.busy_ps;
    }
    // An instruction issued after the stop never began: its stalls too.
    if (f.start_ps > t_ps)
      for (unsigned k = 0; k < 4; ++k) stall_field(k) -= f.stall[k];
    else
      open_from = std::min(open_from, f.start_ps);
  }
  MemPort::Counts rd = port_.bytes_read(), wr = port_.bytes_written();
  for (unsigned i = 0; i < MemPort::kNumCounters; ++i) {
    rd[i] -= rd_back[i];
    wr[i] -= wr_back[i];
  }
  port_.set_counts(rd, wr);
  // What was in flight at the stop was busy up to it.
  if (dma_queue_) {
    if (dma_open_ > 0 && t_ps > dma_busy_from_) busy_ps_ += t_ps - dma_busy_from_;
  } else if (open_from != UINT64_MAX) {
    const std::uint64_t from = std::max(open_from, covered_ps_);
    if (t_ps > from) busy_ps_ += t_ps - from;
  }
  stats_.busy_cycles = cycles(busy_ps_);
  flight_.clear();
  dma_open_ = 0;
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
