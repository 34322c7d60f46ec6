#include "models/sc/engine/timing_config.h"

#include <stdexcept>

namespace tpb::sc {

void check_time_resolution() {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw std::logic_error("tpbsim models run at a time resolution of 1 ps, not " +
                           sc_core::sc_get_time_resolution().to_string());
}

sc_core::sc_time engine_time(const timing::TimingConfig& c, isa::Queue e, std::uint64_t cycles) {
  return ps_time(timing::TimingConfig::cycles_to_ps(cycles, c.clock(e)));
}

std::uint64_t engine_cycles(const timing::TimingConfig& c, isa::Queue e,
                            const sc_core::sc_time& t) {
  // Rounded to nearest. ps x MHz can overflow 64 bits: then in 128-bit
  // integers; else in 64, where the division by the constant is a multiply
  // (the 128-bit one is a library call, and this runs on every retire).
  std::uint64_t v;
  if (!__builtin_mul_overflow(to_ps(t), std::uint64_t{c.clock(e)}, &v) &&
      !__builtin_add_overflow(v, std::uint64_t{500000}, &v))
    return v / 1000000;
  const unsigned __int128 w = static_cast<unsigned __int128>(to_ps(t)) * c.clock(e) + 500000;
  return static_cast<std::uint64_t>(w / 1000000);
}

sc_core::sc_time mem_cycles_time(const timing::TimingConfig& c, std::uint64_t cycles) {
  return ps_time(timing::TimingConfig::cycles_to_ps(cycles, c.memory_clock_mhz));
}

MemTiming mem_timing(const timing::TimingConfig& c, const timing::MemCycles& m) {
  MemTiming t;
  t.latency = mem_cycles_time(c, m.latency_cycles);
  t.per_beat = mem_cycles_time(c, m.beat_cycles);
  t.beat_bytes = m.beat_bytes;
  t.contention_window = mem_cycles_time(c, m.contention_window_cycles);
  t.banks = m.banks;
  return t;
}

HbmTiming hbm_timing(const timing::TimingConfig& c) {
  HbmTiming t;
  t.latency = ps_time(std::uint64_t{c.hbm.latency_ns} * 1000);
  t.bytes_per_s = std::uint64_t{c.hbm.mbytes_per_s} * 1000000;
  return t;
}

DmaCapacities dma_capacities(const timing::TimingConfig& c, std::uint64_t hbm_capacity) {
  DmaCapacities caps;
  caps.hbm_bytes = hbm_capacity;
  caps.sbuf_bytes_per_partition = c.sbuf_bytes_per_partition;
  return caps;
}

}  // namespace tpb::sc
