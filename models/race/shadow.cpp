#include "models/race/shadow.h"

#include <algorithm>
#include <iterator>

namespace tpb::race {

void AccessSet::put(const Access& a) {
  Access* d = data();
  std::uint32_t i = 0;
  while (i < n_ && d[i].epoch.agent < a.epoch.agent) ++i;
  if (i < n_ && d[i].epoch.agent == a.epoch.agent) {
    d[i] = a;  // the agent's later access: its earlier one is ordered before it
    return;
  }
  if (n_ < kInline) {
    for (std::uint32_t j = n_; j > i; --j) in_[j] = in_[j - 1];
    in_[i] = a;
  } else {
    if (n_ == kInline) more_.assign(in_, in_ + kInline);
    more_.insert(more_.begin() + i, a);
  }
  ++n_;
}

Access* AccessSet::find(const Epoch& e) {
  Access* d = data();
  for (std::uint32_t i = 0; i < n_; ++i)
    if (d[i].epoch == e) return &d[i];
  return nullptr;
}

void AccessSet::drop_ordered(AgentIdx agent, const VectorClock& vc) {
  Access* d = data();
  std::uint32_t k = 0;
  for (std::uint32_t i = 0; i < n_; ++i)
    if (d[i].epoch.agent != agent && !vc.covers(d[i].epoch)) d[k++] = d[i];
  if (n_ > kInline && k <= kInline) {
    for (std::uint32_t i = 0; i < k; ++i) in_[i] = more_[i];
    more_.clear();
  } else if (n_ > kInline) {
    more_.resize(k);
  }
  n_ = k;
}

bool AccessSet::operator==(const AccessSet& o) const {
  if (n_ != o.n_) return false;
  for (std::uint32_t i = 0; i < n_; ++i)
    if (!((*this)[i] == o[i])) return false;
  return true;
}

std::size_t ShadowRange::locate(std::uint64_t x) const {
  const auto it = std::upper_bound(segs_.begin(), segs_.end(), x,
                                   [](std::uint64_t v, const Seg& g) { return v < g.hi; });
  return static_cast<std::size_t>(it - segs_.begin());
}

void ShadowRange::split_at(std::size_t i, std::uint64_t x) {
  Seg tail{x, segs_[i].hi, segs_[i].cell};
  segs_[i].hi = x;
  segs_.insert(segs_.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(tail));
}

void ShadowRange::update(Cell& c, const Epoch& e, std::uint8_t mask, const VectorClock& vc) {
  if (mask & kWrite) {
    std::uint8_t m = kWrite;
    if (const Access* w = c.writes.find(e)) m |= w->mask;  // the same instruction wrote before
    if (c.reads.find(e)) m |= kRead;                       // ... or read these bytes first
    c.writes.drop_ordered(e.agent, vc);
    c.reads.drop_ordered(e.agent, vc);
    c.writes.put(Access{e, m});
  } else if (Access* w = c.writes.find(e)) {
    w->mask |= kRead;
  } else {
    c.reads.put(Access{e, kRead});
  }
}

void ShadowRange::merge(std::size_t first, std::size_t last) {
  // Compacts [from, to] in place: each segment joins the one before it when
  // they touch and hold the same history.
  const std::size_t from = first == 0 ? 0 : first - 1;
  const std::size_t to = std::min(last + 1, segs_.size() - 1);
  std::size_t w = from;
  for (std::size_t r = from + 1; r <= to; ++r) {
    if (segs_[w].hi == segs_[r].lo && segs_[w].cell == segs_[r].cell) {
      segs_[w].hi = segs_[r].hi;
    } else if (++w != r) {
      segs_[w] = std::move(segs_[r]);
    }
  }
  if (w < to)
    segs_.erase(segs_.begin() + static_cast<std::ptrdiff_t>(w) + 1,
                segs_.begin() + static_cast<std::ptrdiff_t>(to) + 1);
}

const Cell* ShadowRange::find(std::uint64_t at) const {
  const std::size_t i = locate(at);
  return i < segs_.size() && segs_[i].lo <= at ? &segs_[i].cell : nullptr;
}

}  // namespace tpb::race
