// Access timing of a memory-like TLM target and the DMI timing extension that
// lets a DMI user charge exactly what b_transport would have charged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

namespace tpb::sc {

struct MemTiming {
  sc_core::sc_time latency;   // fixed cost of one access
  sc_core::sc_time per_beat;  // bandwidth of one partition lane: one beat of beat_bytes
  unsigned beat_bytes = 64;
  // Bandwidth contention between initiators (SPEC §8). Zero: off, every
  // access costs access_delay(len). Otherwise each lane's beats are booked in
  // windows of this length (see BandwidthArbiter).
  sc_core::sc_time contention_window;
  // Banks per partition: accesses contend only within one partition's bank
  // (the PSUM's 8 banks of 2 KiB on v3+); 1 = the whole partition.
  unsigned banks = 1;

  // ceil(len / beat_bytes) * per_beat; beat_bytes == 0 means "no bandwidth
  // term" rather than a division by zero.
  sc_core::sc_time beats_time(std::uint64_t len) const {
    return per_beat * static_cast<double>(beats(len));
  }
  // ceil(len / beat_bytes), 0 without a bandwidth term. A power-of-two beat
  // (every profile's) shifts instead of dividing.
  std::uint64_t beats(std::uint64_t len) const {
    if (beat_bytes == 0) return 0;
    return (beat_bytes & (beat_bytes - 1)) == 0
               ? (len + beat_bytes - 1) >> __builtin_ctz(beat_bytes)
               : (len + beat_bytes - 1) / beat_bytes;
  }
  // latency + beats_time(len).
  sc_core::sc_time access_delay(std::uint64_t len) const { return latency + beats_time(len); }
};

// Books the beats of one memory target (an SBUF quadrant, the PSUM) so that
// initiators sharing it slow each other down. A target has one lane per
// partition (and bank) and direction: partitions are separate SRAMs with a
// read and a write port, so only accesses to the same lane compete. Time is cut into windows of
// MemTiming::contention_window; a lane's window holds that much beat time. An access books its
// beats from the window of its start time onward, and ends no earlier than the window's booked load
// would finish. Booking per window rather than "busy until" keeps the model insensitive to the
// order in which temporally decoupled initiators (each ahead of sc_time_stamp() by its own local
// offset) happen to run: an access is only delayed by beats booked in its own or earlier windows.
class BandwidthArbiter {
 public:
  // `partitions` and `bytes_per_partition` describe the target (lane =
  // partition x banks + bank); the defaults give one lane.
  explicit BandwidthArbiter(const MemTiming& t, unsigned partitions = 1,
                            std::uint32_t bytes_per_partition = 1u << 18)
      : t_(t),
        books_(std::size_t{std::max(1u, partitions)} * std::max(1u, t.banks) * 2),
        partitions_(std::max(1u, partitions)),
        banks_(std::max(1u, t.banks)),
        bank_bytes_(std::max<std::uint32_t>(1, bytes_per_partition / std::max(1u, t.banks))) {
    window_ = t.contention_window.value();
    beat_ = t.per_beat.value();
    enabled_ = window_ != 0 && beat_ != 0 && t.beat_bytes != 0;
  }
  bool enabled() const { return enabled_; }
  // Windows are counted from this time (a core reset later in a process's
  // simulation books as a fresh one would).
  void set_origin(sc_core::sc_time t) { origin_ = t.value(); }
  unsigned lanes() const { return static_cast<unsigned>(books_.size()); }
  // The lane of an access (target-local or global address: a target's
  // partitions are aligned to its size, so the partition modulo its count is
  // local): partition, bank, and the read or the write port.
  unsigned lane_of(std::uint64_t addr, bool is_write) const {
    const unsigned p = static_cast<unsigned>((addr >> 18) % partitions_);
    const unsigned b = static_cast<unsigned>((addr & ((1u << 18) - 1)) / bank_bytes_);
    return (p * banks_ + std::min(b, banks_ - 1)) * 2 + (is_write ? 1 : 0);
  }

