#include "models/timing/timing_profile.h"

#include "models/isa/input_file.h"
#include "models/isa/names.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tpb::timing {

namespace {

constexpr std::uint32_t kMaxBanks = 64;
constexpr std::size_t kMaxProfileFileBytes = kMaxTimingFileBytes;  // 16 MiB of JSON

constexpr unsigned kMaxProfileDepth = 32;

// The offset of the first bracket nesting past `max` levels (outside JSON
// strings), or npos.
std::size_t nesting_past(const std::string& text, unsigned max) {
  unsigned depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

[[noreturn]] void fail(const std::string& key, const std::string& what) {
  throw TimingError("timing profile: key '" + isa::excerpt(key) + "': " + what);
}

// A value as the messages show it: JSON, cut (a megabyte string is not
// echoed whole), control characters escaped.
std::string shown(const nlohmann::json& v) {
  return isa::excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::uint32_t get_u32(const nlohmann::json& v, const std::string& key, bool nonzero) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(key, "expected a non-negative integer, got " + shown(v));
  const auto x = v.get<std::uint64_t>();
  if (x > UINT32_MAX) fail(key, "value " + shown(v) + " does not fit in 32 bits");
  if (nonzero && x == 0) fail(key, "must not be 0");
  return static_cast<std::uint32_t>(x);
}

std::uint64_t get_u64(const nlohmann::json& v, const std::string& key) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(key, "expected a non-negative integer, got " + v.dump());
  return v.get<std::uint64_t>();
}

void require_object(const nlohmann::json& v, const std::string& key) {
  if (!v.is_object()) fail(key, "expected an object, got " + shown(v));
}

void merge_mem(MemCycles& m, const nlohmann::json& j, const std::string& key) {
  require_object(j, key);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string k = key + "." + it.key();
    if (it.key() == "latency_cycles")
      m.latency_cycles = get_u32(*it, k, false);
    else if (it.key() == "beat_cycles")
      m.beat_cycles = get_u32(*it, k, false);
    else if (it.key() == "beat_bytes")
      m.beat_bytes = get_u32(*it, k, true);
    else if (it.key() == "contention_window_cycles")
      m.contention_window_cycles = get_u32(*it, k, false);
    else if (it.key() == "banks") {
      m.banks = get_u32(*it, k, true);
      // The arbiter keeps a booking lane per partition, bank and port.
      if (m.banks > kMaxBanks) fail(k, "at most " + std::to_string(kMaxBanks) + " banks");
    } else
      fail(k, "unknown key");
  }
}

// JSON keys of TimingConfig::pe_mx_row_pump, by MX_PERF_MODE: the names of
// the program syntax (isa::mx_perf_mode_names(), docs/ASM.md).
std::string mx_perf_mode_key(unsigned n) {
  return std::string(isa::mx_perf_mode_names().name(static_cast<std::uint8_t>(n)));
}

nlohmann::json mem_json(const MemCycles& m) {
  return {{"latency_cycles", m.latency_cycles},
          {"beat_cycles", m.beat_cycles},
          {"beat_bytes", m.beat_bytes},
          {"contention_window_cycles", m.contention_window_cycles},
          {"banks", m.banks}};
}

}  // namespace

std::uint32_t TimingConfig::pool_bytes_per_partition_cycle() const {
  // 64-bit: pool_cores can be anything up to 2^32 - 1 (a 32-bit sum wrapped
  // to a zero divisor).
  const std::uint64_t cores = std::max<std::uint32_t>(pool_cores, 1);
  const std::uint64_t per_core = (std::uint64_t{isa::kNumPartitions} + cores - 1) / cores;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, pool_vector_bytes / per_core));
}

std::uint64_t TimingConfig::cycles_to_ps_wide(std::uint64_t cycles, std::uint32_t mhz) {
  // 1 cycle = 1e6 / mhz ps; integer arithmetic, rounded to nearest, in 128
  // bits so no product wraps; saturates at kMaxPs (the sequencers fault
  // there rather than let simulated time wrap).
  const unsigned __int128 ps = (static_cast<unsigned __int128>(cycles) * 1000000u + mhz / 2) /
                               std::max<std::uint32_t>(mhz, 1);
  return ps > kMaxPs ? kMaxPs : static_cast<std::uint64_t>(ps);
}

