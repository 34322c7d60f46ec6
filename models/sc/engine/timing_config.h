// The timing profile at the SystemC edge (SPEC §8): the integer profile of
// models/timing/timing_profile.h turned into sc_time for the memories, the
// sequencers and the trace timestamps. Nothing else converts cycles to
// sc_time.
#pragma once

#include <cstdint>

#include <systemc>

#include "models/isa/address_map.h"
#include "models/sc/engine/dma_check.h"
#include "models/sc/memory/hbm_memory.h"
#include "models/sc/memory/mem_timing.h"
#include "models/timing/timing_profile.h"

namespace tpb::sc {

// Picoseconds of a simulated time, rounded to nearest (trace timestamps).
// The model runs at SystemC's default time resolution, 1 ps (checked by
// check_time_resolution()), so a time's value is its picoseconds: the
// conversions are exact integer copies, not floating-point arithmetic.
inline std::uint64_t to_ps(const sc_core::sc_time& t) { return t.value(); }
inline sc_core::sc_time ps_time(std::uint64_t ps) { return sc_core::sc_time::from_value(ps); }
// Throws std::logic_error unless the time resolution is 1 ps.
void check_time_resolution();
// The duration of `cycles` of engine `e`.
sc_core::sc_time engine_time(const timing::TimingConfig& c, isa::Queue e, std::uint64_t cycles);
// Engine cycles (rounded to nearest) of a duration.
std::uint64_t engine_cycles(const timing::TimingConfig& c, isa::Queue e, const sc_core::sc_time& t);
// The duration of `cycles` of the memory clock.
sc_core::sc_time mem_cycles_time(const timing::TimingConfig& c, std::uint64_t cycles);
// MemTiming of a target for the memory modules and for DMI users.
MemTiming mem_timing(const timing::TimingConfig& c, const timing::MemCycles& m);
// The HBM's latency and bandwidth (profile "hbm"; its capacity is hbm.bytes).
HbmTiming hbm_timing(const timing::TimingConfig& c);
// The capacities a DMA descriptor is checked against (has_hbm: true).
DmaCapacities dma_capacities(const timing::TimingConfig& c, std::uint64_t hbm_capacity);

}  // namespace tpb::sc
