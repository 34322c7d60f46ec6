// Run statistics as JSON (SPEC §9 `--stats FILE`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/trace/stats.h"

namespace tpb::trace {

// Keys: arch, program, status, message, simulated_ps, simulated_ns,
// wall_seconds, engines: [{name, clock_mhz, instructions, busy_cycles,
// stall_cycles, memory_stall_cycles, bundles: {name: count}, bytes_read, bytes_written}],
// memories: [{name, bytes_read, bytes_written}], sfu: {flags: {inexact,
// saturated, wrapped}, tiles, units_used}, engine_active (engine_active()).
nlohmann::json stats_to_json(const RunStats& s);

// "Engine active" as the profiler reports it: {engine: the fraction of the
// run's time (simulated_ps - start_ps) it had an instruction in flight} for
// every compute engine, and "dma" (a device: "coreK.dma") for the time any
// DMA engine was busy with a transfer.
nlohmann::json engine_active(const RunStats& s);

// Writes stats_to_json(s), indented, to `path`; throws std::runtime_error
// naming `path` on I/O failure.
void write_stats(const RunStats& s, const std::string& path);

}  // namespace tpb::trace