  // The delay to add for a `len`-byte access to `lane` issued at now +
  // offset: t.access_delay(len) plus any wait for bandwidth others booked on
  // that lane.
  sc_core::sc_time access(sc_core::sc_time now, sc_core::sc_time offset, std::uint64_t len,
                          unsigned lane = 0) {
    if (!enabled_) return t_.access_delay(len);
    Book& bk = books_[lane < books_.size() ? lane : 0];
    const std::uint64_t beats = t_.beats(len);
    // Booked as beat time (not a beat count), so a window holds exactly its
    // length whatever the rounding of window / beat: one initiator alone
    // never waits for itself.
    const std::uint64_t now_v = now.value() - origin_;
    const std::uint64_t start = now_v + offset.value();
    // Windows before the current time can receive no more accesses.
    const std::uint64_t now_bin = now_v / window_;
    while (bk.base < now_bin && !bk.used.empty()) {
      bk.used.pop_front();
      ++bk.base;
    }
    if (bk.used.empty()) bk.base = std::max(bk.base, now_bin);
    std::uint64_t bin = std::max(start / window_, bk.base);
    std::uint64_t remaining = beats * beat_;
    for (;;) {
      if (bin - bk.base >= bk.used.size()) bk.used.resize(bin - bk.base + 1, 0);
      std::uint64_t& u = bk.used[bin - bk.base];
      const std::uint64_t take = std::min(window_ - u, remaining);
      u += take;
      remaining -= take;
      if (remaining == 0) break;
      ++bin;
    }
    const std::uint64_t alone = start + beats * beat_;
    const std::uint64_t packed = bin * window_ + bk.used[bin - bk.base];
    const std::uint64_t stall = packed > alone ? packed - alone : 0;
    stall_ += stall;
    return t_.latency + sc_core::sc_time::from_value(beats * beat_ + stall);
  }
  // Total time accesses waited for bandwidth (for stats).
  sc_core::sc_time total_stall() const { return sc_core::sc_time::from_value(stall_); }

 private:
  struct Book {
    std::deque<std::uint64_t> used;  // beat time booked per window, from window base
    std::uint64_t base = 0;
  };
  MemTiming t_;
  std::vector<Book> books_;
  unsigned partitions_, banks_;
  std::uint32_t bank_bytes_;
  std::uint64_t window_ = 0, beat_ = 0;
  bool enabled_ = false;
  std::uint64_t stall_ = 0;
  std::uint64_t origin_ = 0;
};

// The partition lanes of one pipelined stream (SPEC §8): while an engine
// streams, each access to an SBUF or PSUM partition adds its beats (and any
// bandwidth stall) to that partition's read or write lane instead of to the
// engine's time; the stream then costs its slowest lane plus one latency as
// the fill, overlapped with compute (Sequencer). Indexed by the global
// partition 0..127.
class StreamLanes {
 public:
  static constexpr unsigned kLanes = 128;
  void reset() {
    // Only the lanes this stream touched (a one-partition stream clears
    // one, not 128).
    for (unsigned w = 0; w < 2; ++w) {
      for (std::uint64_t m = dirty_[w]; m != 0; m &= m - 1) {
        const unsigned lane = w * 64 + static_cast<unsigned>(__builtin_ctzll(m));
        read_[lane] = write_[lane] = sc_core::SC_ZERO_TIME;
      }
      dirty_[w] = 0;
    }
    max_read_ = max_write_ = fill_ = sc_core::SC_ZERO_TIME;
    bytes_ = 0;
  }
  // How far lane `lane` has streamed in this direction (its next access
  // starts there).
  const sc_core::sc_time& lane_time(unsigned lane, bool is_write) const {
    return is_write ? write_[lane % kLanes] : read_[lane % kLanes];
  }
  void add(unsigned lane, bool is_write, const sc_core::sc_time& beats,
           const sc_core::sc_time& latency, std::uint64_t len) {
    // Index each array on its own: a conditional over the two arrays is
    // evaluated as a temporary by GCC 12 at -O0.
    const unsigned i = lane % kLanes;
    dirty_[i / 64] |= std::uint64_t{1} << (i % 64);
    sc_core::sc_time& l = is_write ? write_[i] : read_[i];
    l += beats;
    sc_core::sc_time& m = is_write ? max_write_ : max_read_;
    if (l > m) m = l;
    if (latency > fill_) fill_ = latency;
    bytes_ += len;
  }
  const sc_core::sc_time& max_read() const { return max_read_; }
  const sc_core::sc_time& max_write() const { return max_write_; }
  const sc_core::sc_time& fill() const { return fill_; }  // the longest access latency
  std::uint64_t bytes() const { return bytes_; }

