// Shadow memory of the race check (SPEC §14): for each byte range of a
// memory, the last write and the reads since it (the latest of each agent),
// as disjoint segments [lo, hi) of equal history. A run of bytes one
// instruction accessed alike is one segment whatever its length, so memory
// grows with the number of distinct live intervals, not with the bytes.
// Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/race/vector_clock.h"

namespace tpb::race {

// What an instruction did to a byte: read, write or both.
enum AccessMask : std::uint8_t { kRead = 1, kWrite = 2 };

// One instruction's access to a byte range: its epoch and what it did.
struct Access {
  Epoch epoch;
  std::uint8_t mask = 0;  // kRead, kWrite, or both
  bool operator==(const Access& o) const { return epoch == o.epoch && mask == o.mask; }
};

// At most one access of each agent (its latest), sorted by agent: few
// agents touch one partition's bytes, so two are kept in place and more go
// to the heap.
class AccessSet {
 public:
  bool empty() const { return n_ == 0; }
  std::size_t size() const { return n_; }
  const Access* begin() const { return n_ > kInline ? more_.data() : in_; }
  const Access* end() const { return begin() + n_; }
  const Access& operator[](std::size_t i) const { return begin()[i]; }
  void clear() {
    n_ = 0;
    more_.clear();
  }
  // Records `a` (replacing its agent's earlier access, ordered before it).
  void put(const Access& a);
  // The access of epoch e, or nullptr.
  Access* find(const Epoch& e);
  // Drops every access of `agent` and every one `vc` covers.
  void drop_ordered(AgentIdx agent, const VectorClock& vc);
  bool operator==(const AccessSet& o) const;

 private:
  static constexpr std::uint32_t kInline = 2;
  Access* data() { return n_ > kInline ? more_.data() : in_; }
  std::uint32_t n_ = 0;
  Access in_[kInline];
  std::vector<Access> more_;  // every access when more than kInline
};

// A byte range's history: its last writes (one, unless writes raced: then
// each racing one stays until a write is ordered after it) and the reads
// not ordered before them (each agent's latest).
struct Cell {
  AccessSet writes;
  AccessSet reads;
  bool operator==(const Cell& o) const { return writes == o.writes && reads == o.reads; }
};

// A recorded access that the new one is not ordered after, on [lo, hi).
struct Conflict {
  Epoch earlier;
  std::uint8_t earlier_mask;  // what that instruction did to these bytes
  std::uint64_t lo, hi;
};

// One address window's history: one SBUF / PSUM partition, one tile, or a
// window of the HBM (Detector keeps the HBM in 1 MiB windows). Its segments
// in a sorted vector: a partition holds tens to hundreds of live intervals,
// which a binary search over contiguous memory finds faster than a tree.
class ShadowRange {
 public:
  // Records an access of [lo, hi) (`mask` kRead or kWrite) by the agent of
  // `e` whose vector clock is `vc`, calling sink(const Conflict&) for every
  // recorded access of another agent it is not ordered after: a write
  // conflicts with the writes and the reads, a read with the writes. A write
  // then replaces what it is ordered after (a racing access stays, so that
  // a later access racing with it is reported too, whatever the order the
  // accesses came in). Returns how many segments the range holds afterwards.
  template <class Sink>
  std::size_t access(std::uint64_t lo, std::uint64_t hi, const Epoch& e, std::uint8_t mask,
                     const VectorClock& vc, Sink&& sink);
  std::size_t segments() const { return segs_.size(); }
  // The cell of the byte at `at` (nullptr: never accessed); for tests.
  const Cell* find(std::uint64_t at) const;

 private:
  struct Seg {
    std::uint64_t lo, hi;
    Cell cell;
  };
  // The first segment that ends after x.
  std::size_t locate(std::uint64_t x) const;
  // Splits segment i at x (inside it); segment i + 1 starts at x.
  void split_at(std::size_t i, std::uint64_t x);
  static void update(Cell& c, const Epoch& e, std::uint8_t mask, const VectorClock& vc);
  // Joins equal neighbours of segments first..last (and the ones around them).
  void merge(std::size_t first, std::size_t last);
  std::vector<Seg> segs_;
};

template <class Sink>
std::size_t ShadowRange::access(std::uint64_t lo, std::uint64_t hi, const Epoch& e,
                                std::uint8_t mask, const VectorClock& vc, Sink&& sink) {
  if (lo >= hi) return segs_.size();
  std::size_t i = locate(lo);
  if (i < segs_.size() && segs_[i].lo < lo) split_at(i++, lo);
  std::uint64_t at = lo;
  const std::size_t first = i;
  while (at < hi) {
    if (i == segs_.size() || segs_[i].lo > at) {
      // Bytes nobody accessed in this run: nothing to conflict with.
      const std::uint64_t end = i == segs_.size() ? hi : std::min(hi, segs_[i].lo);
      Seg g{at, end, Cell{}};
      update(g.cell, e, mask, vc);
      segs_.insert(segs_.begin() + static_cast<std::ptrdiff_t>(i), std::move(g));
    } else {
      if (segs_[i].hi > hi) split_at(i, hi);
      Seg& s = segs_[i];
      for (const Access& w : s.cell.writes)
        if (w.epoch.agent != e.agent && !vc.covers(w.epoch))
          sink(Conflict{w.epoch, w.mask, s.lo, s.hi});
      if (mask & kWrite)
        for (const Access& r : s.cell.reads)
          if (r.epoch.agent != e.agent && !vc.covers(r.epoch))
            sink(Conflict{r.epoch, kRead, s.lo, s.hi});
      update(s.cell, e, mask, vc);
    }
    at = segs_[i].hi;
    ++i;
  }
  merge(first, i - 1);
  return segs_.size();
}

}  // namespace tpb::race
