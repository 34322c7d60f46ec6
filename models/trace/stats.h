// Run statistics (pure C++): filled by the engines, written as JSON by
// stats_writer.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpb::trace {

struct EngineStats {
  std::string name;  // "pool", "dve", "pe", "sfu"
  double clock_mhz = 0;
  std::uint64_t instructions = 0;  // retired
  // Time with at least one instruction of the engine in flight (issued, not
  // completed), in engine cycles.
  std::uint64_t busy_cycles = 0;
  std::uint64_t stall_cycles = 0;  // semaphore waits
  // Memory time of pipelined streams beyond their compute (the slowest
  // partition lane, bandwidth stalls included), in engine cycles.
  std::uint64_t memory_stall_cycles = 0;
  // Waits for an instruction the fetch DMA had not yet brought into the
  // queue's ring (TimingConfig::fetch), in engine cycles.
  std::uint64_t fetch_stall_cycles = 0;
  // Waits of an instruction for an earlier instruction of the same engine
  // whose results it reads (the interlock of SPEC §8), in engine cycles.
  std::uint64_t interlock_stall_cycles = 0;
  std::map<std::string, std::uint64_t> bundles;  // bundle name -> issues (x trip count)
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::map<std::string, std::uint64_t> counters;  // kernel counters ("macs" ...)
};

struct MemoryStats {
  std::string name;  // "sbuf.q0".."sbuf.q3", "psum"
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
};

// The SFU's sticky numeric flags and tile-file occupancy (SPEC §6).
struct SfuStats {
  bool inexact = false, saturated = false, wrapped = false;
  std::uint64_t tiles = 0;       // allocated Local tiles
  std::uint64_t units_used = 0;  // TSize units in use (of 256)
};

// One trace file a run wrote (--vcd, --perfetto): its size as written.
struct TraceFileStats {
  std::string kind;  // "vcd", "perfetto"
  std::string path;
  std::uint64_t bytes = 0;
  std::uint64_t events = 0;  // value changes (VCD) or trace events (Perfetto) written
};

// Co-simulation with RTL (SPEC §9 --cosim; docs/COSIM.md): one block kind
// whose RTL ran beside the model (the POOL's TensorDequantize lanes, the
// DVE's QuantizeMX blocks).
struct CosimBlockStats {
  std::string kind;                      // "dequant", "quantize_mx"
  std::string dut;                       // the RTL's top module (and test variant)
  double clock_mhz = 0;                  // the RTL's clock (its engine's clock)
  std::uint64_t instructions = 0;        // instructions the RTL ran
  bool counts_blocks = false;            // compares blocks of words (quantize_mx), not words
  std::uint64_t blocks_compared = 0;     // with counts_blocks: blocks checked (scale and words)
  std::uint64_t words_compared = 0;      // output words checked against the model
  std::uint64_t mismatches = 0;          // words (and quantize_mx scales) that differ
  std::uint64_t source_words = 0;        // words fed to the RTL, all lanes
  std::uint64_t rtl_cycles = 0;          // RTL clock cycles, summed over instructions
  std::uint64_t max_latency_cycles = 0;  // first input taken to first output given, worst lane
  std::uint64_t stretched_ps = 0;        // time the RTL added beyond the model's
  std::uint64_t stretched_instructions = 0;
};
// Present only in a co-simulated run: every block kind co-simulated.
struct CosimStats {
  bool enabled = false;
  std::vector<CosimBlockStats> blocks;
  std::uint64_t words_compared() const;  // over every kind
  std::uint64_t mismatches() const;
  std::uint64_t stretched_ps() const;
};

struct RunStats {
  std::string arch;
  std::string program;
  std::vector<EngineStats> engines;
  std::vector<MemoryStats> memories;
  std::uint64_t simulated_ps = 0;
  std::uint64_t start_ps = 0;  // the run's start (simulated_ps - start_ps: its time)
  // Time any DMA engine of a core was busy with a transfer (the profiler's
  // "DMA active"), keyed "dma" (a device's "coreK.dma"), when a DMA queue ran.
  std::map<std::string, std::uint64_t> dma_active_ps;
  double wall_seconds = 0;
  std::string status = "ok";  // "ok", "fault", "deadlock"
  std::string message;        // fault / deadlock description
  bool timing_only = false;   // SPEC §13: "mode": "timing-only", values not computed
  SfuStats sfu;
  std::vector<TraceFileStats> traces;
  CosimStats cosim;
  // The race check (SPEC §14), when the run had it: its report
  // (race::report_json); null otherwise, and the key is left out.
  nlohmann::json races;
};

}  // namespace tpb::trace