 private:
  sc_core::sc_time read_[kLanes], write_[kLanes];
  sc_core::sc_time max_read_, max_write_, fill_;
  std::uint64_t dirty_[2] = {~std::uint64_t{0}, ~std::uint64_t{0}};  // lanes to clear
  std::uint64_t bytes_ = 0;
};

// Where an access of a stream is charged: its lane set, lane and direction.
struct StreamCharge {
  StreamLanes* lanes = nullptr;
  unsigned lane = 0;  // global partition
};

// THE cost of one access of `len` bytes at `addr` of a memory target,
// issued at sc_time_stamp() + `offset`: every path computes it here — the
// target's b_transport, DMI users through MemPort, and the sequencers'
// kernels. With an enabled arbiter it books the lane's bandwidth (call once
// per access). Outside a stream it returns latency + beats (+ stall); inside
// one (`stream` non-null) it adds the beats (+ stall) to the stream's lane
// and returns zero: the stream is charged as a whole.
inline sc_core::sc_time mem_access_cost(const MemTiming& t, BandwidthArbiter* arbiter,
                                        const sc_core::sc_time& offset, std::uint64_t len,
                                        std::uint64_t addr = 0, bool is_write = false,
                                        const StreamCharge* stream = nullptr) {
  const bool lanes = stream && stream->lanes;
  if (!arbiter || !arbiter->enabled()) {
    if (!lanes) return t.access_delay(len);
    stream->lanes->add(stream->lane, is_write, t.beats_time(len), t.latency, len);
    return sc_core::SC_ZERO_TIME;
  }
  // A stream's access starts where its lane has got to.
  const sc_core::sc_time at =
      lanes ? offset + stream->lanes->lane_time(stream->lane, is_write) : offset;
  const sc_core::sc_time full =
      arbiter->access(sc_core::sc_time_stamp(), at, len, arbiter->lane_of(addr, is_write));
  if (!lanes) return full;
  stream->lanes->add(stream->lane, is_write, full - t.latency, t.latency, len);
  return sc_core::SC_ZERO_TIME;
}

// Carries a stream charge on a b_transport payload to a target that
// understands it (PartitionedMemory); other targets charge the whole access.
class StreamChargeExtension : public tlm::tlm_extension<StreamChargeExtension> {
 public:
  StreamCharge charge;
  tlm::tlm_extension_base* clone() const override { return new StreamChargeExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const StreamChargeExtension&>(other);
  }
};

// Optional extension on a get_direct_mem_ptr payload. tlm_dmi carries only a
// flat latency; a target that understands this extension fills in its whole
// MemTiming so DMI accesses cost the same as b_transport ones. Targets that
// ignore it leave `filled` false and the flat DMI latency applies.
class DmiTimingExtension : public tlm::tlm_extension<DmiTimingExtension> {
 public:
  MemTiming timing;
  BandwidthArbiter* arbiter = nullptr;  // the target's, when contention is on
  bool filled = false;

  tlm::tlm_extension_base* clone() const override { return new DmiTimingExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const DmiTimingExtension&>(other);
  }
};

}  // namespace tpb::sc
