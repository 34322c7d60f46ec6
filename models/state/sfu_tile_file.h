// The SFU tile file (seed 002, SPEC §6), architectural state of the SFU:
// Local tiles T0..T31 in a capacity of 256 TSize units of 1 KiB, each tile
// with its data type, ValidRow, ValidCol, physical Col, per-byte definedness
// and the physical allocation its name maps to (the rename map), plus the
// SFU's sticky numeric flags. Pure C++, since the pure C++ TQUANT kernel
// (firmware_stubs/sfu) works on it: owned by the SFU engine's
// fw::EngineState, which the kernel reaches with
// ctx.engine_state().get<TileFile>(); the platform exposes it as a TLM
// target in region 2 of the address map (models/sc/memory/tile_target.h).
//
// A TileFile is a value: copying it is a snapshot, == compares every bit of
// it (tests check that a fault leaves it bit-identical).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/isa/encodings.h"

namespace tpb::sfu {

inline constexpr unsigned kNumTiles = isa::kNumLocalTiles;  // T0..T31
inline constexpr unsigned kCapacityUnits = 256;             // TSize units per tile file
inline constexpr std::uint32_t kUnitBytes = 1024;           // one TSize unit
inline constexpr std::uint32_t kMaxTileBytes = kCapacityUnits * kUnitBytes;

// Region 2 layout (TLM addresses relative to isa::region_base(SfuTile);
// docs/CONVENTIONS.md):
//   tile N payload    N * kTilePayloadStride, tsize * 1 KiB bytes, row-major,
//                     row r at r * Col * element size
//   tile N descriptor kDescriptorBase + N * kDescriptorBytes (read-only):
//                     u8 allocated, u8 dtype, u8 layout, u8 0, u16 ValidRow,
//                     u16 ValidCol, u16 Col, u16 TSize, u32 physical id
//   flags             kFlagsOffset, u32 (read-only): bit 0 inexact, 1
//                     saturated, 2 wrapped
//   capacity          kFlagsOffset + 4, u32 (read-only): units in use
inline constexpr std::uint32_t kTilePayloadStride = kMaxTileBytes;  // 0x40000
inline constexpr std::uint32_t kDescriptorBase = 0x1000000;
inline constexpr std::uint32_t kDescriptorBytes = 16;
inline constexpr std::uint32_t kFlagsOffset = 0x1001000;
inline constexpr std::uint32_t kRegionBytesUsed = kFlagsOffset + 8;

struct Tile {
  bool allocated = false;
  std::uint8_t dtype = 0;   // isa::TileDataType
  std::uint8_t layout = 0;  // 0 = NORM, row-major (the only layout modelled)
  std::uint16_t valid_row = 0, valid_col = 0, col = 0;  // Row == ValidRow
  std::uint16_t tsize = 0;                              // in 1 KiB units
  std::uint32_t phys = 0;                               // physical allocation id (0: none)
  std::vector<std::uint8_t> data;                       // tsize * 1 KiB payload bytes
  std::vector<std::uint8_t> defined;                    // one per payload byte: 1 = defined

  unsigned elem_bytes() const { return isa::tile_dtype_size(dtype); }
  // Bytes of the physical shape, ValidRow x Col elements.
  std::size_t shape_bytes() const { return std::size_t{valid_row} * col * elem_bytes(); }
  bool operator==(const Tile& o) const;
  bool operator!=(const Tile& o) const { return !(*this == o); }
};

struct SfuFlags {
  bool inexact = false, saturated = false, wrapped = false;
  std::uint32_t bits() const {
    return (inexact ? 1u : 0u) | (saturated ? 2u : 0u) | (wrapped ? 4u : 0u);
  }
  bool operator==(const SfuFlags& o) const { return bits() == o.bits(); }
};

// The TSize units a tile of `bytes` bytes occupies (at least one).
constexpr unsigned units_for(std::size_t bytes) {
  return bytes == 0 ? 1u : static_cast<unsigned>((bytes + kUnitBytes - 1) / kUnitBytes);
}

class TileFile {
 public:
  const Tile& tile(unsigned n) const { return tiles_.at(n); }
  unsigned used_units() const;
  unsigned free_units() const { return kCapacityUnits - used_units(); }
  unsigned allocated_tiles() const;
  const SfuFlags& flags() const { return flags_; }
  // Physical allocation id of every tile name (0: unmapped).
  std::array<std::uint32_t, kNumTiles> rename_map() const;
  // The id the next allocation gets.
  std::uint32_t next_phys() const { return next_phys_; }

  // `--load tile:N[:COL]=x.npy`: tile N becomes a new FP32 tile of rows x
  // valid_col values (row-major), physical Col `col` >= valid_col, TSize the
  // units its shape needs; the padding columns are undefined. The old tile
  // of that name is freed. Throws std::invalid_argument naming the problem
  // (bad name or shape, capacity exhausted).
  void load_fp32(unsigned n, std::uint16_t rows, std::uint16_t valid_col, std::uint16_t col,
                 const float* values);
  // The valid region of tile n, ValidRow x ValidCol elements in its own type
  // (undefined bytes read as 0); empty when the tile is not allocated.
  std::vector<std::uint8_t> valid_bytes(unsigned n) const;

  // A new allocation for name n (not yet published): its id is next_phys().
  Tile allocate(std::uint8_t dtype, std::uint16_t rows, std::uint16_t valid_col, std::uint16_t col,
                std::uint16_t tsize) const;
  // Atomic publish: tile n becomes `t` (the old tile of that name is freed)
  // and `raised` is ORed into the sticky flags.
  void publish(unsigned n, Tile t, const SfuFlags& raised);

  // Region-2 byte access (TLM target): false when any byte is outside a
  // mapped range (payload of an allocated tile, descriptors, flags) or a
  // write targets a read-only range. A payload write makes its bytes defined.
  bool read(std::uint32_t offset, std::uint8_t* dst, std::size_t len) const;
  bool write(std::uint32_t offset, const std::uint8_t* src, std::size_t len);

  bool operator==(const TileFile& o) const;
  bool operator!=(const TileFile& o) const { return !(*this == o); }

 private:
  std::array<Tile, kNumTiles> tiles_;
  SfuFlags flags_;
  std::uint32_t next_phys_ = 1;
};

}  // namespace tpb::sfu
