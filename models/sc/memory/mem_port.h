// An engine's memory initiator (a child module of the engine, bound to the
// router's target_socket). read()/write() use DMI when the target grants it
// (a memcpy plus a latency add, no allocation) and b_transport otherwise.
// Also counts the bytes moved per memory, for traces and stats.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/isa/address_map.h"
#include "models/sc/memory/mem_timing.h"

namespace tpb::sc {

// The name of a TLM response status, for fault messages.
inline const char* tlm_status_name(tlm::tlm_response_status s) {
  switch (s) {
    case tlm::TLM_OK_RESPONSE:
      return "TLM_OK_RESPONSE";
    case tlm::TLM_INCOMPLETE_RESPONSE:
      return "TLM_INCOMPLETE_RESPONSE";
    case tlm::TLM_GENERIC_ERROR_RESPONSE:
      return "TLM_GENERIC_ERROR_RESPONSE";
    case tlm::TLM_ADDRESS_ERROR_RESPONSE:
      return "TLM_ADDRESS_ERROR_RESPONSE";
    case tlm::TLM_COMMAND_ERROR_RESPONSE:
      return "TLM_COMMAND_ERROR_RESPONSE";
    case tlm::TLM_BURST_ERROR_RESPONSE:
      return "TLM_BURST_ERROR_RESPONSE";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE:
      return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
  }
  return "unknown response";
}

class MemPort : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<MemPort> socket;

  explicit MemPort(sc_core::sc_module_name name);

  // Global (router) addresses. `delay` is the initiator's local time offset;
  // the access cost is added to it. A zero-length access is a no-op (OK).
  // An SBUF/PSUM access that crosses a partition boundary always goes to the
  // target (and gets its address error) even inside a DMI region.
  tlm::tlm_response_status read(std::uint64_t addr, void* dst, unsigned len,
                                sc_core::sc_time& delay);
  tlm::tlm_response_status write(std::uint64_t addr, const void* src, unsigned len,
                                 sc_core::sc_time& delay);
  // read() of control bytes the model itself needs (an instruction word):
  // copied in a timing-only run too.
  tlm::tlm_response_status read_control(std::uint64_t addr, void* dst, unsigned len,
                                        sc_core::sc_time& delay);

  struct DmiSpan {
    std::uint8_t* ptr;  // points at `addr`
    sc_core::sc_time read_latency, write_latency;
    // Added: the target's full timing when it reported it (DmiTimingExtension),
    // so a caller can charge access_delay(len) as b_transport would.
    std::optional<MemTiming> timing;
    // Added: the target's bandwidth booking when contention is modelled; a
    // caller moving N bytes through ptr charges
    // arbiter->access(sc_time_stamp(), delay, N) instead of a fixed latency.
    BandwidthArbiter* arbiter = nullptr;
    // Added: what moving `len` bytes through ptr costs, exactly as read() /
    // write() charge it: mem_access_cost() with the target's timing (booking
    // bandwidth when contention is on: call once per access), else the flat
    // DMI latency. `local_offset`: the caller's local time ahead of
    // sc_time_stamp().
    sc_core::sc_time cost(std::uint64_t len, const sc_core::sc_time& local_offset,
                          bool is_write) const;
    std::uint64_t addr = 0;                // the address ptr points at (picks the arbiter's lane)
    const StreamCharge* stream = nullptr;  // the port's open stream, if any
  };
  // A pointer to `addr` when [addr, addr + len) lies inside one granted DMI
  // region with the needed access (requesting DMI if not cached), else nullopt.
  // Callers that move data through the pointer call account() themselves.
  std::optional<DmiSpan> dmi(std::uint64_t addr, std::uint64_t len, bool for_write);
  // dmi() for one access: the pointer, with its cost added to `delay` and its
  // bytes counted (read()/write() use it for their fast path); nullptr when
  // DMI does not cover the access (nothing charged).
  std::uint8_t* direct(std::uint64_t addr, std::uint64_t len, bool for_write,
                       sc_core::sc_time& delay);

  // Timing-only (SPEC §13): read() and write() served through DMI copy no
  // bytes (they are charged and counted as usual); b_transport accesses
  // (targets without DMI) still move theirs.
  void set_timing_only(bool on) { timing_only_ = on; }

