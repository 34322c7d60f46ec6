// The one table of timing fields (SPEC §8): every number of a timing
// profile but the bundle overrides, with its JSON key, limits, unit, the
// default of every generation and its source (TIMING.md's [A]..[N], or a
// convention). default_timing(), merge_timing(), to_json(), the profile
// files' "sources" and docs/PROFILE.md are all made from it: a new knob is
// one row here plus its use.
#include <fmt/format.h>

#include "models/isa/names.h"
#include "models/timing/timing_profile.h"

namespace tpb::timing {

namespace {

using isa::Arch;
constexpr unsigned kArchs = 4;
// A generation's column in TimingField::defaults (Arch counts from V2).
unsigned column(Arch a) { return static_cast<unsigned>(a) - static_cast<unsigned>(Arch::Sunda); }
// The ISA layer's capacities (the static checker's defaults), by column.
template <typename T>
std::uint64_t capacity(Arch a, T isa::MemoryCapacity::*m) {
  return isa::default_capacity(a).*m;
}

// The default of each generation (sunda, cayman, mariana, maverick).
struct Defaults {
  std::uint64_t v[kArchs];
  Defaults(std::uint64_t all) : v{all, all, all, all} {}  // NOLINT(runtime/explicit)
  Defaults(std::uint64_t s, std::uint64_t c, std::uint64_t m, std::uint64_t mv) : v{s, c, m, mv} {}
};

using Source = std::string (*)(Arch);
using Get = std::uint64_t (*)(const TimingConfig&, unsigned);
using Set = void (*)(TimingConfig&, unsigned, std::uint64_t);

// ---- arrays a row's slot indexes ---------------------------------------------

// A per-engine array of TimingConfig, one row per engine (slot = the
// engine's index): the member names the group, nothing else does.
using EngineArray = std::uint32_t (TimingConfig::*)[isa::kNumEngines];
template <EngineArray M>
std::uint64_t get_engine(const TimingConfig& c, unsigned e) {
  return (c.*M)[e];
}
template <EngineArray M>
void set_engine(TimingConfig& c, unsigned e, std::uint64_t v) {
  (c.*M)[e] = static_cast<std::uint32_t>(v);
}

MemCycles& mem_of(TimingConfig& c, unsigned m) {
  return m == 0 ? c.sbuf : m == 1 ? c.psum : m == 2 ? c.queue : c.control;
}

enum MemField : unsigned { kLatency, kBeatCycles, kBeatBytes, kWindow, kBanks };

std::uint32_t& mem_field(MemCycles& m, unsigned f) {
  switch (f) {
    case kLatency:
      return m.latency_cycles;
    case kBeatCycles:
      return m.beat_cycles;
    case kBeatBytes:
      return m.beat_bytes;
    case kWindow:
      return m.contention_window_cycles;
    default:
      return m.banks;
  }
}

// A memory field reached through the slot: memory << 8 | field.
std::uint64_t get_mem(const TimingConfig& c, unsigned slot) {
  return mem_field(mem_of(const_cast<TimingConfig&>(c), slot >> 8), slot & 0xFF);
}
void set_mem(TimingConfig& c, unsigned slot, std::uint64_t v) {
  mem_field(mem_of(c, slot >> 8), slot & 0xFF) = static_cast<std::uint32_t>(v);
}

// ---- sources -------------------------------------------------------------------

std::string src_clocks(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return "TIMING.md [A] (v2): PE 2.8, Vector 1.12, Scalar (act) 1.4, GpSimd 1.4 GHz; the SFU "
             "at the Scalar clock (convention)";
    case Arch::Cayman:
      return "TIMING.md [B] (v3): PE 2.4, Vector 0.96, Scalar (act) 1.2, GpSimd 1.2 GHz; the SFU "
             "at the Scalar clock (convention)";
    case Arch::Mariana:
      return "TIMING.md [C] (v4): PE 2.4, Vector 1.2, Scalar (act) 1.2, GpSimd 1.2 GHz; the SFU "
             "at the Scalar clock (convention)";
    case Arch::Maverick:
      break;
  }
  return "convention: as v4, TIMING.md [C] (no public v5 figures); the act queue runs on the "
         "DVE (seed 003: MAVERICK folds ACT into the DVE), so its clock is not used";
}
std::string src_overhead(Arch) {
  return "TIMING.md [A, E]: the front end (decode, semaphore check, dispatch) of about 64 engine "
         "cycles; latency only, it overlaps the previous instruction of the engine "
         "(convention); GpSimd's startup is an issue overhead instead; the ACT's 255 fitted to "
         "TIMING.md [D]: dependent 1-element Scalar activations 264 ScalarE cycles apart (v2; "
         "the same cycles on v3 and v4, convention)";
}
std::string src_issue_overhead(Arch) {
  return "TIMING.md [A, E]: GpSimd startup about 150 cycles (iota = 150 + N), run in software "
         "on its 8 cores, so it holds the issue; 0 for the other engines";
}
std::string src_min_ii(Arch) {
  return "TIMING.md [E]: minimum initiation interval about 64 engine cycles (Vector, Scalar; the "
         "SFU as Scalar); 0 for the PE, whose MAC loop has its own max(min(64, M), N) and whose "
         "LoadStationary "
         "may be shorter [A, D], and for GpSimd, bound by its startup";
}
std::string src_min_stream(Arch) {
  return "TIMING.md [A]: the Vector/Scalar static overhead (about 100 cycles) is added to "
         "back-to-back instructions with N << 128: a stream shorter than 128 cycles holds the "
         "issue for the whole latency (Vector, Scalar; the SFU as Scalar); 0 for PE and GpSimd";
}
std::string src_min_ii_dynamic(Arch) {
  return "TIMING.md [O]: tensor_copy_dynamic_src / _dst cost max(MIN_II_DYNAMIC, N), "
         "MIN_II_DYNAMIC about 600 engine cycles, on the Vector, Scalar and GpSimd engines: "
         "every instruction with a register-addressed operand; 0 (none) for the PE, of "
         "which the docs say nothing";
}
std::string src_wide_stride(Arch) {
  return "TIMING.md [A]: an innermost free-dimension stride over 16 bytes halves an SBUF/PSUM "
         "read or write interface's bandwidth, about a 50% performance hit (Vector, Scalar, "
         "GpSimd): 100% more time; 0 (off) for the PE, of which the docs say nothing";
}
std::string src_memory_clock(Arch) {
  return "convention (the v2 engine clock of [A]); memory cycles below count in it";
}
std::string src_conflict(Arch a, bool psum) {
  if (a == Arch::Sunda)
    return "TIMING.md [A]: on v2 Vector and GpSimd share SBUF access, Vector and Scalar share "
           "PSUM; on (64)";
  return std::string("TIMING.md [B]: v3 lifts the v2 conflicts but for the same PSUM bank; ") +
         (psum ? "on (64)" : "off");
}
std::string src_queue(Arch) { return "convention: instruction fetch, 4 cycles + one 64 B beat"; }
std::string src_control(Arch) {
  return "convention: semaphores and registers, 2 cycles + one beat";
}

// Each memory field's source for the SBUF and the PSUM (the queue and the
// control region have one source each, for the whole group).
std::string mem_source(unsigned mem, unsigned field, Arch a) {
  const bool psum = mem == 1;
  switch (field) {
    case kLatency:
      return psum ? "TIMING.md [A]: about 60 cycles"
                  : "TIMING.md [A]: SBUF/PSUM access request overhead about 60 cycles";
    case kBeatCycles:
      return psum ? "convention, as sbuf"
                  : "convention: one beat per memory cycle per partition lane";
    case kBeatBytes:
      return psum ? "convention, as sbuf"
                  : "convention: 64 B per partition lane per beat, wider than any engine's "
                    "documented rate";
    case kWindow:
      return src_conflict(a, psum);
    default:
      return psum ? std::string("TIMING.md [A, B, C]: 8 banks of 2 KiB per partition") +
                        (a == Arch::Sunda ? " (v2: the whole partition conflicts, 1)" : "")
                  : "one bank per partition (convention)";
  }
}
template <unsigned Mem, unsigned Field>
std::string src_mem(Arch a) {
  return mem_source(Mem, Field, a);
}

std::string src_hbm_bytes(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return "TIMING.md [L]: trn1 32 GiB for 2 cores: 16 GiB per core";
    case Arch::Cayman:
      return "TIMING.md [L]: trn2 96 GiB for 8 cores: 12 GiB per core";
    case Arch::Mariana:
      return "TIMING.md [L]: trn3 144 GiB for 8 cores: 18 GiB per core";
    case Arch::Maverick:
      break;
  }
  return "convention: as trn3, TIMING.md [L] (144 GiB for 8 cores: 18 GiB per core)";
}
std::string src_hbm_bw(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return "TIMING.md [L]: trn1 820 GB/s for 2 cores: 410 GB/s per core";
    case Arch::Cayman:
      return "TIMING.md [L]: trn2 2.9 TB/s for 8 cores: 362.5 GB/s per core";
    case Arch::Mariana:
      return "TIMING.md [L]: trn3 4.9 TB/s for 8 cores: 612.5 GB/s per core";
    case Arch::Maverick:
      break;
  }
  return "convention: as trn3, TIMING.md [L] (4.9 TB/s for 8 cores: 612.5 GB/s per core)";
}
std::string src_dma_bw(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return "TIMING.md [J, K]: 17 B/ns per DMA engine on trn1 (the per-generation table's "
             "'theoretical peak', about 85% of the rated 27.2 GB/s)";
    case Arch::Cayman:
      return "TIMING.md [J, K]: 23 B/ns per DMA engine on trn2 (the per-generation table's "
             "'theoretical peak', about 85% of the rated 27.2 GB/s)";
    case Arch::Mariana:
      return "TIMING.md [J, K]: 33 B/ns per DMA engine on trn3 (the per-generation table's "
             "'theoretical peak', about 85% of the rated 38.4 GB/s)";
    case Arch::Maverick:
      break;
  }
  return "convention: as trn3, TIMING.md [J, K] (33 B/ns per DMA engine)";
}
std::string src_fetch_bw(Arch a) {
  return std::string("TIMING.md [J, K]: DMA about 27 GB/s per queue on v2 / v3, 38 GB/s on v4") +
         (a == Arch::Maverick ? " (v5: convention, as v4)" : "");
}
std::string src_dma_queue_cost(Arch) {
  return "convention fitted to TIMING.md [J]'s single-queue throughput curve (v3, 128 "
         "partitions): a queue starts at most one transfer per 0.84 us on an engine, its "
         "descriptor work overlapping the engine's transfers of other queues, so one queue's "
         "2 KiB per partition reach about 85%, 1 KiB 42%, 512 B 21% of the 32 KiB throughput; "
         "the same on other generations until public data says otherwise";
}
std::string src_dma_engine_cost(Arch) {
  return "convention fitted to TIMING.md [N]'s v3 tutorial GEMM (its tiled form, loads on two "
         "queues in turn: TensorE active 87.3%, DMA 99.9%; its hoisted form DMA-bound, DMA "
         "99.7%): an engine spends 0.115 us on a transfer of another queue than its last one "
         "(that ring's descriptors for its 8 partitions: TIMING.md [A, J]'s overhead per DMA "
         "buffer and per transfer) before its bytes; the same on other generations";
}
std::string src_queue_weights(Arch a) {
  if (a == Arch::Sunda || a == Arch::Cayman)
    return "TIMING.md [J]: an engine's queues are scheduled round robin (v2/v3): every weight 1";
  return "TIMING.md [C, J]: v4 schedules an engine's queues by QoS with 4 classes of service; no "
         "public weights: every queue 1 (round robin) until public data says otherwise "
         "(convention)";
}

