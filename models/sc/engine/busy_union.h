// The time any of several workers is busy (the union of their busy spans),
// kept as their spans begin and end at the simulated time, in time order:
// the DMA engines' "DMA active" (SPEC §9 stats, docs/CONVENTIONS.md).
// After a stop at t, spans are cut there, as the engines' own stats are.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>

namespace tpb::sc {

class BusyUnion {
 public:
  void reset() {
    open_ = 0;
    from_ = closed_ps_ = 0;
    recent_.clear();
  }
  // A worker begins a span at t (>= every earlier begin and end).
  void begin(std::uint64_t t) {
    if (open_++ == 0) from_ = t;
  }
  // A worker's span ends at t.
  void end(std::uint64_t t) {
    if (open_ == 0 || --open_ != 0) return;
    // Kept while the time has not passed it: a stop may still cut it.
    while (!recent_.empty() && recent_.front().to < t) recent_.pop_front();
    recent_.push_back({from_, t});
    closed_ps_ += t - from_;
  }
  // The busy time up to a stop at stop_ps (UINT64_MAX: none); a span still
  // open counts up to min(stop_ps, now_ps).
  std::uint64_t busy_ps(std::uint64_t stop_ps, std::uint64_t now_ps) const {
    std::uint64_t t = closed_ps_;
    for (const Span& s : recent_)
      if (s.to > stop_ps) t -= s.to - std::max(s.from, stop_ps);
    const std::uint64_t until = std::min(stop_ps, now_ps);
    if (open_ != 0 && until > from_) t += until - from_;
    return t;
  }

 private:
  struct Span {
    std::uint64_t from, to;
  };
  unsigned open_ = 0;
  std::uint64_t from_ = 0, closed_ps_ = 0;
  std::deque<Span> recent_;
};

}  // namespace tpb::sc
