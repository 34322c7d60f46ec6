// The timing profile of one core (SPEC §8): one typed struct per generation,
// integers of cycles and clocks in MHz. Pure C++: the firmware stubs read it
// without SystemC; models/sc/engine/timing_config.h turns it into sc_time at
// the edge. Loaded from JSON with every value overridable and dumpable as the
// effective profile (`tpbsim run --timing / --dump-timing`).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/names.h"

namespace tpb::timing {

// Latency and bandwidth of one memory target, in cycles of the memory clock.
struct MemCycles {
  std::uint32_t latency_cycles = 0;  // fixed cost of one access
  std::uint32_t beat_cycles = 0;     // cost of one beat of beat_bytes
  std::uint32_t beat_bytes = 64;
  // Bandwidth contention between engines (SPEC §8): the target's beats are
  // booked in windows of this many cycles (BandwidthArbiter); 0 = off.
  std::uint32_t contention_window_cycles = 0;
  // Banks per partition, 1..64; accesses contend only within one bank (1:
  // the whole partition). The PSUM has 8 banks of 2 KiB (TIMING.md).
  std::uint32_t banks = 1;
};

// n / mhz, exact, for a divisor fixed per clock: one 128-bit multiply by
// the divisor's reciprocal and at most three corrections instead of the
// hardware's 64-bit divide (tens of cycles, ten times an instruction).
class ClockDivider {
 public:
  explicit ClockDivider(std::uint32_t mhz = 1)
      : mhz_(mhz), d_(mhz > 1 ? mhz : 1), inv_(UINT64_MAX / d_) {}
  std::uint32_t mhz() const { return mhz_; }
  std::uint64_t quotient(std::uint64_t n) const {
    // inv_ >= 2^64 / d - 1, so the estimate is at most 2 below n / d.
    std::uint64_t q = static_cast<std::uint64_t>((static_cast<unsigned __int128>(n) * inv_) >> 64);
    std::uint64_t r = n - q * d_;
    while (r >= d_) {
      ++q;
      r -= d_;
    }
    return q;
  }

 private:
  std::uint32_t mhz_;
  std::uint64_t d_;
  std::uint64_t inv_;
};

struct TimingConfig {
  std::string arch;  // generation the defaults came from ("mariana", ...)

  // Every number below is a row of the one table of timing fields
  // (timing_fields(): JSON key, limits, unit, per-generation default and
  // source); default_timing() fills them from it. Engine arrays are indexed
  // by isa::engine_index (pool, dve, pe, sfu, act).

  // Engine clocks (SPEC §8).
  std::uint32_t clock_mhz[isa::kNumEngines] = {};

  // Pipelining across instructions (SPEC §8, TIMING.md "Public cost model"):
  // an instruction holds its engine's issue for its initiation interval
  // (II) and lands its results at its latency. The latency is the whole
  // instruction: the front end, every bundle, every pipeline's fill.
  //  - instruction_overhead_cycles: the front end (decode, semaphore check,
  //    kernel_info lookup, trampoline entry), latency only: it overlaps the
  //    previous instruction of the engine;
  //  - issue_overhead_cycles: a fixed cost that holds the issue (GpSimd's
  //    software startup);
  //  - the II is the issue overhead + the instruction's streaming
  //    pipelines (compute or memory, whichever is longer; not their fill),
  //    at least min_ii_cycles; an instruction whose streams take fewer than
  //    pipeline_min_stream_cycles holds the issue for its whole latency
  //    (the Vector engine's static overhead on runs of short instructions).
  std::uint32_t instruction_overhead_cycles[isa::kNumEngines] = {};
  std::uint32_t issue_overhead_cycles[isa::kNumEngines] = {};
  std::uint32_t min_ii_cycles[isa::kNumEngines] = {};
  std::uint32_t pipeline_min_stream_cycles[isa::kNumEngines] = {};

