#include "models/sc/engine/timing_config.h"

namespace tpb::sc {

sc_core::sc_time engine_time(const TimingConfig& c, isa::Engine e, std::uint64_t cycles) {
  return sc_core::sc_time(static_cast<double>(TimingConfig::cycles_to_ps(cycles, c.clock(e))),
                          sc_core::SC_PS);
}

std::uint64_t engine_cycles(const TimingConfig& c, isa::Engine e, const sc_core::sc_time& t) {
  const double ps = t.to_seconds() * 1e12;
  return static_cast<std::uint64_t>(ps * c.clock(e) / 1e6 + 0.5);
}

sc_core::sc_time mem_cycles_time(const TimingConfig& c, std::uint64_t cycles) {
  return sc_core::sc_time(
      static_cast<double>(TimingConfig::cycles_to_ps(cycles, c.memory_clock_mhz)), sc_core::SC_PS);
}

MemTiming mem_timing(const TimingConfig& c, const MemCycles& m) {
  MemTiming t;
  t.latency = mem_cycles_time(c, m.latency_cycles);
  t.per_beat = mem_cycles_time(c, m.beat_cycles);
  t.beat_bytes = m.beat_bytes;
  t.contention_window = mem_cycles_time(c, m.contention_window_cycles);
  t.banks = m.banks;
  return t;
}

}  // namespace tpb::sc
