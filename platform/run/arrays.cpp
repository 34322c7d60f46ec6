#include "platform/run/arrays.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include <fmt/format.h>

#include "models/state/sfu_tile_file.h"
#include "platform/run/host_args.h"

namespace tpb::run {

void check_hbm(const Session& s, std::uint64_t offset, std::uint64_t bytes) {
  const std::uint64_t cap = s.config().timing.hbm.bytes;
  if (offset > cap || bytes > cap - offset)
    throw RangeError(
        fmt::format("hbm: {} bytes from offset 0x{:x} run past the HBM capacity of {} bytes", bytes,
                    offset, cap));
}

void write_hbm(Session& s, std::uint64_t offset, const std::uint8_t* data, std::size_t bytes) {
  check_hbm(s, offset, bytes);
  s.core().load_memory(isa::hbm_addr(offset), data, bytes);
}

void read_hbm(Session& s, std::uint64_t offset, std::uint8_t* out, std::size_t bytes) {
  check_hbm(s, offset, bytes);
  s.core().dump_memory(isa::hbm_addr(offset), out, bytes);
}

namespace {
// rows x row_bytes, saturated (a count past 64 bits runs past any HBM).
std::uint64_t extent(std::size_t rows, std::size_t row_bytes) {
  const unsigned __int128 total = static_cast<unsigned __int128>(rows) * row_bytes;
  return total > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(total);
}
}  // namespace

void check_place(const Session& s, const HostPlace& p, std::size_t rows, std::size_t row_bytes) {
  if (p.hbm)
    check_hbm(s, p.offset, extent(rows, row_bytes));
  else
    checked_rows(s, p.region, p.partition, static_cast<std::uint32_t>(p.offset), rows, row_bytes);
}

void write_place(Session& s, const HostPlace& p, const std::uint8_t* data, std::size_t rows,
                 std::size_t row_bytes) {
  if (p.hbm)
    write_hbm(s, p.offset, data, rows * row_bytes);
  else
    s.write_rows(p.region, p.partition, static_cast<std::uint32_t>(p.offset), data, rows,
                 row_bytes);
}

void read_place(Session& s, const HostPlace& p, std::uint8_t* out, std::size_t rows,
                std::size_t row_bytes) {
  if (p.hbm)
    read_hbm(s, p.offset, out, rows * row_bytes);
  else
    s.read_rows(p.region, p.partition, static_cast<std::uint32_t>(p.offset), out, rows, row_bytes);
}

MemSpec checked_rows(const Session& s, isa::Region region, unsigned partition, std::uint32_t offset,
                     std::size_t rows, std::size_t row_bytes) {
  MemSpec m;
  m.region = region;
  m.partition = partition;
  m.offset = offset;
  m.text =
      fmt::format("{}:{}:{}", region == isa::Region::Psum ? "psum" : "sbuf", partition, offset);
  try {
    check_rows(m, rows);
    check_row_fits(m, row_bytes, s.partition_bytes(region));
  } catch (const SpecError& e) {
    throw RangeError(e.what());
  }
  return m;
}

TileData read_tile(Session& s, unsigned n) {
  check_tile(n);
  const sfu::Tile& t = s.core().tile_file().tile(n);
  TileData d;
  if (!t.allocated) return d;
  d.allocated = true;
  d.dtype = t.dtype;
  d.rows = t.valid_row;
  d.cols = t.valid_col;
  d.bytes = s.core().tile_file().valid_bytes(n);
  return d;
}

void write_tile(Session& s, unsigned n, const float* values, std::size_t rows, std::size_t cols,
                std::size_t col, const std::string& what) {
  check_tile(n);
  if (col == 0) col = cols;
  if (rows == 0 || cols == 0 || rows > 0xFFFF || cols > 0xFFFF)
    throw InputError(fmt::format("{}: shape {} x {} is not a tile shape", what, rows, cols));
  try {
    check_tile_col(static_cast<long long>(std::min<std::size_t>(col, INT64_MAX)));
  } catch (const RangeError& e) {
    throw InputError(fmt::format("{}: {}", what, e.what()));
  }
  if (col < cols)
    throw InputError(
        fmt::format("{}: physical Col {} is below the array's {} columns", what, col, cols));
  try {
    s.core().tile_file().load_fp32(n, static_cast<std::uint16_t>(rows),
                                   static_cast<std::uint16_t>(cols),
                                   static_cast<std::uint16_t>(col), values);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace tpb::run
