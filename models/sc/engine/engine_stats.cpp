#include "models/sc/engine/engine_stats.h"

#include <algorithm>

namespace tpb::sc {

EngineStatsCollector::EngineStatsCollector(isa::Queue engine, const fw::KernelRegistry& kernels,
                                           MemPort& port, const RunControl& control)
    : engine_(engine),
      dma_queue_(isa::is_dma_queue(engine)),
      kernels_(kernels),
      port_(port),
      control_(control) {}

void EngineStatsCollector::reset(const timing::TimingConfig& timing) {
  timing_ = &timing;
  stats_ = trace::EngineStats{};
  stats_.name = isa::engine_name(engine_);
  stats_.clock_mhz = timing.clock(engine_);
  bundle_trips_.assign(kernels_.num_bundles(), 0);
  flight_.clear();
  trips_.clear();
  counts_fifo_.clear();
  std::fill(std::begin(stall_), std::end(stall_), 0);
  counts_ = 0;
  port_.set_counts({}, {});
  rd_forgotten_ = wr_forgotten_ = {};
  busy_ps_ = covered_ps_ = covered_forgotten_ = 0;
  dma_open_ = 0;
  dma_busy_from_ = 0;
  forget_at_ = 64;
  first_open_ = 0;
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
  counts_fifo_.push_back({name, n});
  ++counts_;
}

void EngineStatsCollector::on_issue(const IssueEvent& e) {
  flight_.push_back(InFlight{});
  InFlight& f = flight_.back();
  f.index = e.index;
  f.start_ps = e.t_ps;
  std::copy(std::begin(stall_), std::end(stall_), f.stall);
  std::fill(std::begin(stall_), std::end(stall_), 0);
  f.counts = counts_;
  counts_ = 0;
  // The port's counts now: its kernel's bytes are in them, the next one's
  // are not.
  f.rd = port_.bytes_read();
  f.wr = port_.bytes_written();
  if (dma_queue_ && dma_open_++ == 0) dma_busy_from_ = e.t_ps;
}

void EngineStatsCollector::on_bundle(const fw::Bundle& b, std::uint64_t t_ps, std::uint64_t trips,
                                     std::uint32_t cycles) {
  // One bundle (a faulting instruction's are told one by one): as on_bundles.
  const BundleRecord r{&b, t_ps, t_ps, trips, cycles};
  on_bundles(&r, 1);
}

void EngineStatsCollector::on_bundles(const BundleRecord* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) bundle_trips_[b[i].bundle->id] += b[i].trips;
  if (flight_.empty()) return;
  for (std::size_t i = 0; i < n; ++i) trips_.push_back({b[i].bundle->id, b[i].trips});
  flight_.back().trips += static_cast<std::uint32_t>(n);
}

void EngineStatsCollector::forget_passed() {
  const std::uint64_t now = control_.rel_ps(sc_core::sc_time_stamp());
  while (!flight_.empty() && flight_.front().end_ps < now) {
    const InFlight& f = flight_.front();
    covered_forgotten_ = std::max(covered_forgotten_, f.end_ps);
    rd_forgotten_ = f.rd;
    wr_forgotten_ = f.wr;
    trips_.drop_front(f.trips);
    counts_fifo_.drop_front(f.counts);
    flight_.pop_front();
    if (first_open_ > 0) --first_open_;
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
  // A compute engine's retire is its latest issue's; a DMA queue completes
  // its transfers in order: the first not retired (from a cursor, so a
  // queue of many transfers in flight costs no scan per retire).
  if (dma_queue_) {
    for (std::size_t i = first_open_; i < flight_.size(); ++i) {
      InFlight& f = flight_[i];
      if (f.index != r.index || f.end_ps != UINT64_MAX) continue;
      f.end_ps = r.end_ps;
      f.busy_ps = added;
      break;
    }
    while (first_open_ < flight_.size() && flight_[first_open_].end_ps != UINT64_MAX) ++first_open_;
  } else {
    for (std::size_t i = flight_.size(); i-- > 0;) {
      InFlight& f = flight_[i];
      if (f.index != r.index || f.end_ps != UINT64_MAX) continue;
      f.end_ps = r.end_ps;
      f.busy_ps = added;
      break;
    }
  }
  // Records are dropped once the time has passed them, now and then (it
  // asks the simulation's time): when twice as many are kept as last time.
  if (flight_.size() >= forget_at_) {
    forget_passed();
    forget_at_ = std::max<std::size_t>(64, 2 * flight_.size());
  }
}

void EngineStatsCollector::stop_at(std::uint64_t t_ps) {
  // The port's counts go back to those before the first instruction not
  // complete by the stop (a compute engine's later ones are not either; a
  // DMA queue's port counts no data).
  const MemPort::Counts* rd_to = nullptr;
  const MemPort::Counts* wr_to = nullptr;
  std::uint64_t open_from = UINT64_MAX;
  covered_ps_ = covered_forgotten_;
  std::size_t trip = 0, count = 0;  // f's first entries in trips_, counts_fifo_
  for (std::size_t i = 0; i < flight_.size(); ++i) {
    const InFlight& f = flight_[i];
    const std::size_t trip0 = trip, count0 = count;
    trip += f.trips;
    count += f.counts;
    if (f.end_ps <= t_ps) {  // complete by the stop: it stays
      covered_ps_ = std::max(covered_ps_, f.end_ps);
      continue;
    }
    if (!rd_to) {
      rd_to = i == 0 ? &rd_forgotten_ : &flight_[i - 1].rd;
      wr_to = i == 0 ? &wr_forgotten_ : &flight_[i - 1].wr;
    }
    for (std::size_t k = trip0; k < trip; ++k) bundle_trips_[trips_[k].first] -= trips_[k].second;
    for (std::size_t k = count0; k < count; ++k)
      stats_.counters[counts_fifo_[k].first] -= counts_fifo_[k].second;
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
  if (rd_to) port_.set_counts(*rd_to, *wr_to);
  // What was in flight at the stop was busy up to it.
  if (dma_queue_) {
    if (dma_open_ > 0 && t_ps > dma_busy_from_) busy_ps_ += t_ps - dma_busy_from_;
  } else if (open_from != UINT64_MAX) {
    const std::uint64_t from = std::max(open_from, covered_ps_);
    if (t_ps > from) busy_ps_ += t_ps - from;
  }
  flight_.clear();
  trips_.clear();
  counts_fifo_.clear();
  dma_open_ = 0;
  first_open_ = 0;
}

trace::EngineStats EngineStatsCollector::stats() const {
  trace::EngineStats s = stats_;
  // Busy cycles from the busy time when asked (not at every retire).
  if (timing_) s.busy_cycles = cycles(busy_ps_);
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