// ---- the table -----------------------------------------------------------------

class Builder {
 public:
  std::vector<TimingField> rows;

  TimingField& row(std::string key, std::string source_key, std::uint64_t min, std::uint64_t max,
                   std::string unit, Get get, Set set, unsigned slot, Defaults def, Source src,
                   std::string max_note = {}) {
    TimingField& t = rows.emplace_back();
    t.key = std::move(key);
    t.source_key = std::move(source_key);
    t.min = min;
    t.max = max;
    t.unit = std::move(unit);
    t.get = get;
    t.set = set;
    t.slot = slot;
    for (unsigned i = 0; i < kArchs; ++i) t.defaults[i] = def.v[i];
    t.source = src;
    t.max_note = std::move(max_note);
    return t;
  }
  // A duration in ns of at most one access's 2^40 ps, the same on every generation.
  void duration(const char* key, Get get, Set set, std::uint64_t def, Source src) {
    row(key, key, 0, TimingConfig::kMaxAccessPs / 1000, "ns", get, set, 0, def, src,
        fmt::format("at most {} ns (2^40 ps)", TimingConfig::kMaxAccessPs / 1000));
  }
  // One row per engine (pool, dve, pe, sfu) of the per-engine array M: a
  // grouped knob is its member in TimingConfig and one call of this.
  template <EngineArray M>
  void engines(const char* group, std::uint64_t min, const char* unit,
               const Defaults (&by_engine)[isa::kNumEngines], Source src) {
    for (unsigned e = 0; e < isa::kNumEngines; ++e)
      row(std::string(group) + "." + isa::kEngineNames[e], group, min, UINT32_MAX, unit,
          get_engine<M>, set_engine<M>, e, by_engine[e], src);
  }
};