TimingConfig default_timing(isa::Arch arch) {
  // Every number's source is in the generation's profile file,
  // traces/timing/<arch>.json (a test keeps the two equal).
  TimingConfig c;
  c.arch = std::string(isa::arch_name(arch));
  // Clocks, TIMING.md [A] [B] [C] (SPEC §8): v2 PE 2.8, Vector 1.12,
  // Scalar 1.4, GpSimd 1.4 GHz; v3 2.4 / 0.96 / 1.2 / 1.2; v4 (and v5,
  // convention) 2.4 / 1.2 / 1.2 / 1.2. The SFU runs at the Scalar (ACT) clock.
  switch (arch) {
    case isa::Arch::Sunda:
      c.clock_mhz[0] = 1400, c.clock_mhz[1] = 1120, c.clock_mhz[2] = 2800, c.clock_mhz[3] = 1400;
      break;
    case isa::Arch::Cayman:
      c.clock_mhz[0] = 1200, c.clock_mhz[1] = 960, c.clock_mhz[2] = 2400, c.clock_mhz[3] = 1200;
      break;
    case isa::Arch::Mariana:
    case isa::Arch::Maverick:
      c.clock_mhz[0] = 1200, c.clock_mhz[1] = 1200, c.clock_mhz[2] = 2400, c.clock_mhz[3] = 1200;
      break;
  }
  // SBUF / PSUM access request overhead about 60 cycles [A]; one 64-byte
  // beat per partition per memory cycle (convention: wide enough that the
  // engines' documented rates, not the SRAM, bound a stream).
  c.sbuf = MemCycles{60, 1, 64, 0, 1};
  c.psum = MemCycles{60, 1, 64, 0, 8};  // 8 banks of 2 KiB [A] [B] [C]
  // Engine conflicts [A] [B]: on v2 Vector and GpSimd share SBUF access and
  // Vector and Scalar share PSUM; v3 lifts them but for the same PSUM bank.
  if (arch == isa::Arch::Sunda) {
    c.sbuf.contention_window_cycles = 64;
    c.psum.contention_window_cycles = 64;
    c.psum.banks = 1;
  } else {
    c.psum.contention_window_cycles = 64;
  }
  // Instruction fetch DMA, TIMING.md [J, K]: 27 GB/s per queue (v2, v3), 38 (v4; v5 convention).
  c.fetch.mbytes_per_s = arch == isa::Arch::Sunda || arch == isa::Arch::Cayman ? 27000 : 38000;
  const isa::MemoryCapacity cap = isa::default_capacity(arch);
  c.sbuf_bytes_per_partition = cap.sbuf_bytes_per_partition;
  c.psum_bytes_per_partition = cap.psum_bytes_per_partition;
  // HBM per core, TIMING.md [L]: capacity and bandwidth of the device / its
  // cores (trn1 2 cores, trn2 and trn3 8; v5 as trn3).
  c.hbm.bytes = cap.hbm_bytes;
  switch (arch) {
    case isa::Arch::Sunda:
      c.hbm.mbytes_per_s = 820000 / 2;
      break;
    case isa::Arch::Cayman:
      c.hbm.mbytes_per_s = 2900000 / 8;
      break;
    case isa::Arch::Mariana:
    case isa::Arch::Maverick:
      c.hbm.mbytes_per_s = 4900000 / 8;
      break;
  }
  // DMA queues, TIMING.md [J]: 27.2 GB/s each on v2 / v3, 38.4 on v4 (v5 as v4).
  c.dma.mbytes_per_s = arch == isa::Arch::Sunda || arch == isa::Arch::Cayman ? 27200 : 38400;
  return c;
}