  // Access patterns (TIMING.md [A, O]; docs/CONVENTIONS.md "Sequencer,
  // kernels and timing"), applied to every kernel's accesses by the
  // sequencer, not by the kernels:
  //  - an instruction with a register-addressed (dynamic) operand holds the
  //    issue for at least min_ii_dynamic_cycles (MIN_II_DYNAMIC, [O]), its
  //    latency with it; 0: no floor;
  //  - a stream's accesses of at most wide_stride_bytes, each more than
  //    wide_stride_bytes from the previous access of its partition lane and
  //    as far as that one from the one before (a walk whose innermost stride
  //    exceeds 16 bytes [A]: AccessPattern), take the lane's interface
  //    wide_stride_cost_percent longer than the stream's compute in
  //    proportion to their share of the lane's bytes (100: half the
  //    bandwidth, twice the cycles); 0: off.
  std::uint32_t min_ii_dynamic_cycles[isa::kNumEngines] = {};
  std::uint32_t wide_stride_cost_percent[isa::kNumEngines] = {};
  std::uint32_t wide_stride_bytes = 0;

  // Memory targets; cycles of memory_clock_mhz.
  std::uint32_t memory_clock_mhz = 0;
  MemCycles sbuf, psum, queue, control;

  // Capacities (SPEC §2), bytes per partition.
  std::uint32_t sbuf_bytes_per_partition = 0;
  std::uint32_t psum_bytes_per_partition = 0;

  // POOL (GpSimd, TIMING.md): 8 cores with a 512-bit SIMD each; the 128
  // partitions are split over the cores (16 each), so a core moves
  // pool_vector_bytes / (128 / pool_cores) = 4 bytes of every partition per
  // cycle, whatever the number of active channels.
  std::uint32_t pool_cores = 0;
  std::uint32_t pool_vector_bytes = 0;

  // PE MX row pumping per MX_PERF_MODE (seed 003 §3.3: 0 none, 1..3
  // QUAD_ROW[_INTERLEAVE|_TILED], 4..6 OCT_ROW[...]): contraction values per
  // PE per cycle. The MAC loop of an MX matmul runs max(64, ceil(4 N / pump))
  // trips, so 4 (the MX default, TIMING.md [C, H]) is max(64, N). Timing
  // only; values never change.
  std::uint32_t pe_mx_row_pump[isa::kNumMxPerfModes] = {};

  // Bundle issue-cycle overrides by bundle name ("pool.mx8.loop" ...); a
  // bundle without an entry uses the cycles of its firmware stub. Names are
  // checked against the kernels when the costs are resolved
  // (fw::KernelRegistry::resolve_costs): a misspelt name is an error.
  std::map<std::string, std::uint32_t> bundle_issue_cycles;

  // Global quantum of the quantum keepers (temporal decoupling), ns.
  std::uint32_t quantum_ns = 0;

  // Instruction fetch (SPEC §7, §9), JSON "instruction_fetch": each engine's
  // queue is a ring of fetch.ring_words 64-byte words that the fetch unit
  // refills from DRAM by DMA, fetch.batch_words at a time, as the sequencer
  // frees slots. The program's first ring-full is in the queue when the run
  // starts (the runtime loads it).
  struct Fetch {
    std::uint32_t ring_words = 0;  // 1..16384 (the 1 MiB queue window)
    std::uint32_t batch_words = 0;
    std::uint32_t mbytes_per_s = 0;
    std::uint32_t latency_ns = 0;
  } fetch;

  // HBM of one core (SPEC §10), JSON "hbm": the device's capacity and
  // bandwidth over its cores. Every access pays the latency (a convention:
  // the docs are silent on HBM latency).
  struct Hbm {
    std::uint64_t bytes = 0;  // 1..2^40 (the core's HBM window)
    std::uint32_t mbytes_per_s = 0;
    std::uint32_t latency_ns = 0;
  } hbm;

  // DMA engines and queues (SPEC §10, TIMING.md [J, K]), JSON "dma": a
  // core's `engines` DMA engines each serve the core's 16 queues, one
  // transfer at a time, weighted round robin by queue_weights; a transfer
  // is split over the engines by SBUF partition (128 / engines partitions
  // each); latency_ns from the semaphore that triggers a transfer to its
  // start. Per-transfer costs (docs/CONVENTIONS.md "DMA"): a queue starts
  // at most one transfer per transfer_cost_ns on an engine (overlapping the
  // engine's work for other queues), and an engine spends engine_cost_ns on
  // every transfer it has data for, then moves it at mbytes_per_s.
  struct Dma {
    std::uint32_t engines = 0;       // 1..128
    std::uint32_t mbytes_per_s = 0;  // per engine
    std::uint32_t latency_ns = 0;
    std::uint32_t transfer_cost_ns = 0;                    // per queue and engine
    std::uint32_t engine_cost_ns = 0;                      // per engine
    std::uint32_t queue_weights[isa::kNumDmaQueues] = {};  // 1..
  } dma;

