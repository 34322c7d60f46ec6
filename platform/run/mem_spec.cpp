#include "platform/run/mem_spec.h"

#include <fmt/format.h>

#include "models/state/sfu_tile_file.h"
#include "platform/run/host_args.h"

namespace tpb::run {

std::uint64_t parse_uint(const std::string& s, const std::string& what, const std::string& spec) {
  std::size_t pos = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(s, &pos, 0);
  } catch (const std::exception&) {
    pos = std::string::npos;
  }
  if (s.empty() || pos != s.size() || s[0] == '-')
    throw SpecError(fmt::format("bad {} '{}' in '{}'", what, s, spec));
  return v;
}

std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t p = s.find(c, start);
    out.push_back(s.substr(start, p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

namespace {

// A value of a spec through the hosts' check (host_args.h): its message
// prefixed with the spec.
template <typename Check>
auto in_spec(const std::string& spec, Check check, std::uint64_t v) {
  try {
    return check(v > static_cast<std::uint64_t>(INT64_MAX) ? HostInt::past(+1, std::to_string(v))
                                                           : HostInt(static_cast<long long>(v)));
  } catch (const RangeError& e) {
    throw SpecError(fmt::format("'{}': {}", spec, e.what()));
  }
}

// ROWSxCOLS and DTYPE of a --dump.
void parse_dump_shape(MemSpec& m, const std::string& shape, const std::string& dtype) {
  const std::string& spec = m.text;
  const std::size_t x = shape.find('x');
  if (x == std::string::npos)
    throw SpecError(fmt::format("'{}': shape '{}' is not ROWSxCOLS", spec, shape));
  m.rows = parse_uint(shape.substr(0, x), "rows", spec);
  m.cols = parse_uint(shape.substr(x + 1), "cols", spec);
  if (m.rows == 0 || m.cols == 0) throw SpecError(fmt::format("'{}': empty shape", spec));
  if (!io::parse_dump_dtype(dtype, m.dtype))
    throw SpecError(
        fmt::format("'{}': dtype '{}' is not one of u8 u16 u32 i8 f16 f32 bf16", spec, dtype));
}

}  // namespace

std::size_t spec_file_start(const std::string& spec) {
  const std::size_t eq = spec.find('=');
  return eq == std::string::npos ? eq : eq + 1;
}

// MEM:PARTITION:OFFSET[:ROWSxCOLS:DTYPE]=FILE
unsigned core_prefix(const std::string& spec, std::string& rest) {
  rest = spec;
  if (spec.rfind("core", 0) != 0) return 0;
  const std::size_t colon = spec.find(':');
  const std::size_t eq = spec_file_start(spec);
  if (colon == std::string::npos || (eq != std::string::npos && colon > eq)) return 0;
  const std::string k = spec.substr(4, colon - 4);
  const std::uint64_t core = parse_uint(k, "core number", spec);
  if (core >= 1u << 20)
    throw SpecError(fmt::format("'{}': core {} is not a core of any device", spec, k));
  rest = spec.substr(colon + 1);
  return static_cast<unsigned>(core);
}

void check_core(const std::string& text, unsigned core, unsigned cores) {
  if (core >= cores)
    throw SpecError(fmt::format("'{}': core{} is not a core of this device of {} core{} ({})", text,
                                core, cores, cores == 1 ? "" : "s",
                                cores == 1 ? "core0" : fmt::format("core0..core{}", cores - 1)));
}

MemSpec parse_mem_spec(const std::string& full, bool dump) {
  MemSpec m;
  m.text = full;
  std::string spec;
  const bool prefixed = full.rfind("core", 0) == 0;
  m.core = core_prefix(full, spec);
  const std::size_t at = spec_file_start(spec);
  if (at == std::string::npos || at == spec.size())
    throw SpecError(fmt::format("'{}': expected ...=FILE.npy", full));
  m.file = spec.substr(at);
  const std::vector<std::string> f = split(spec.substr(0, at - 1), ':');
  if (!f.empty() && is_hbm(f[0])) {
    if (prefixed && spec != full)
      throw SpecError(fmt::format(
          "'{}': the HBM is the device's: hbm: takes no core prefix (every core sees it)", full));
    if (f.size() != (dump ? 4u : 2u))
      throw SpecError(
          fmt::format("'{}': expected {}", full,
                      dump ? "hbm:OFFSET:ROWSxCOLS:DTYPE=FILE.npy" : "hbm:OFFSET=FILE.npy"));
    m.place.hbm = true;
    m.place.offset = parse_uint(f[1], "HBM offset", full);
    if (dump) parse_dump_shape(m, f[2], f[3]);
    return m;
  }
  const std::size_t want = dump ? 5 : 3;
  if (f.size() != want)
    throw SpecError(fmt::format("'{}': expected {}", full,
                                dump ? "sbuf|psum:PARTITION:OFFSET:ROWSxCOLS:DTYPE=FILE.npy"
                                     : "sbuf|psum:PARTITION:OFFSET=FILE.npy"));
  try {  // the name check of every host (host_args.h)
    m.place.region = memory_region(f[0]);
  } catch (const InputError& e) {
    throw SpecError(fmt::format("'{}': {}", full, e.what()));
  }
  m.place.partition = in_spec(full, check_partition, parse_uint(f[1], "partition", full));
  m.place.offset = in_spec(full, check_offset, parse_uint(f[2], "offset", full));
  if (dump) parse_dump_shape(m, f[3], f[4]);
  return m;
}

bool is_tile_spec(const std::string& s) {
  std::string rest;
  try {
    core_prefix(s, rest);
  } catch (const SpecError&) {
    return false;  // parse_mem_spec says what is wrong
  }
  return rest.rfind("tile:", 0) == 0;
}

TileSpec parse_tile_spec(const std::string& full, bool dump) {
  TileSpec t;
  t.text = full;
  std::string spec;
  t.core = core_prefix(full, spec);
  const std::size_t at = spec_file_start(spec);
  if (at == std::string::npos || at == spec.size())
    throw SpecError(fmt::format("'{}': expected tile:N{}=FILE.npy", full, dump ? "" : "[:COL]"));
  t.file = spec.substr(at);
  const std::vector<std::string> f = split(spec.substr(0, at - 1), ':');
  if (f.size() != 2 && (dump || f.size() != 3))
    throw SpecError(fmt::format("'{}': expected tile:N{}=FILE.npy", full, dump ? "" : "[:COL]"));
  t.tile = in_spec(full, check_tile, parse_uint(f[1], "tile number", full));
  if (f.size() == 3) t.col = in_spec(full, check_tile_col, parse_uint(f[2], "physical Col", full));
  return t;
}

void check_rows(const MemSpec& m, std::size_t rows) {
  const unsigned partition = in_spec(m.text, check_partition, m.place.partition);
  // Overflow-safe: rows can be anything a user or a .npy header gives.
  if (rows > isa::kNumPartitions - partition)
    throw SpecError(fmt::format("'{}': {} rows from partition {} run past partition 127", m.text,
                                rows, partition));
}

// Every row stays inside its partition: checked before anything runs, in
// overflow-safe arithmetic.
void check_row_fits(const MemSpec& m, std::uint64_t row_bytes, std::uint32_t cap) {
  const std::uint64_t offset = m.place.offset;
  const std::uint64_t room = offset < cap ? cap - offset : 0;
  if (row_bytes > room)
    throw SpecError(fmt::format(
        "'{}': a row of {} bytes from offset 0x{:x} runs {} bytes past the end of the partition "
        "({} bytes)",
        m.text, row_bytes, offset, row_bytes - room, cap));
}

void check_dump_fits(const MemSpec& m, std::uint32_t cap) {
  check_rows(m, m.rows);
  const std::uint64_t item = io::npy_itemsize(m.dtype);
  const std::uint64_t offset = m.place.offset;
  if (m.cols > (offset < cap ? cap - offset : 0) / item)
    throw SpecError(fmt::format(
        "'{}': {} columns of {} bytes from offset 0x{:x} run past the end of the partition "
        "({} bytes)",
        m.text, m.cols, item, offset, cap));
}

void check_hbm_fits(const MemSpec& m, std::uint64_t bytes, std::uint64_t capacity) {
  const std::uint64_t offset = m.place.offset;
  if (offset > capacity || bytes > capacity - offset)
    throw SpecError(
        fmt::format("'{}': {} bytes from HBM offset 0x{:x} run past the HBM capacity of {} bytes",
                    m.text, bytes, offset, capacity));
}

std::uint64_t dump_bytes(const MemSpec& m) {
  const unsigned __int128 b =
      static_cast<unsigned __int128>(m.rows) * m.cols * io::npy_itemsize(m.dtype);
  return b > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(b);
}

}  // namespace tpb::run
