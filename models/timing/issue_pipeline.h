// The issue timing of one engine's instruction stream (SPEC §8, TIMING.md
// "Public cost model"), pure C++: the sequencer executes an instruction,
// measures its latency and initiation interval (II), and asks this object
// when it may really start and when it completes.
//
//  - In order: an instruction starts no earlier than the one before it.
//  - Units: an engine issues on one unit, the PE on two: the moving unit
//    (MultiplyMoving) and the stationary unit (LoadStationary, loaded in the
//    background of the running matmul). An instruction waits for the end of
//    the II of the last instruction of its unit; a moving instruction also
//    for the end of the last stationary load's II (its weights).
//  - Interlock: an instruction that reads bytes an in-flight instruction of
//    the same engine writes starts at that one's completion (the documented
//    dependent-instruction overhead). Reads marked exempt (the PE's PSUM
//    accumulation, done near memory) do not wait.
//  - Completion in order: an instruction completes at max(its start + its
//    latency, the completion of the one before it), so semaphore updates and
//    retires follow program order.
// Times are picoseconds on any one origin.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tpb::timing {

// The bytes an instruction reads and writes, as half-open ranges of one
// address space (the 27-bit ISA address: a range lies in one partition).
class Footprint {
 public:
  struct Range {
    std::uint64_t lo, hi;
  };
  void clear() {
    reads_.clear();
    writes_.clear();
    read_box_ = write_box_ = kEmpty;
  }
  void read(std::uint64_t addr, std::uint64_t len) { add(reads_, read_box_, addr, len); }
  void write(std::uint64_t addr, std::uint64_t len) { add(writes_, write_box_, addr, len); }
  const std::vector<Range>& reads() const { return reads_; }
  const std::vector<Range>& writes() const { return writes_; }
  // Whether some byte this footprint writes is one `other` reads.
  bool writes_what_is_read_by(const Footprint& other) const;
  // This footprint's writes become `o`'s (its storage kept; no reads).
  void take_writes(const Footprint& o) {
    reads_.clear();
    read_box_ = kEmpty;
    writes_.assign(o.writes_.begin(), o.writes_.end());
    write_box_ = o.write_box_;
  }

 private:
  static constexpr Range kEmpty{UINT64_MAX, 0};
  static void add(std::vector<Range>& v, Range& box, std::uint64_t addr, std::uint64_t len) {
    if (len == 0) return;
    const std::uint64_t hi = addr + len;
    // A run of accesses that continue each other is one range.
    if (!v.empty() && v.back().hi == addr)
      v.back().hi = hi;
    else
      v.push_back({addr, hi});
    box.lo = std::min(box.lo, addr);
    box.hi = std::max(box.hi, hi);
  }
  std::vector<Range> reads_, writes_;
  Range read_box_ = kEmpty, write_box_ = kEmpty;
};

class IssuePipeline {
 public:
  static constexpr unsigned kMoving = 0;      // every engine's unit; the PE's matmuls
  static constexpr unsigned kStationary = 1;  // the PE's LoadStationary
  static constexpr unsigned kUnits = 2;

  // A new run starting at `t` (nothing in flight).
  void reset(std::uint64_t t);

  // The earliest start on `unit` at or after `t` (the unit's last II end;
  // a moving instruction also the last stationary load's).
  std::uint64_t unit_ready(unsigned unit, std::uint64_t t) const;
  // The interlock: the latest completion after `t` of an in-flight
  // instruction whose writes `fp` reads, or `t` when there is none.
  std::uint64_t after_dependences(const Footprint& fp, std::uint64_t t) const;
  // Records an instruction that starts at `start` on `unit` with initiation
  // interval `ii` and latency `latency` (ii <= latency); its writes are
  // taken from `fp` (left empty). Returns its completion.
  std::uint64_t commit(unsigned unit, std::uint64_t start, std::uint64_t ii, std::uint64_t latency,
                       Footprint& fp);
  // The last completion recorded (the run's end once the last instruction issued).
  std::uint64_t last_completion() const { return last_done_; }
  // Forgets the writes of instructions complete at or before `t`.
  void forget_until(std::uint64_t t);
  std::size_t in_flight() const { return count_; }

 private:
  struct InFlight {
    std::uint64_t done = 0;
    Footprint writes;
  };
  // The in-flight writers, a ring whose slots keep their storage (no
  // allocation per instruction once it has grown).
  InFlight& at(std::size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  const InFlight& at(std::size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  std::uint64_t unit_free_[kUnits] = {};
  std::uint64_t last_start_ = 0, last_done_ = 0;
  std::vector<InFlight> ring_ = std::vector<InFlight>(8);  // a power of two
  std::size_t head_ = 0, count_ = 0;
};

}  // namespace tpb::timing