void merge_timing(TimingConfig& c, const nlohmann::json& j) {
  require_object(j, "(top level)");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const nlohmann::json& v = *it;
    if (k == "arch") {
      if (!v.is_string()) fail(k, "expected a string");
      // A generation's name in any case, or its alias (v4), as .arch and --arch take.
      isa::Arch given{}, run{};
      if (!isa::parse_arch(v.get<std::string>(), given))
        fail(k, "'" + isa::excerpt(v.get<std::string>()) +
                    "' is not a generation (sunda cayman mariana maverick, or v2..v5)");
      if (!isa::parse_arch(c.arch, run) || given != run)
        fail(k, "profile is for '" + isa::excerpt(v.get<std::string>()) + "' but the run is for '" +
                    c.arch + "'");
    } else if (k == "clocks_mhz") {
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e) {
        unsigned idx = isa::kNumEngines;
        for (unsigned n = 0; n < isa::kNumEngines; ++n)
          if (e.key() == isa::engine_name(static_cast<isa::Engine>(n))) idx = n;
        if (idx == isa::kNumEngines) fail(k + "." + e.key(), "unknown engine");
        c.clock_mhz[idx] = get_u32(*e, k + "." + e.key(), true);
      }
    } else if (k == "instruction_overhead_cycles") {
      if (v.is_object()) {
        for (auto e = v.begin(); e != v.end(); ++e) {
          const auto eng = isa::parse_engine(e.key().c_str());
          if (!eng) fail(k + "." + e.key(), "unknown engine");
          c.instruction_overhead_cycles[static_cast<unsigned>(*eng)] =
              get_u32(*e, k + "." + e.key(), false);
        }
      } else {
        const std::uint32_t all = get_u32(v, k, false);
        for (auto& o : c.instruction_overhead_cycles) o = all;
      }
    } else if (k == "memory_clock_mhz") {
      c.memory_clock_mhz = get_u32(v, k, true);
    } else if (k == "sbuf") {
      merge_mem(c.sbuf, v, k);
    } else if (k == "psum") {
      merge_mem(c.psum, v, k);
    } else if (k == "queue") {
      merge_mem(c.queue, v, k);
    } else if (k == "control") {
      merge_mem(c.control, v, k);
    } else if (k == "sbuf_bytes_per_partition") {
      c.sbuf_bytes_per_partition = get_u32(v, k, true);
      if (c.sbuf_bytes_per_partition > isa::kPartitionSlot)
        fail(k, "at most " + std::to_string(isa::kPartitionSlot) + " bytes per partition");
    } else if (k == "psum_bytes_per_partition") {
      c.psum_bytes_per_partition = get_u32(v, k, true);
      if (c.psum_bytes_per_partition > isa::kPartitionSlot)
        fail(k, "at most " + std::to_string(isa::kPartitionSlot) + " bytes per partition");
    } else if (k == "pool_cores") {
      c.pool_cores = get_u32(v, k, true);
    } else if (k == "pool_vector_bytes") {
      c.pool_vector_bytes = get_u32(v, k, true);
    } else if (k == "pe_mx_row_pump") {
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e) {
        unsigned idx = isa::kNumMxPerfModes;
        for (unsigned n = 0; n < isa::kNumMxPerfModes; ++n)
          if (e.key() == mx_perf_mode_key(n)) idx = n;
        if (idx == isa::kNumMxPerfModes) fail(k + "." + e.key(), "unknown MX perf mode");
        c.pe_mx_row_pump[idx] = get_u32(*e, k + "." + e.key(), true);
      }
    } else if (k == "bundle_issue_cycles") {
      require_object(v, k);
      for (auto b = v.begin(); b != v.end(); ++b)
        c.bundle_issue_cycles[b.key()] = get_u32(*b, k + "." + b.key(), false);
    } else if (k == "sources") {
      // Documentation: the source of every number (models/timing/profiles).
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e)
        if (!e->is_string()) fail(k + "." + e.key(), "expected a string");
    } else if (k == "quantum_ns") {
      c.quantum_ns = get_u32(v, k, true);
    } else if (k == "instruction_fetch") {
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e) {
        const std::string key = k + "." + e.key();
        if (e.key() == "ring_words") {
          c.fetch.ring_words = get_u32(*e, key, true);
          if (c.fetch.ring_words > isa::kQueueBytes / isa::kInstBytes)
            fail(key, "at most " + std::to_string(isa::kQueueBytes / isa::kInstBytes) +
                          " words (the 1 MiB queue window)");
        } else if (e.key() == "batch_words") {
          c.fetch.batch_words = get_u32(*e, key, true);
        } else if (e.key() == "mbytes_per_s") {
          c.fetch.mbytes_per_s = get_u32(*e, key, true);
        } else if (e.key() == "latency_ns") {
          c.fetch.latency_ns = get_u32(*e, key, false);
        } else {
          fail(key, "unknown key (ring_words, batch_words, mbytes_per_s, latency_ns)");
        }
      }
    } else if (k == "hbm") {
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e) {
        const std::string key = k + "." + e.key();
        if (e.key() == "bytes") {
          c.hbm.bytes = get_u64(*e, key);
          if (c.hbm.bytes == 0) fail(key, "must not be 0");
          if (c.hbm.bytes > isa::kHbmWindow)
            fail(key, "at most " + std::to_string(isa::kHbmWindow) +
                          " bytes (2^40: the core's HBM window)");
        } else if (e.key() == "mbytes_per_s") {
          c.hbm.mbytes_per_s = get_u32(*e, key, true);
        } else if (e.key() == "latency_ns") {
          c.hbm.latency_ns = get_u32(*e, key, false);
          if (std::uint64_t{c.hbm.latency_ns} * 1000 > TimingConfig::kMaxAccessPs)
            fail(key, "an access may take at most " +
                          std::to_string(TimingConfig::kMaxAccessPs / 1000) + " ns (2^40 ps)");
        } else {
          fail(key, "unknown key (bytes, mbytes_per_s, latency_ns)");
        }
      }
    } else if (k == "dma") {
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e) {
        const std::string key = k + "." + e.key();
        if (e.key() == "mbytes_per_s")
          c.dma.mbytes_per_s = get_u32(*e, key, true);
        else if (e.key() == "latency_ns")
          c.dma.latency_ns = get_u32(*e, key, false);
        else
          fail(key, "unknown key (mbytes_per_s, latency_ns)");
      }
    } else {
      fail(k, "unknown key");
    }
  }
  if (c.fetch.batch_words > c.fetch.ring_words)
    fail("instruction_fetch.batch_words", std::to_string(c.fetch.batch_words) +
                                              " is more than instruction_fetch.ring_words (" +
                                              std::to_string(c.fetch.ring_words) + ")");
  // A contention window shorter than one beat cannot hold a beat: bookings
  // would spread over a window per cycle (unbounded memory). Checked on the
  // merged result, whatever order the keys came in.
  for (const auto& [name, m] : {std::pair<const char*, const MemCycles*>{"sbuf", &c.sbuf},
                                {"psum", &c.psum},
                                {"queue", &c.queue},
                                {"control", &c.control}})
    if (m->contention_window_cycles != 0 && m->contention_window_cycles < m->beat_cycles)
      fail(std::string(name) + ".contention_window_cycles",
           std::to_string(m->contention_window_cycles) + " is shorter than one beat (" + name +
               ".beat_cycles " + std::to_string(m->beat_cycles) + "); use 0 (off) or at least " +
               std::to_string(m->beat_cycles));
  // Simulated time never wraps: one access of a whole partition slot
  // (latency + ceil(256 KiB / beat_bytes) beats) takes at most kMaxAccessPs,
  // so the sums an instruction makes of its accesses stay far inside 64 bits.
  for (const auto& [name, m] : {std::pair<const char*, const MemCycles*>{"sbuf", &c.sbuf},
                                {"psum", &c.psum},
                                {"queue", &c.queue},
                                {"control", &c.control}}) {
    const std::uint64_t beats = (isa::kPartitionSlot + m->beat_bytes - 1) / m->beat_bytes;
    const std::uint64_t lat_ps = TimingConfig::cycles_to_ps(m->latency_cycles, c.memory_clock_mhz);
    const std::uint64_t beats_ps =
        TimingConfig::cycles_to_ps(std::uint64_t{m->beat_cycles} * beats, c.memory_clock_mhz);
    if (lat_ps + beats_ps > TimingConfig::kMaxAccessPs)
      fail(std::string(name) + (beats_ps >= lat_ps ? ".beat_cycles" : ".latency_cycles"),
           "one access of a whole partition (" + std::to_string(m->latency_cycles) +
               " latency cycles + " + std::to_string(beats) + " beats of " +
               std::to_string(m->beat_cycles) + " cycles at memory_clock_mhz " +
               std::to_string(c.memory_clock_mhz) + ") would take " +
               std::to_string(lat_ps + beats_ps) + " ps, past the " +
               std::to_string(TimingConfig::kMaxAccessPs) + " ps (2^40) an access may take");
  }
}

