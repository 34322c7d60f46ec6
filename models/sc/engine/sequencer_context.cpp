#include "models/sc/engine/sequencer_context.h"

#include <string>

#include <fmt/format.h>

#include "models/race/detector.h"

namespace tpb::sc {

namespace {

std::string describe_addr(std::uint64_t addr) {
  const auto a = static_cast<std::uint32_t>(addr);
  switch (isa::region_of(a)) {
    case isa::Region::Sbuf:
      return fmt::format("sbuf partition {} offset 0x{:x}", isa::partition_of(a),
                         isa::offset_of(a));
    case isa::Region::Psum:
      return fmt::format("psum partition {} offset 0x{:x}", isa::partition_of(a),
                         isa::offset_of(a));
    case isa::Region::SfuTile:
      return "sfu tile file";
    case isa::Region::Control:
      return "control region";
  }
  return "";
}

}  // namespace

std::uint8_t* Sequencer::Context::direct(std::uint64_t addr, std::size_t len, bool for_write) {
  s_.flush_time();
  sc_core::sc_time d = s_.clock_.local_time();
  std::uint8_t* p = s_.port.direct(addr, len, for_write, d);
  s_.clock_.set_local_time(d);
  if (p) {
    note(addr, len, for_write);
    if (s_.pipeline_open_) s_.pattern_.access(addr, len, for_write);
  }
  return p;
}

void Sequencer::Context::begin_bundle(const fw::Bundle& b, std::uint64_t trips,
                                      std::uint32_t cycles) {
  // cycles x trips, saturating: a huge profile value must not wrap.
  std::uint64_t work;
  if (__builtin_mul_overflow(std::uint64_t{cycles}, trips, &work)) work = UINT64_MAX;
  if (b.stream) {
    if (!s_.pipeline_open_) s_.open_pipeline();
    s_.pipeline_compute_ =
        work > UINT64_MAX - s_.pipeline_compute_ ? UINT64_MAX : s_.pipeline_compute_ + work;
  } else if (s_.pipeline_open_) {
    s_.close_pipeline();
  }
  const std::uint64_t t = s_.now_ps();
  if (!s_.env_.control->proceed(t)) throw WatchdogStop{};
  // Field by field into the vector (a temporary copied in whole stalled
  // on store forwarding: its 16-byte loads spanned the 8- and 4-byte stores).
  // The observers hear of it when the instruction issues (Sequencer::issue).
  BundleRecord& rec = s_.bundles_.emplace_back();
  rec.bundle = &b;
  rec.start_ps = t;
  rec.end_ps = t;
  rec.trips = trips;
  rec.cycles = cycles;
  // A streaming bundle's step moves its data from the bundle's start (its
  // accesses book bandwidth there); its compute is on the clock at its end.
  if (b.stream)
    deferred_ = work;
  else
    s_.add_cycles(work);
}

void Sequencer::Context::end_bundle(const fw::Bundle&) {
  if (deferred_ != 0) {
    s_.add_cycles(deferred_);
    deferred_ = 0;
  }
  // Past a watchdog's stop the bundle is left open.
  const std::uint64_t t = s_.now_ps();
  if (!s_.env_.control->proceed(t)) throw WatchdogStop{};
  s_.bundles_.back().end_ps = t;
}

void Sequencer::Context::note(std::uint64_t addr, std::size_t len, bool is_write) {
  if (s_.race_) s_.race_->access(s_.race_core_, s_.engine_, addr, len, is_write);
  if (is_write) {
    s_.footprint_.write(addr, len);
    return;
  }
  if (s_.psum_reads_exempt_ &&
      isa::region_of(static_cast<std::uint32_t>(addr)) == isa::Region::Psum)
    return;  // the PE's PSUM accumulation: near memory, not interlocked
  s_.footprint_.read(addr, len);
}

void Sequencer::Context::access(std::uint64_t addr, void* data, std::size_t len, bool is_write) {
  if (len == 0) return;
  if (len > UINT32_MAX)
    throw fw::KernelFault(fmt::format("access of {} bytes at 0x{:07x} is too long", len, addr));
  // MemPort takes its DMI fast path itself, charged as b_transport would be.
  s_.flush_time();
  sc_core::sc_time d = s_.clock_.local_time();
  const auto n = static_cast<unsigned>(len);
  const tlm::tlm_response_status st =
      is_write ? s_.port.write(addr, data, n, d) : s_.port.read(addr, data, n, d);
  s_.clock_.set_local_time(d);
  if (st != tlm::TLM_OK_RESPONSE)
    throw fw::KernelFault(fmt::format("address error: {} of {} bytes at 0x{:07x} ({}): {}",
                                      is_write ? "write" : "read", len, addr, describe_addr(addr),
                                      tlm_status_name(st)));
  note(addr, len, is_write);
  if (s_.pipeline_open_) s_.pattern_.access(addr, len, is_write);
}

}  // namespace tpb::sc