  // Counter indices follow the memory-name table (isa::CoreMemory).
  enum : unsigned {
    kCountSbufQ0 = static_cast<unsigned>(isa::CoreMemory::SbufQ0),
    kCountSbufQ1 = static_cast<unsigned>(isa::CoreMemory::SbufQ1),
    kCountSbufQ2 = static_cast<unsigned>(isa::CoreMemory::SbufQ2),
    kCountSbufQ3 = static_cast<unsigned>(isa::CoreMemory::SbufQ3),
    kCountPsum = static_cast<unsigned>(isa::CoreMemory::Psum),
    kCountOther = isa::kNumDataMemories,
    kNumCounters = isa::kNumDataMemories + 1
  };
  // Streams (SPEC §8): between begin_stream and end_stream every SBUF / PSUM
  // access of this port is charged to `lanes` (its partition's read or write
  // lane) instead of to the caller's delay. Other targets charge as usual.
  void begin_stream(StreamLanes* lanes) { stream_ = lanes; }
  void end_stream() { stream_ = nullptr; }
  bool streaming() const { return stream_ != nullptr; }

  // SBUF quadrant 0..3 by partition / 32, PSUM, or anything else.
  static unsigned counter_index(std::uint64_t addr);
  using Counts = std::array<std::uint64_t, kNumCounters>;
  // Bytes moved, summed over every port that shares it (a core's ports:
  // the traces' per-memory byte counters read it on every retire).
  struct Totals {
    Counts read{}, written{};
  };
  // The port adds what it moves to `t` as well (null: no totals). What it
  // has counted already is added at once, and removed from the old totals.
  void share_totals(Totals* t) {
    add_to_totals(-1);
    totals_ = t;
    add_to_totals(+1);
  }

  void account(std::uint64_t addr, std::uint64_t len, bool is_write) {
    const unsigned i = counter_index(addr);
    (is_write ? written_ : read_)[i] += len;
    if (totals_) (is_write ? totals_->written : totals_->read)[i] += len;
  }
  const Counts& bytes_read() const { return read_; }
  const Counts& bytes_written() const { return written_; }
  // Sets the counters back (the sequencer's stats after a fault); the shared
  // totals follow.
  void set_counts(const Counts& rd, const Counts& wr) {
    add_to_totals(-1);
    read_ = rd;
    written_ = wr;
    add_to_totals(+1);
  }

  // Number of get_direct_mem_ptr calls made so far (for tests and stats).
  std::uint64_t dmi_requests() const { return dmi_requests_; }

 private:
  // A cached DMI answer over [start, end] (inclusive): granted or denied.
  struct Region {
    std::uint64_t start, end;
    std::uint8_t* ptr;  // pointer to `start`; null when denied
    bool can_read, can_write;
    sc_core::sc_time read_latency, write_latency;
    MemTiming timing;
    BandwidthArbiter* arbiter;  // target's bandwidth booking, when contended
    bool has_timing;
  };

  // The cached region holding `addr`, requesting DMI once if none does.
  const Region* lookup(std::uint64_t addr);
  // The region when [addr, addr+len) may be served through DMI, else null.
  const Region* dmi_region(std::uint64_t addr, std::uint64_t len, bool for_write);
  // read() and read_control(): through DMI when granted, copying the bytes
  // when `copy`; else b_transport, which always moves them.
  tlm::tlm_response_status read_into(std::uint64_t addr, void* dst, unsigned len,
                                     sc_core::sc_time& delay, bool copy);
  tlm::tlm_response_status transport(tlm::tlm_command cmd, std::uint64_t addr, void* data,
                                     unsigned len, sc_core::sc_time& delay);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

  std::vector<Region> regions_;
  std::size_t last_ = 0;   // index of the last hit, checked first
  std::size_t other_ = 0;  // ... and of the hit before it
  tlm::tlm_generic_payload trans_;
  DmiTimingExtension dmi_ext_;
  StreamChargeExtension stream_ext_;
  StreamLanes* stream_ = nullptr;
  // The charge of an access at addr: the open stream's lane for SBUF / PSUM.
  bool stream_charge(std::uint64_t addr, StreamCharge& out) const;
  Counts read_{};
  Counts written_{};
  Totals* totals_ = nullptr;
  // This port's counts added to (+1) or taken from (-1) the shared totals.
  void add_to_totals(int sign) {
    if (!totals_) return;
    for (unsigned i = 0; i < kNumCounters; ++i) {
      totals_->read[i] += sign > 0 ? read_[i] : -read_[i];
      totals_->written[i] += sign > 0 ? written_[i] : -written_[i];
    }
  }
  std::uint64_t dmi_requests_ = 0;
  bool timing_only_ = false;
};

}  // namespace tpb::sc