nlohmann::json parse_json_strict(const std::string& text, unsigned max_depth) {
  // A profile is at most a few levels deep; JSON nested thousands deep
  // overflowed the stack in the JSON library (SIGSEGV): refused first.
  if (const std::size_t at = nesting_past(text, max_depth); at != std::string::npos)
    throw TimingError("JSON nested deeper than " + std::to_string(max_depth) + " levels at byte " +
                      std::to_string(at));
  // Keys seen in each open object, and the key path to it, to refuse a key
  // given twice (the library keeps the last value without a word).
  struct Level {
    bool object = false;
    std::set<std::string> keys;
    std::string key;  // the latest key of this object
  };
  std::vector<Level> stack;
  std::string duplicate;
  auto where = [&](const std::string& k) {
    std::string p;
    for (const Level& l : stack)
      if (l.object && &l != &stack.back()) p += l.key + ".";
    return p + k;
  };
  const nlohmann::json::parser_callback_t cb = [&](int, nlohmann::json::parse_event_t ev,
                                                   nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (ev) {
      case E::object_start:
        stack.push_back({true, {}, {}});
        break;
      case E::array_start:
        stack.push_back({false, {}, "[]"});
        break;
      case E::object_end:
      case E::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case E::key:
        if (!stack.empty() && stack.back().object && parsed.is_string()) {
          const std::string k = parsed.get<std::string>();
          if (!stack.back().keys.insert(k).second && duplicate.empty()) duplicate = where(k);
          stack.back().key = k;
        }
        break;
      case E::value:
        break;
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::exception& e) {
    throw TimingError(std::string("not valid JSON: ") + isa::excerpt(e.what()));
  }
  if (!duplicate.empty())
    throw TimingError("duplicate key '" + isa::excerpt(duplicate) +
                      "' (given twice in one object; JSON keeps only one: say it once)");
  return j;
}

nlohmann::json read_timing_file(const std::string& path) {
  std::string text;
  if (const std::string why =
          isa::read_input_file(path, kMaxProfileFileBytes, "a timing profile", text);
      !why.empty())
    throw TimingError(isa::excerpt(path) + ": " + why);
  try {
    return parse_json_strict(text, kMaxProfileDepth);
  } catch (const TimingError& e) {
    const std::string m = e.what();
    throw TimingError(isa::excerpt(path) + ": " +
                      (m.rfind("JSON nested", 0) == 0 ? "not a timing profile: " : "") + m);
  }
}

void merge_timing_file(TimingConfig& c, const std::string& path) {
  const nlohmann::json j = read_timing_file(path);
  try {
    merge_timing(c, j);
  } catch (const TimingError& e) {
    throw TimingError(isa::excerpt(path) + ": " + e.what());
  }
}

nlohmann::json to_json(const TimingConfig& c) {
  nlohmann::json clocks = nlohmann::json::object();
  for (unsigned n = 0; n < isa::kNumEngines; ++n)
    clocks[isa::engine_name(static_cast<isa::Engine>(n))] = c.clock_mhz[n];
  nlohmann::json overheads = nlohmann::json::object();
  for (unsigned n = 0; n < isa::kNumEngines; ++n)
    overheads[isa::engine_name(static_cast<isa::Engine>(n))] = c.instruction_overhead_cycles[n];
  nlohmann::json bundles = nlohmann::json::object();
  for (const auto& [name, cyc] : c.bundle_issue_cycles) bundles[name] = cyc;
  nlohmann::json pump = nlohmann::json::object();
  for (unsigned n = 0; n < isa::kNumMxPerfModes; ++n)
    pump[mx_perf_mode_key(n)] = c.pe_mx_row_pump[n];
  return {{"arch", c.arch},
          {"clocks_mhz", clocks},
          {"instruction_overhead_cycles", overheads},
          {"memory_clock_mhz", c.memory_clock_mhz},
          {"sbuf", mem_json(c.sbuf)},
          {"psum", mem_json(c.psum)},
          {"queue", mem_json(c.queue)},
          {"control", mem_json(c.control)},
          {"sbuf_bytes_per_partition", c.sbuf_bytes_per_partition},
          {"psum_bytes_per_partition", c.psum_bytes_per_partition},
          {"pool_cores", c.pool_cores},
          {"pool_vector_bytes", c.pool_vector_bytes},
          {"pe_mx_row_pump", pump},
          {"bundle_issue_cycles", bundles},
          {"quantum_ns", c.quantum_ns},
          {"instruction_fetch",
           {{"ring_words", c.fetch.ring_words},
            {"batch_words", c.fetch.batch_words},
            {"mbytes_per_s", c.fetch.mbytes_per_s},
            {"latency_ns", c.fetch.latency_ns}}},
          {"hbm",
           {{"bytes", c.hbm.bytes},
            {"mbytes_per_s", c.hbm.mbytes_per_s},
            {"latency_ns", c.hbm.latency_ns}}},
          {"dma", {{"mbytes_per_s", c.dma.mbytes_per_s}, {"latency_ns", c.dma.latency_ns}}}};
}

void deep_merge(nlohmann::json& base, const nlohmann::json& over) {
  if (!base.is_object() || !over.is_object()) {
    base = over;
    return;
  }
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (base.contains(it.key()))
      deep_merge(base[it.key()], *it);
    else
      base[it.key()] = *it;
  }
}