// A plain member: a row's get and set.
#define TPB_FIELD(member)                                                       \
  [](const TimingConfig& c, unsigned) -> std::uint64_t { return c.member; },    \
      [](TimingConfig& c, unsigned, std::uint64_t v) {                          \
        c.member = static_cast<std::remove_reference_t<decltype(c.member)>>(v); \
      }

std::vector<TimingField> build() {
  Builder b;
  // pool, dve, pe, sfu, act (isa::engine_index order).
  b.engines<&TimingConfig::clock_mhz>("clocks_mhz", 1, "MHz",
                                      {{1400, 1200, 1200, 1200},
                                       {1120, 960, 1200, 1200},
                                       {2800, 2400, 2400, 2400},
                                       {1400, 1200, 1200, 1200},
                                       {1400, 1200, 1200, 1200}},
                                      src_clocks);
  b.engines<&TimingConfig::instruction_overhead_cycles>(
      "instruction_overhead_cycles", 0, "engine cycles", {{0}, {64}, {64}, {64}, {255}},
      src_overhead);
  b.engines<&TimingConfig::issue_overhead_cycles>("issue_overhead_cycles", 0, "engine cycles",
                                                  {{150}, {0}, {0}, {0}, {0}}, src_issue_overhead);
  b.engines<&TimingConfig::min_ii_cycles>("min_ii_cycles", 0, "engine cycles",
                                          {{0}, {64}, {0}, {64}, {64}}, src_min_ii);
  b.engines<&TimingConfig::pipeline_min_stream_cycles>(
      "pipeline_min_stream_cycles", 0, "engine cycles", {{0}, {128}, {0}, {128}, {128}},
      src_min_stream);
  b.engines<&TimingConfig::min_ii_dynamic_cycles>("min_ii_dynamic_cycles", 0, "engine cycles",
                                                  {{600}, {600}, {0}, {600}, {600}},
                                                  src_min_ii_dynamic);
  b.engines<&TimingConfig::wide_stride_cost_percent>("wide_stride_cost_percent", 0,
                                                     "percent of the stream's compute",
                                                     {{100}, {100}, {0}, {100}, {100}},
                                                     src_wide_stride);
  b.row("wide_stride_bytes", "wide_stride_bytes", 0, UINT32_MAX, "bytes",
        TPB_FIELD(wide_stride_bytes), 0, 16, [](Arch) -> std::string {
          return "TIMING.md [A]: SBUF/PSUM supply peak bandwidth while the innermost stride is "
                 "under 16 bytes (4 FP32, 8 BF16, 16 FP8 elements)";
        });

  b.row("memory_clock_mhz", "memory_clock_mhz", 1, UINT32_MAX, "MHz", TPB_FIELD(memory_clock_mhz),
        0, 1400, src_memory_clock);
  static constexpr const char* kMems[] = {"sbuf", "psum", "queue", "control"};
  static constexpr const char* kFields[] = {"latency_cycles", "beat_cycles", "beat_bytes",
                                            "contention_window_cycles", "banks"};
  static constexpr const char* kUnits[] = {"memory cycles", "memory cycles", "bytes",
                                           "memory cycles", "banks"};
  // sbuf, psum, queue, control defaults of each field (SBUF/PSUM windows:
  // v2 shares, v3 on lifts them but for the same PSUM bank).
  const Defaults defs[5][4] = {
      {{60}, {60}, {4}, {2}},          {{1}, {1}, {1}, {1}},          {{64}, {64}, {64}, {64}},
      {{64, 0, 0, 0}, {64}, {0}, {0}}, {{1}, {1, 8, 8, 8}, {1}, {1}},
  };
  static const Source kMemSources[2][5] = {
      {src_mem<0, 0>, src_mem<0, 1>, src_mem<0, 2>, src_mem<0, 3>, src_mem<0, 4>},
      {src_mem<1, 0>, src_mem<1, 1>, src_mem<1, 2>, src_mem<1, 3>, src_mem<1, 4>}};
  for (unsigned m = 0; m < 4; ++m)
    for (unsigned f = 0; f < 5; ++f) {
      const std::string key = std::string(kMems[m]) + "." + kFields[f];
      const Source src = m < 2 ? kMemSources[m][f] : m == 2 ? src_queue : src_control;
      b.row(key, m < 2 ? key : kMems[m], f == kBeatBytes || f == kBanks ? 1 : 0,
            f == kBanks ? 64 : UINT32_MAX, kUnits[f], get_mem, set_mem, (m << 8) | f, defs[f][m],
            src, f == kBanks ? "at most 64 banks" : "");
    }

  const auto part = [](Arch a) -> std::string {
    (void)a;
    return "TIMING.md [A, B, C] and SPEC §2: 192 KiB (v2), 224 KiB (v3), 256 KiB (v4, v5)";
  };
  b.row("sbuf_bytes_per_partition", "sbuf_bytes_per_partition", 1, isa::kPartitionSlot, "bytes",
        TPB_FIELD(sbuf_bytes_per_partition), 0,
        {capacity(Arch::Sunda, &isa::MemoryCapacity::sbuf_bytes_per_partition),
         capacity(Arch::Cayman, &isa::MemoryCapacity::sbuf_bytes_per_partition),
         capacity(Arch::Mariana, &isa::MemoryCapacity::sbuf_bytes_per_partition),
         capacity(Arch::Maverick, &isa::MemoryCapacity::sbuf_bytes_per_partition)},
        part, fmt::format("at most {} bytes per partition", isa::kPartitionSlot));
  b.row(
      "psum_bytes_per_partition", "psum_bytes_per_partition", 1, isa::kPartitionSlot, "bytes",
      TPB_FIELD(psum_bytes_per_partition), 0,
      capacity(Arch::Mariana, &isa::MemoryCapacity::psum_bytes_per_partition),
      [](Arch) -> std::string { return "TIMING.md [A, B, C]: 16 KiB"; },
      fmt::format("at most {} bytes per partition", isa::kPartitionSlot));
  b.row("pool_cores", "pool_cores", 1, UINT32_MAX, "cores", TPB_FIELD(pool_cores), 0, 8,
        [](Arch) -> std::string {
          return "TIMING.md [A]: GpSimd has 8 cores, a core serves 16 partitions";
        });
  b.row("pool_vector_bytes", "pool_vector_bytes", 1, UINT32_MAX, "bytes",
        TPB_FIELD(pool_vector_bytes), 0, 64, [](Arch) -> std::string {
          return "TIMING.md [A]: 512-bit SIMD per core (32 bits per partition per cycle)";
        });
  for (unsigned n = 0; n < isa::kNumMxPerfModes; ++n)
    b.row(
        std::string("pe_mx_row_pump.") +
            std::string(isa::mx_perf_mode_names().name(static_cast<std::uint8_t>(n))),
        "pe_mx_row_pump", 1, UINT32_MAX, "contraction values per PE per cycle",
        [](const TimingConfig& c, unsigned s) -> std::uint64_t { return c.pe_mx_row_pump[s]; },
        [](TimingConfig& c, unsigned s, std::uint64_t v) {
          c.pe_mx_row_pump[s] = static_cast<std::uint32_t>(v);
        },
        n, n >= 4 ? 8 : 4,
        [](Arch) -> std::string {
          return "convention: MX_PERF_MODE quad-row modes pump 4 rows, oct-row modes 8 "
                 "(TIMING.md [C, H]: 8x128 MXFP8 per cycle on v4); none = 4 (MX packs 4 "
                 "contraction values per PE per cycle [C, H])";
        });
  b.row("quantum_ns", "quantum_ns", 1, UINT32_MAX, "ns", TPB_FIELD(quantum_ns), 0, 1000,
        [](Arch) -> std::string {
          return "convention: temporal decoupling quantum (simulated results do not depend on it)";
        });

  const std::uint64_t ring_cap = isa::kQueueBytes / isa::kInstBytes;
  b.row(
      "instruction_fetch.ring_words", "instruction_fetch.ring_words", 1, ring_cap, "words",
      TPB_FIELD(fetch.ring_words), 0, ring_cap,
      [](Arch) -> std::string {
        return "convention: the whole 1 MiB queue window of SPEC §2 (16384 words) is the ring";
      },
      fmt::format("at most {} words (the 1 MiB queue window)", ring_cap));
  b.row("instruction_fetch.batch_words", "instruction_fetch.batch_words", 1, UINT32_MAX, "words",
        TPB_FIELD(fetch.batch_words), 0, 256, [](Arch) -> std::string {
          return "convention: the fetch DMA refills 256 words (16 KiB) at a time";
        });
  b.row("instruction_fetch.mbytes_per_s", "instruction_fetch.mbytes_per_s", 1, UINT32_MAX, "MB/s",
        TPB_FIELD(fetch.mbytes_per_s), 0, {27000, 27000, 38000, 38000}, src_fetch_bw);
  b.row("instruction_fetch.latency_ns", "instruction_fetch.latency_ns", 0, UINT32_MAX, "ns",
        TPB_FIELD(fetch.latency_ns), 0, 1300, [](Arch) -> std::string {
          return "TIMING.md [J, K]: about 1.3 us from DMA trigger to start";
        });

  b.row("hbm.bytes", "hbm.bytes", 1, isa::kHbmWindow, "bytes", TPB_FIELD(hbm.bytes), 0,
        {capacity(Arch::Sunda, &isa::MemoryCapacity::hbm_bytes),
         capacity(Arch::Cayman, &isa::MemoryCapacity::hbm_bytes),
         capacity(Arch::Mariana, &isa::MemoryCapacity::hbm_bytes),
         capacity(Arch::Maverick, &isa::MemoryCapacity::hbm_bytes)},
        src_hbm_bytes,
        fmt::format("at most {} bytes (2^40: the core's HBM window)", isa::kHbmWindow));
  b.row("hbm.mbytes_per_s", "hbm.mbytes_per_s", 1, UINT32_MAX, "MB/s", TPB_FIELD(hbm.mbytes_per_s),
        0, {820000 / 2, 2900000 / 8, 4900000 / 8, 4900000 / 8}, src_hbm_bw);
  b.row(
      "hbm.latency_ns", "hbm.latency_ns", 0, TimingConfig::kMaxAccessPs / 1000, "ns",
      TPB_FIELD(hbm.latency_ns), 0, 100,
      [](Arch) -> std::string {
        return "convention: the docs are silent on HBM latency; every access (a DMA's first "
               "included) pays it";
      },
      fmt::format("an access may take at most {} ns (2^40 ps)", TimingConfig::kMaxAccessPs / 1000));

  b.row("dma.engines", "dma.engines", 1, isa::kNumPartitions, "engines", TPB_FIELD(dma.engines), 0,
        16, [](Arch) -> std::string {
          return "TIMING.md [J]: each NeuronCore (v2-v4) is paired with 16 DMA engines, each "
                 "moving the data of 8 SBUF partitions";
        });
  b.row("dma.mbytes_per_s", "dma.mbytes_per_s", 1, UINT32_MAX, "MB/s per engine",
        TPB_FIELD(dma.mbytes_per_s), 0, {17000, 23000, 33000, 33000}, src_dma_bw);
  b.duration("dma.latency_ns", TPB_FIELD(dma.latency_ns), 1300, [](Arch) -> std::string {
    return "TIMING.md [J, K]: about 1.3 us from the semaphore that triggers a transfer to its "
           "start (a latency: back-to-back transfers overlap it)";
  });
  b.duration("dma.transfer_cost_ns", TPB_FIELD(dma.transfer_cost_ns), 840, src_dma_queue_cost);
  b.duration("dma.engine_cost_ns", TPB_FIELD(dma.engine_cost_ns), 115, src_dma_engine_cost);
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
    b.row(
        std::string("dma.queue_weights.") + isa::kDmaQueueNames[q], "dma.queue_weights", 1,
        UINT32_MAX, "transfers per turn",
        [](const TimingConfig& c, unsigned s) -> std::uint64_t { return c.dma.queue_weights[s]; },
        [](TimingConfig& c, unsigned s, std::uint64_t v) {
          c.dma.queue_weights[s] = static_cast<std::uint32_t>(v);
        },
        q, 1, src_queue_weights);
  return std::move(b.rows);
}