  // A DMA queue counts its cycles (stats, stalls) at the memory clock and
  // has no per-instruction overhead: its descriptor's time is the "dma"
  // latency and transfer (docs/CONVENTIONS.md).
  std::uint32_t clock(isa::Queue e) const {
    return isa::is_compute_engine(e) ? clock_mhz[isa::engine_index(e)] : memory_clock_mhz;
  }
  // Engine e's value of a per-engine array (0 for a DMA queue): a new
  // per-engine knob needs no accessor of its own.
  static std::uint32_t per_engine(const std::uint32_t (&v)[isa::kNumEngines], isa::Queue e) {
    return isa::is_compute_engine(e) ? v[isa::engine_index(e)] : 0;
  }
  std::uint32_t overhead(isa::Queue e) const { return per_engine(instruction_overhead_cycles, e); }
  std::uint32_t issue_overhead(isa::Queue e) const { return per_engine(issue_overhead_cycles, e); }
  std::uint32_t min_ii(isa::Queue e) const { return per_engine(min_ii_cycles, e); }
  std::uint32_t pipeline_min_stream(isa::Queue e) const {
    return per_engine(pipeline_min_stream_cycles, e);
  }
  std::uint32_t min_ii_dynamic(isa::Queue e) const { return per_engine(min_ii_dynamic_cycles, e); }
  std::uint32_t wide_stride_cost(isa::Queue e) const {
    return per_engine(wide_stride_cost_percent, e);
  }
  // SBUF partitions each DMA engine carries (engine e: partitions
  // e * n .. e * n + n - 1).
  std::uint32_t dma_partitions_per_engine() const {
    const std::uint32_t n = dma.engines == 0 ? 1 : dma.engines;
    return (isa::kNumPartitions + n - 1) / n;
  }
  // Bytes of each partition the POOL moves per cycle (at least 1).
  std::uint32_t pool_bytes_per_partition_cycle() const;

