#include "models/state/sfu_tile_file.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace tpb::sfu {

bool Tile::operator==(const Tile& o) const {
  return allocated == o.allocated && dtype == o.dtype && layout == o.layout &&
         valid_row == o.valid_row && valid_col == o.valid_col && col == o.col && tsize == o.tsize &&
         phys == o.phys && data == o.data && defined == o.defined;
}

unsigned TileFile::used_units() const {
  unsigned u = 0;
  for (const Tile& t : tiles_)
    if (t.allocated) u += t.tsize;
  return u;
}

unsigned TileFile::allocated_tiles() const {
  unsigned n = 0;
  for (const Tile& t : tiles_) n += t.allocated;
  return n;
}

std::array<std::uint32_t, kNumTiles> TileFile::rename_map() const {
  std::array<std::uint32_t, kNumTiles> m{};
  for (unsigned i = 0; i < kNumTiles; ++i) m[i] = tiles_[i].allocated ? tiles_[i].phys : 0;
  return m;
}

Tile TileFile::allocate(std::uint8_t dtype, std::uint16_t rows, std::uint16_t valid_col,
                        std::uint16_t col, std::uint16_t tsize) const {
  Tile t;
  t.allocated = true;
  t.dtype = dtype;
  t.valid_row = rows;
  t.valid_col = valid_col;
  t.col = col;
  t.tsize = tsize;
  t.phys = next_phys_;
  t.data.assign(std::size_t{tsize} * kUnitBytes, 0);
  t.defined.assign(t.data.size(), 0);
  return t;
}

void TileFile::publish(unsigned n, Tile t, const SfuFlags& raised) {
  tiles_.at(n) = std::move(t);
  next_phys_ = tiles_[n].phys + 1;
  flags_.inexact |= raised.inexact;
  flags_.saturated |= raised.saturated;
  flags_.wrapped |= raised.wrapped;
}

void TileFile::load_fp32(unsigned n, std::uint16_t rows, std::uint16_t valid_col, std::uint16_t col,
                         const float* values) {
  if (n >= kNumTiles)
    throw std::invalid_argument("tile T" + std::to_string(n) + " does not exist (T0..T31)");
  if (rows == 0 || valid_col == 0)
    throw std::invalid_argument("a tile needs at least one row and one column");
  if (col < valid_col)
    throw std::invalid_argument("physical Col " + std::to_string(col) + " is below ValidCol " +
                                std::to_string(valid_col));
  const std::size_t bytes = std::size_t{rows} * col * 4;
  if (bytes > kMaxTileBytes)
    throw std::invalid_argument(std::to_string(rows) + " x " + std::to_string(col) +
                                " FP32 elements exceed the 256 KiB tile file");
  const unsigned units = units_for(bytes);
  const unsigned freed = tiles_[n].allocated ? tiles_[n].tsize : 0;
  if (used_units() - freed + units > kCapacityUnits)
    throw std::invalid_argument("tile T" + std::to_string(n) + " needs " + std::to_string(units) +
                                " TSize units, the tile file has " +
                                std::to_string(kCapacityUnits - used_units() + freed) + " free");
  Tile t = allocate(static_cast<std::uint8_t>(isa::TileDataType::Fp32), rows, valid_col, col,
                    static_cast<std::uint16_t>(units));
  for (std::size_t r = 0; r < rows; ++r) {
    std::memcpy(t.data.data() + r * col * 4, values + r * valid_col, std::size_t{valid_col} * 4);
    std::memset(t.defined.data() + r * col * 4, 1, std::size_t{valid_col} * 4);
  }
  tiles_[n] = std::move(t);
  ++next_phys_;
}

std::vector<std::uint8_t> TileFile::valid_bytes(unsigned n) const {
  const Tile& t = tiles_.at(n);
  if (!t.allocated) return {};
  const std::size_t es = t.elem_bytes(), row = std::size_t{t.valid_col} * es;
  std::vector<std::uint8_t> out(std::size_t{t.valid_row} * row, 0);
  for (std::size_t r = 0; r < t.valid_row; ++r)
    for (std::size_t b = 0; b < row; ++b) {
      const std::size_t at = r * t.col * es + b;
      if (t.defined[at]) out[r * row + b] = t.data[at];
    }
  return out;
}

namespace {

void put16(std::uint8_t* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
void put32(std::uint8_t* p, std::uint32_t v) { std::memcpy(p, &v, 4); }

}  // namespace

bool TileFile::read(std::uint32_t off, std::uint8_t* dst, std::size_t len) const {
  if (len == 0) return true;
  if (off < kNumTiles * kTilePayloadStride) {
    const Tile& t = tiles_[off / kTilePayloadStride];
    const std::uint32_t in = off % kTilePayloadStride;
    if (!t.allocated || std::size_t{in} + len > t.data.size()) return false;
    std::memcpy(dst, t.data.data() + in, len);
    return true;
  }
  // Descriptors and flags: a read-only image of the metadata.
  std::uint8_t img[kNumTiles * kDescriptorBytes];
  std::uint32_t base = 0;
  std::size_t size = 0;
  if (off >= kDescriptorBase && off < kDescriptorBase + sizeof img) {
    for (unsigned i = 0; i < kNumTiles; ++i) {
      const Tile& t = tiles_[i];
      std::uint8_t* d = img + i * kDescriptorBytes;
      d[0] = t.allocated;
      d[1] = t.dtype;
      d[2] = t.layout;
      d[3] = 0;
      put16(d + 4, t.valid_row);
      put16(d + 6, t.valid_col);
      put16(d + 8, t.col);
      put16(d + 10, t.tsize);
      put32(d + 12, t.phys);
    }
    base = kDescriptorBase;
    size = sizeof img;
  } else if (off >= kFlagsOffset && off < kFlagsOffset + 8) {
    put32(img, flags_.bits());
    put32(img + 4, used_units());
    base = kFlagsOffset;
    size = 8;
  } else {
    return false;
  }
  if (off - base + len > size) return false;
  std::memcpy(dst, img + (off - base), len);
  return true;
}

bool TileFile::write(std::uint32_t off, const std::uint8_t* src, std::size_t len) {
  if (len == 0) return true;
  if (off >= kNumTiles * kTilePayloadStride) return false;  // metadata is read-only
  Tile& t = tiles_[off / kTilePayloadStride];
  const std::uint32_t in = off % kTilePayloadStride;
  if (!t.allocated || std::size_t{in} + len > t.data.size()) return false;
  std::memcpy(t.data.data() + in, src, len);
  std::memset(t.defined.data() + in, 1, len);
  return true;
}

bool TileFile::operator==(const TileFile& o) const {
  return tiles_ == o.tiles_ && flags_ == o.flags_ && next_phys_ == o.next_phys_;
}

}  // namespace tpb::sfu