#undef TPB_FIELD

}  // namespace

const std::vector<TimingField>& timing_fields() {
  static const std::vector<TimingField> fields = build();
  return fields;
}

TimingConfig default_timing(isa::Arch arch) {
  TimingConfig c;
  c.arch = std::string(isa::arch_name(arch));
  const unsigned a = column(arch);
  for (const TimingField& f : timing_fields()) f.set(c, f.slot, f.defaults[a]);
  return c;
}

nlohmann::json profile_sources(isa::Arch arch, const TimingConfig& cfg) {
  nlohmann::json s = nlohmann::json::object();
  s["arch"] = "the generation these defaults are for";
  s["bundle_issue_cycles"] =
      "convention: per-bundle issue cycles of the firmware stubs, calibrated against TIMING.md's "
      "cost model in docs/TIMING.md";
  const unsigned a = column(arch);
  for (const TimingField& f : timing_fields()) {
    std::string text = f.source(arch);
    if (f.get(cfg, f.slot) != f.defaults[a])
      text = fmt::format("override of {} (default {}: {})", f.key, f.defaults[a], text);
    nlohmann::json& slot = s[f.source_key];
    // A group shares one source; an override of one of its members is said there.
    if (slot.is_null() || f.get(cfg, f.slot) != f.defaults[a]) slot = text;
  }
  return s;
}