  // The longest simulated time the model runs to: 2^62 ps (about 53 days),
  // far inside SystemC's 64-bit time, so no sum of times wraps.
  static constexpr std::uint64_t kMaxPs = std::uint64_t{1} << 62;
  // Picoseconds of `cycles` at `mhz`, rounded to nearest; saturates at
  // kMaxPs. Inline on its 64-bit path (every bundle of every instruction
  // asks); a product that would not fit goes through 128 bits, the same
  // rounding. A caller that converts at one clock again and again keeps its
  // ClockDivider (no hardware divide per call).
  static constexpr std::uint64_t kNarrowCycles = (UINT64_MAX - UINT32_MAX) / 1000000u;
  static std::uint64_t cycles_to_ps(std::uint64_t cycles, std::uint32_t mhz) {
    return cycles_to_ps(cycles, ClockDivider(mhz));
  }
  static std::uint64_t cycles_to_ps(std::uint64_t cycles, const ClockDivider& clock) {
    if (cycles < kNarrowCycles) {
      const std::uint64_t ps = clock.quotient(cycles * 1000000u + clock.mhz() / 2);
      return ps < kMaxPs ? ps : kMaxPs;
    }
    return cycles_to_ps_wide(cycles, clock.mhz());
  }
  static std::uint64_t cycles_to_ps_wide(std::uint64_t cycles, std::uint32_t mhz);
  // The longest one memory access may take (about 1.1 s): merge_timing
  // refuses a memory profile whose access of a whole partition takes longer,
  // so millions of accesses in one instruction still sum far below 2^64 ps.
  static constexpr std::uint64_t kMaxAccessPs = std::uint64_t{1} << 40;
};

// A bad profile: unknown key, wrong type, zero clock, unknown bundle. The
// message names the key path ("clocks_mhz.pool") and, when loaded from a
// file, the file.
class TimingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One row of the table of timing fields: every number of TimingConfig but
// the bundle overrides. A knob is its member here and one row
// (timing_fields.cpp) plus its use (docs/ARCHITECTURE.md "Adding a timing
// knob").
struct TimingField {
  std::string key;         // dotted JSON path: "hbm.mbytes_per_s", "clocks_mhz.pe"
  std::string source_key;  // its entry under "sources" (the key, or its group's)
  std::uint64_t min = 0, max = UINT32_MAX;
  std::string unit;  // "MHz", "engine cycles", "bytes", ...
  std::uint64_t (*get)(const TimingConfig&, unsigned) = nullptr;
  void (*set)(TimingConfig&, unsigned, std::uint64_t) = nullptr;
  unsigned slot = 0;               // the array index a per-engine / per-mode / per-queue row sets
  std::uint64_t defaults[4] = {};  // by isa::Arch (sunda, cayman, mariana, maverick)
  std::string (*source)(isa::Arch) = nullptr;
  // The message when a value is past `max` (empty: "at most MAX").
  std::string max_note;
};
// The table, in the order the profile is written.
const std::vector<TimingField>& timing_fields();

// The defaults of a generation, from the table (SPEC §8).
TimingConfig default_timing(isa::Arch arch);
// The "sources" object of a profile: the source of every default number of
// `arch` (TIMING.md's [A]..[N], or "convention: ..."); a value of `cfg` that
// differs from the default is marked as an override.
nlohmann::json profile_sources(isa::Arch arch, const TimingConfig& cfg);
// The table as a Markdown document (docs/PROFILE.md; a test keeps it equal).
std::string timing_fields_markdown();

// Merges a JSON object over `cfg`; unknown keys and wrong types throw
// TimingError naming the key. `arch`, when present, must name cfg.arch.
void merge_timing(TimingConfig& cfg, const nlohmann::json& j);
// Reads and merges a JSON file over `cfg`; errors name the file.
void merge_timing_file(TimingConfig& cfg, const std::string& path);
// A profile file read (at most 16 MiB: /dev/zero is refused, not read) and
// parsed with parse_json_strict, not merged; errors name the file.
nlohmann::json read_timing_file(const std::string& path);
// The most bytes a timing profile may hold.
inline constexpr std::size_t kMaxTimingFileBytes = std::size_t{16} << 20;

// JSON text parsed strictly: nested at most `max_depth` levels (deeper
// crashed the JSON library), and a key given twice in one object is an error
// naming it (the library would silently keep the last value). Throws
// TimingError: "not valid JSON: ...", "JSON nested deeper than 32 levels at
// byte N", "duplicate key 'clocks_mhz.dve' (given twice in one object)".
nlohmann::json parse_json_strict(const std::string& text, unsigned max_depth = 32);
// The effective profile as JSON (merge_timing(default, to_json(c)) == c).
nlohmann::json to_json(const TimingConfig& cfg);

// Objects merged recursively; `over` wins.
void deep_merge(nlohmann::json& base, const nlohmann::json& over);
// The nesting of a dotted timing key ("clocks_mhz.dve" -> {clocks_mhz, dve};
// "bundle_issue_cycles.dve.qmx.pack" -> {bundle_issue_cycles, dve.qmx.pack}:
// bundle names hold dots), checked against a profile's shape (to_json of
// one). TimingError "'KEY': ..." naming what is wrong.
std::vector<std::string> resolve_dotted_key(const std::string& key, const nlohmann::json& profile);
// {path[0]: {path[1]: ... value}}.
nlohmann::json nest_key(const std::vector<std::string>& path, const nlohmann::json& value);
// The keys of every profile (to_json's shape; the values are a default
// profile's): what a dotted key is checked against. Made once.
const nlohmann::json& profile_shape();
// Overrides as --timing takes them (nested objects) from an object whose
// keys may be dotted ({"clocks_mhz.dve": 2400, "sbuf": {"beat_bytes": 32}}),
// each dotted key checked against profile_shape().
nlohmann::json expand_dotted_keys(const nlohmann::json& overrides);

}  // namespace tpb::timing
