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

  // Engine clocks (SPEC §8), indexed by isa::Engine.
  std::uint32_t clock_mhz[isa::kNumEngines] = {1200, 1200, 2400, 1200};

  // Fixed per-instruction cost in engine cycles, indexed by isa::Engine:
  // decode, semaphore check, kernel_info lookup, trampoline entry and the
  // engine's startup (TIMING.md: about 64, GpSimd about 150). JSON: a
  // number sets every engine, an object {"pool": 150, ...} some.
  std::uint32_t instruction_overhead_cycles[isa::kNumEngines] = {150, 64, 64, 64};

  // Memory targets; cycles of memory_clock_mhz.
  std::uint32_t memory_clock_mhz = 1400;
  MemCycles sbuf{8, 1, 64};
  MemCycles psum{8, 1, 64};
  MemCycles queue{4, 1, 64};
  MemCycles control{2, 1, 64};

  // Capacities (SPEC §2), bytes per partition.
  std::uint32_t sbuf_bytes_per_partition = 256u * 1024;
  std::uint32_t psum_bytes_per_partition = 16u * 1024;

  // POOL (GpSimd, TIMING.md): 8 cores with a 512-bit SIMD each; the 128
  // partitions are split over the cores (16 each), so a core moves
  // pool_vector_bytes / (128 / pool_cores) = 4 bytes of every partition per
  // cycle, whatever the number of active channels.
  std::uint32_t pool_cores = 8;
  std::uint32_t pool_vector_bytes = 64;

  // PE MX row pumping per MX_PERF_MODE (seed 003 §3.3: 0 none, 1..3
  // QUAD_ROW[_INTERLEAVE|_TILED], 4..6 OCT_ROW[...]): contraction values per
  // PE per cycle. The MAC loop of an MX matmul runs max(64, ceil(4 N / pump))
  // trips, so 4 (the MX default, TIMING.md [C, H]) is max(64, N). Timing
  // only; values never change. Convention: none / quad_row* 4, oct_row* 8.
  std::uint32_t pe_mx_row_pump[7] = {4, 4, 4, 4, 8, 8, 8};

  // Bundle issue-cycle overrides by bundle name ("pool.mx8.loop" ...); a
  // bundle without an entry uses the cycles of its firmware stub. Names are
  // checked against the kernels when the costs are resolved
  // (fw::KernelRegistry::resolve_costs): a misspelt name is an error.
  std::map<std::string, std::uint32_t> bundle_issue_cycles;

  // Global quantum of the quantum keepers (temporal decoupling), ns.
  std::uint32_t quantum_ns = 1000;

  // Instruction fetch (SPEC §7, §9), JSON "instruction_fetch": each engine's
  // queue is a ring of fetch.ring_words 64-byte words that the fetch unit
  // refills from DRAM by DMA, fetch.batch_words at a time, as the sequencer
  // frees slots. The program's first ring-full is in the queue when the run
  // starts (the runtime loads it). TIMING.md [J, K]: DMA about 27 GB/s per
  // queue on v2 / v3, 38 GB/s on v4, about 1.3 us from trigger to start.
  struct Fetch {
    std::uint32_t ring_words = 16384;  // 1..16384 (the 1 MiB queue window)
    std::uint32_t batch_words = 256;   // 1..ring_words
    std::uint32_t mbytes_per_s = 38000;
    std::uint32_t latency_ns = 1300;
  } fetch;

  // HBM of one core (SPEC §10), JSON "hbm": the device's capacity and
  // bandwidth shared equally by its cores (TIMING.md [L]: trn1 32 GiB and
  // 820 GB/s for 2 cores, trn2 96 GiB and 2.9 TB/s for 8, trn3 144 GiB and
  // 4.9 TB/s for 8; v5 as trn3, convention). The DMA queues of the core
  // share the bandwidth; every access pays the latency (a convention: the
  // docs are silent on HBM latency).
  struct Hbm {
    std::uint64_t bytes = 144 * isa::kGiB / 8;  // 1..2^40 (the core's HBM window)
    std::uint32_t mbytes_per_s = 612500;        // 10^6 bytes per second
    std::uint32_t latency_ns = 100;
  } hbm;

  // DMA queues (SPEC §10), JSON "dma": TIMING.md [J, K]: 16 queues per core,
  // 27.2 GB/s each on v2 / v3 and 38.4 GB/s on v4 (theoretical; v5 as v4,
  // convention); about 1.3 us from the semaphore that triggers a transfer
  // to its start.
  struct Dma {
    std::uint32_t mbytes_per_s = 38400;  // per queue
    std::uint32_t latency_ns = 1300;     // semaphore-to-start, per descriptor
  } dma;

  // A DMA queue counts its cycles (stats, stalls) at the memory clock and
  // has no per-instruction overhead: its descriptor's time is the "dma"
  // latency and transfer (docs/CONVENTIONS.md).
  std::uint32_t clock(isa::Engine e) const {
    const auto i = static_cast<unsigned>(e);
    return i < isa::kNumEngines ? clock_mhz[i] : memory_clock_mhz;
  }
  std::uint32_t overhead(isa::Engine e) const {
    const auto i = static_cast<unsigned>(e);
    return i < isa::kNumEngines ? instruction_overhead_cycles[i] : 0;
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

// The defaults of a generation: the one place they live in code (SPEC §8).
TimingConfig default_timing(isa::Arch arch);

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
// Overrides as --timing takes them (nested objects) from an object whose
// keys may be dotted ({"clocks_mhz.dve": 2400, "sbuf": {"beat_bytes": 32}}),
// each dotted key checked against `profile`.
nlohmann::json expand_dotted_keys(const nlohmann::json& overrides, const nlohmann::json& profile);

}  // namespace tpb::timing
