#include "models/timing/issue_pipeline.h"

namespace tpb::timing {

namespace {

// Whether two range lists share a byte: both sorted by their start first
// (a matmul writes 128 partitions' runs in partition order already).
bool intersect(std::vector<Footprint::Range> a, std::vector<Footprint::Range> b) {
  const auto by_lo = [](const Footprint::Range& x, const Footprint::Range& y) {
    return x.lo < y.lo;
  };
  if (!std::is_sorted(a.begin(), a.end(), by_lo)) std::sort(a.begin(), a.end(), by_lo);
  if (!std::is_sorted(b.begin(), b.end(), by_lo)) std::sort(b.begin(), b.end(), by_lo);
  // Sweep: the ranges of one list may overlap each other, so keep the
  // furthest end seen of each.
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].lo < b[j].hi && b[j].lo < a[i].hi) return true;
    if (a[i].hi <= b[j].hi)
      ++i;
    else
      ++j;
  }
  return false;
}

}  // namespace

bool Footprint::writes_what_is_read_by(const Footprint& other) const {
  if (writes_.empty() || other.reads_.empty()) return false;
  if (write_box_.hi <= other.read_box_.lo || other.read_box_.hi <= write_box_.lo) return false;
  return intersect(writes_, other.reads_);
}

void IssuePipeline::reset(std::uint64_t t) {
  for (auto& u : unit_free_) u = t;
  last_start_ = last_done_ = t;
  head_ = count_ = 0;
}

std::uint64_t IssuePipeline::unit_ready(unsigned unit, std::uint64_t t) const {
  std::uint64_t s = std::max({t, last_start_, unit_free_[unit]});
  if (unit == kMoving) s = std::max(s, unit_free_[kStationary]);
  return s;
}

std::uint64_t IssuePipeline::after_dependences(const Footprint& fp, std::uint64_t t) const {
  std::uint64_t s = t;
  for (std::size_t i = 0; i < count_; ++i) {
    const InFlight& f = at(i);
    if (f.done > s && f.writes.writes_what_is_read_by(fp)) s = f.done;
  }
  return s;
}

std::uint64_t IssuePipeline::commit(unsigned unit, std::uint64_t start, std::uint64_t ii,
                                    std::uint64_t latency, Footprint& fp) {
  last_start_ = start;
  unit_free_[unit] = start + ii;
  last_done_ = std::max(last_done_, start + latency);
  if (!fp.writes().empty()) {
    if (count_ == ring_.size()) {
      // Grow: the slots in order from 0, twice as many.
      std::vector<InFlight> bigger(2 * ring_.size());
      for (std::size_t i = 0; i < count_; ++i) bigger[i] = std::move(at(i));
      ring_.swap(bigger);
      head_ = 0;
    }
    InFlight& f = at(count_++);
    f.done = last_done_;
    f.writes.take_writes(fp);
  }
  fp.clear();
  return last_done_;
}

void IssuePipeline::forget_until(std::uint64_t t) {
  while (count_ > 0 && at(0).done <= t) {
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
  }
}

}  // namespace tpb::timing