std::vector<std::string> resolve_dotted_key(const std::string& key, const nlohmann::json& profile) {
  const std::string bic = "bundle_issue_cycles.";
  if (key.rfind(bic, 0) == 0 && key.size() > bic.size())
    return {"bundle_issue_cycles", key.substr(bic.size())};
  std::vector<std::string> path;
  const nlohmann::json* level = &profile;
  std::string rest = key;
  for (;;) {
    if (level->contains(rest) && !(*level)[rest].is_object()) {
      path.push_back(rest);
      return path;
    }
    const std::size_t dot = rest.find('.');
    const std::string head = rest.substr(0, dot);
    std::string known;
    for (auto it = level->begin(); it != level->end(); ++it)
      if (it.key() != "sources" && it.key() != "arch")
        known += (known.empty() ? "" : " ") + it.key();
    if (!level->contains(head) || head == "sources" || head == "arch")
      throw TimingError(
          fmt::format("'{}': '{}' is not a timing key (known here: {})", key, head, known));
    const nlohmann::json& next = (*level)[head];
    path.push_back(head);
    if (!next.is_object())
      throw TimingError(fmt::format("'{}': '{}' is a value, not an object", key,
                                    fmt::format("{}", fmt::join(path, "."))));
    if (dot == std::string::npos) {
      std::string sub;
      for (auto it = next.begin(); it != next.end(); ++it)
        sub += (sub.empty() ? "" : " ") + it.key();
      throw TimingError(fmt::format("'{}' names an object; name one of its keys: {}", key, sub));
    }
    level = &next;
    rest = rest.substr(dot + 1);
  }
}

nlohmann::json nest_key(const std::vector<std::string>& path, const nlohmann::json& value) {
  nlohmann::json j = value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) j = nlohmann::json{{*it, j}};
  return j;
}

nlohmann::json expand_dotted_keys(const nlohmann::json& overrides, const nlohmann::json& profile) {
  if (!overrides.is_object()) throw TimingError("timing overrides: not an object of keys");
  nlohmann::json out = nlohmann::json::object();
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (it.key().find('.') == std::string::npos) {
      deep_merge(out, nlohmann::json{{it.key(), *it}});
      continue;
    }
    deep_merge(out, nest_key(resolve_dotted_key(it.key(), profile), *it));
  }
  return out;
}

}  // namespace tpb::timing
