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
  for (InFlight& f : flight_) {
    f.writes.clear();
    spare_.push_back(std::move(f.writes));
  }
  flight_.clear();
}

std::uint64_t IssuePipeline::unit_ready(unsigned unit, std::uint64_t t) const {
  std::uint64_t s = std::max({t, last_start_, unit_free_[unit]});
  if (unit == kMoving) s = std::max(s, unit_free_[kStationary]);
  return s;
}

std::uint64_t IssuePipeline::after_dependences(const Footprint& fp, std::uint64_t t) const {
  std::uint64_t s = t;
  for (const InFlight& f : flight_)
    if (f.done > s && f.writes.writes_what_is_read_by(fp)) s = f.done;
  return s;
}

std::uint64_t IssuePipeline::commit(unsigned unit, std::uint64_t start, std::uint64_t ii,
                                    std::uint64_t latency, Footprint& fp) {
  last_start_ = start;
  unit_free_[unit] = start + ii;
  last_done_ = std::max(last_done_, start + latency);
  if (!fp.writes().empty()) {
    InFlight f{last_done_, {}};
    if (!spare_.empty()) {
      f.writes.swap(spare_.back());
      spare_.pop_back();
    }
    f.writes.swap(fp);
    flight_.push_back(std::move(f));
  }
  fp.clear();
  return last_done_;
}

void IssuePipeline::forget_until(std::uint64_t t) {
  while (!flight_.empty() && flight_.front().done <= t) {
    flight_.front().writes.clear();
    spare_.push_back(std::move(flight_.front().writes));
    flight_.pop_front();
  }
}

}  // namespace tpb::timing
