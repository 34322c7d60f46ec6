// Access timing of a memory-like TLM target and the DMI timing extension that
// lets a DMI user charge exactly what b_transport would have charged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>

#include <systemc>
#include <tlm>

namespace tpb::sc {

struct MemTiming {
  sc_core::sc_time latency;   // fixed cost of one access
  sc_core::sc_time per_beat;  // bandwidth: one beat of beat_bytes
  unsigned beat_bytes = 64;
  // Bandwidth contention between initiators (SPEC §8). Zero: off, every
  // access costs access_delay(len). Otherwise the target's beats are booked in
  // windows of this length (see BandwidthArbiter).
  sc_core::sc_time contention_window;

  // latency + ceil(len / beat_bytes) * per_beat; beat_bytes == 0 means "no
  // bandwidth term" rather than a division by zero.
  sc_core::sc_time access_delay(std::uint64_t len) const {
    if (beat_bytes == 0) return latency;
    const std::uint64_t beats = (len + beat_bytes - 1) / beat_bytes;
    return latency + per_beat * static_cast<double>(beats);
  }
};

// Books the beats of one memory target (an SBUF quadrant, the PSUM) so that
// initiators sharing it slow each other down. Time is cut into windows of
// MemTiming::contention_window; a window holds window / per_beat beats. An
// access books its beats from the window of its start time onward, and ends
// no earlier than the window's booked load would finish. Booking per window
// rather than "busy until" keeps the model insensitive to the order in which
// temporally decoupled initiators (each ahead of sc_time_stamp() by its own
// local offset) happen to run: an access is only delayed by beats booked in
// its own or earlier windows.
class BandwidthArbiter {
 public:
  explicit BandwidthArbiter(const MemTiming& t) : t_(t) {
    window_ = t.contention_window.value();
    beat_ = t.per_beat.value();
    enabled_ = window_ != 0 && beat_ != 0 && t.beat_bytes != 0;
    cap_ = enabled_ ? std::max<std::uint64_t>(1, window_ / beat_) : 0;
  }
  bool enabled() const { return enabled_; }

  // The delay to add for a `len`-byte access issued at now + offset:
  // t.access_delay(len) plus any wait for bandwidth booked by others.
  sc_core::sc_time access(sc_core::sc_time now, sc_core::sc_time offset, std::uint64_t len) {
    if (!enabled_) return t_.access_delay(len);
    const std::uint64_t beats = (len + t_.beat_bytes - 1) / t_.beat_bytes;
    const std::uint64_t start = now.value() + offset.value();
    // Windows before the current time can receive no more accesses.
    const std::uint64_t now_bin = now.value() / window_;
    while (base_ < now_bin && !used_.empty()) {
      used_.pop_front();
      ++base_;
    }
    if (used_.empty()) base_ = std::max(base_, now_bin);
    std::uint64_t bin = std::max(start / window_, base_);
    std::uint64_t remaining = beats;
    for (;;) {
      if (bin - base_ >= used_.size()) used_.resize(bin - base_ + 1, 0);
      std::uint64_t& u = used_[bin - base_];
      const std::uint64_t take = std::min(cap_ - u, remaining);
      u += take;
      remaining -= take;
      if (remaining == 0) break;
      ++bin;
    }
    const std::uint64_t alone = start + beats * beat_;
    const std::uint64_t packed = bin * window_ + used_[bin - base_] * beat_;
    const std::uint64_t stall = packed > alone ? packed - alone : 0;
    stall_ += stall;
    return t_.latency + sc_core::sc_time::from_value(beats * beat_ + stall);
  }
  // Total time accesses waited for bandwidth (for stats).
  sc_core::sc_time total_stall() const { return sc_core::sc_time::from_value(stall_); }

 private:
  MemTiming t_;
  std::uint64_t window_ = 0, beat_ = 0, cap_ = 0;
  bool enabled_ = false;
  std::deque<std::uint64_t> used_;  // beats booked per window, from window base_
  std::uint64_t base_ = 0;
  std::uint64_t stall_ = 0;
};

// THE cost of one access of `len` bytes to a memory target issued at
// sc_time_stamp() + `offset`: every path computes it here — the target's
// b_transport, DMI users through MemPort, and the sequencers' kernels. With
// an enabled arbiter it books the target's bandwidth (call once per access).
inline sc_core::sc_time mem_access_cost(const MemTiming& t, BandwidthArbiter* arbiter,
                                        const sc_core::sc_time& offset, std::uint64_t len) {
  if (arbiter && arbiter->enabled()) return arbiter->access(sc_core::sc_time_stamp(), offset, len);
  return t.access_delay(len);
}

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

// Shared checks of the generic payload attributes every target in this folder
// performs before touching storage (TLM-2.0 base protocol, SPEC: errors are
// response statuses, never asserts).
inline bool streaming_width_ok(const tlm::tlm_generic_payload& t) {
  return t.get_streaming_width() >= t.get_data_length();
}

}  // namespace tpb::sc