std::string timing_fields_markdown() {
  std::string out =
      "# Timing profile fields\n\n"
      "Generated from the table of timing fields (`models/timing/timing_fields.cpp`) by\n"
      "`TPBSIM_REGEN=1 build/sc_tests/unit_tests --gtest_filter='TimingProfiles.FieldsDoc*'`;\n"
      "the test `TimingProfiles.FieldsDocumentEqualsTheTable` keeps it equal. Every key is\n"
      "a dotted path of the JSON profile (`--timing FILE`, sweeps' dotted keys); per-engine\n"
      "groups also take one number for every engine. Besides these, `bundle_issue_cycles`\n"
      "overrides any firmware bundle's issue cycles by name (`tpbsim run --dump-timing` lists\n"
      "them all). The profiles with every source are `models/timing/profiles/<arch>.json`.\n\n"
      "| key | unit | limits | sunda | cayman | mariana | maverick | source |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const TimingField& f : timing_fields()) {
    const std::string lim =
        f.max == UINT32_MAX ? fmt::format(">= {}", f.min) : fmt::format("{}..{}", f.min, f.max);
    std::string src = f.source(Arch::Mariana);
    for (Arch a : {Arch::Sunda, Arch::Cayman, Arch::Maverick})
      if (f.source(a) != src) src += fmt::format("; {}: {}", isa::arch_name(a), f.source(a));
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", f.key, f.unit, lim,
                       f.defaults[0], f.defaults[1], f.defaults[2], f.defaults[3], src);
  }
  return out;
}

}  // namespace tpb::timing
