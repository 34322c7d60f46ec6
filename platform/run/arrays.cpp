#include "platform/run/arrays.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "models/state/sfu_tile_file.h"

namespace tpb::run {

namespace {

// rows x row_bytes, saturated (a count past 64 bits runs past any HBM).
std::uint64_t extent(std::size_t rows, std::size_t row_bytes) {
  const unsigned __int128 total = static_cast<unsigned __int128>(rows) * row_bytes;
  return total > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(total);
}

// Each access of rows x row_bytes at a place, (address, byte from the
// start, bytes): HBM's bytes in one, row-major; SBUF / PSUM row r at
// partition + r.
template <typename Move>
void each_access(const HostPlace& p, std::size_t rows, std::size_t row_bytes, Move move) {
  if (p.hbm) return move(isa::hbm_addr(p.offset), 0, rows * row_bytes);
  for (std::size_t r = 0; r < rows; ++r) move(row_addr(p, r), r * row_bytes, row_bytes);
}

// The spec a place's messages name ("sbuf:P:OFF", "hbm:OFF").
MemSpec spec_of(const HostPlace& p) {
  MemSpec m;
  m.place = p;
  m.text = p.hbm ? fmt::format("hbm:0x{:x}", p.offset)
                 : fmt::format("{}:{}:{}", p.region == isa::Region::Psum ? "psum" : "sbuf",
                               p.partition, p.offset);
  return m;
}

}  // namespace

void check_place(const Session& s, const HostPlace& p, std::size_t rows, std::size_t row_bytes) {
  const MemSpec m = spec_of(p);
  try {
    if (p.hbm) {
      check_hbm_fits(m, extent(rows, row_bytes), s.hbm_bytes());
    } else {
      check_rows(m, rows);
      check_row_fits(m, row_bytes, s.partition_bytes(p.region));
    }
  } catch (const SpecError& e) {
    throw RangeError(e.what());
  }
}

void write_place(Session& s, const HostPlace& p, const std::uint8_t* data, std::size_t rows,
                 std::size_t row_bytes) {
  check_place(s, p, rows, row_bytes);
  platform::TpbCore& core = s.core();
  each_access(p, rows, row_bytes, [&](std::uint64_t addr, std::size_t at, std::size_t n) {
    core.load_memory(addr, data + at, n);
  });
}

void read_place(Session& s, const HostPlace& p, std::uint8_t* out, std::size_t rows,
                std::size_t row_bytes) {
  check_place(s, p, rows, row_bytes);
  platform::TpbCore& core = s.core();
  each_access(p, rows, row_bytes, [&](std::uint64_t addr, std::size_t at, std::size_t n) {
    core.dump_memory(addr, out + at, n);
  });
}

// ----------------------------------------------------------------- tiles

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

// ------------------------------------------------------------ .npy loads / dumps

io::NpyArray read_load(const MemSpec& m, const platform::CoreConfig& cfg) {
  // An HBM load is bounded by the HBM from its offset (plus a .npy header of up
  // to 64 KiB), not by the largest SBUF.
  const std::uint64_t hbm = cfg.hbm_capacity();
  const std::uint64_t offset = m.place.offset;
  io::NpyArray a =
      m.place.hbm
          ? io::read_npy(m.file, (offset < hbm ? hbm - offset : 0) + 65536,
                         fmt::format("more than the HBM holds from offset 0x{:x} (capacity {} "
                                     "bytes)",
                                     offset, hbm))
          : io::read_npy(m.file);
  if (a.shape.size() > 2)
    throw SpecError(fmt::format("'{}': {} is a {}-D array; expected 1-D or 2-D", m.text, m.file,
                                a.shape.size()));
  if (m.place.hbm) {
    check_hbm_fits(m, a.data.size(), hbm);
    return a;
  }
  const std::size_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  check_rows(m, rows);
  check_row_fits(m, rows ? a.data.size() / rows : 0, cfg.partition_bytes(m.place.region));
  return a;
}

namespace {

// A --load / --dump's move (checked before the run): its messages name the spec.
template <typename Move>
void in_spec_of(const MemSpec& m, Move move) {
  try {
    move();
  } catch (const std::runtime_error& e) {
    throw SpecError(fmt::format("'{}': {}", m.text, e.what()));
  }
}

}  // namespace

void load_npy(Session& s, const MemSpec& m, const io::NpyArray& a) {
  s.select(m.core);
  const std::size_t rows = m.place.hbm || a.shape.size() != 2 ? 1 : a.shape[0];
  const std::size_t row_bytes = rows ? a.data.size() / rows : 0;  // checked by read_load
  in_spec_of(m, [&] { write_place(s, m.place, a.data.data(), rows, row_bytes); });
}

// The shape was checked against the partitions before the run.
void dump_npy(Session& s, const MemSpec& m, const std::string& file) {
  io::NpyArray a;
  a.dtype = m.dtype;
  a.shape = {m.rows, m.cols};
  const std::size_t row_bytes = m.cols * io::npy_itemsize(m.dtype);
  a.data.resize(m.rows * row_bytes);
  s.select(m.core);
  in_spec_of(m, [&] { read_place(s, m.place, a.data.data(), m.rows, row_bytes); });
  io::write_npy(file, a);
}

void load_tile_npy(Session& s, const TileSpec& t) {
  s.select(t.core);
  const io::NpyArray a = io::read_npy(t.file);
  if (a.dtype != io::NpyDtype::F32)
    throw SpecError(fmt::format("'{}': {} is not a float32 array (<f4)", t.text, t.file));
  if (a.shape.empty() || a.shape.size() > 2)
    throw SpecError(
        fmt::format("'{}': {} is a {}-D array; expected 2-D", t.text, t.file, a.shape.size()));
  const std::size_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  const std::size_t cols = a.shape.back();
  std::vector<float> v(rows * cols);
  std::memcpy(v.data(), a.data.data(), v.size() * 4);
  write_tile(s, t.tile, v.data(), rows, cols, t.col, "'" + t.text + "'");
}

// The tile's valid region in its own type (S8 -> i1, U8 -> u1, FP32 -> f4);
// a tile name that holds no tile dumps as an empty 0 x 0 float32 array.
void dump_tile_npy(Session& s, const TileSpec& t, const std::string& file) {
  s.select(t.core);
  TileData tile = read_tile(s, t.tile);
  io::NpyArray a;
  a.dtype = io::NpyDtype::F32;
  a.shape = {0, 0};
  if (tile.allocated) {
    switch (static_cast<isa::TileDataType>(tile.dtype)) {
      case isa::TileDataType::Fp32:
        a.dtype = io::NpyDtype::F32;
        break;
      case isa::TileDataType::S8:
        a.dtype = io::NpyDtype::I8;
        break;
      case isa::TileDataType::U8:
        a.dtype = io::NpyDtype::U8;
        break;
      default:
        throw SpecError(fmt::format("'{}': tile T{} has data type {}, which --dump does not write",
                                    t.text, t.tile, isa::tile_dtype_name(tile.dtype)));
    }
    a.shape = {tile.rows, tile.cols};
    a.data = std::move(tile.bytes);
  }
  io::write_npy(file, a);
}

}  // namespace tpb::run
