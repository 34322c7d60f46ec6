// Memories and tiles of a Session as arrays in memory (SPEC §12): what a
// binding hands over where `tpbsim run` names .npy files. `--load tile:` and
// `--dump tile:` are built on these; memory rows go through
// Session::write_rows / read_rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "platform/run/host_args.h"
#include "platform/run/mem_spec.h"
#include "platform/run/session.h"

namespace tpb::run {

// memory_region and is_hbm (the memory names of every host): host_args.h.
// `bytes` bytes from HBM byte `offset` (row-major, as `--load hbm:OFFSET`):
// RangeError naming the capacity when they would run past it (nothing
// written or read then).
void check_hbm(const Session& s, std::uint64_t offset, std::uint64_t bytes);
void write_hbm(Session& s, std::uint64_t offset, const std::uint8_t* data, std::size_t bytes);
void read_hbm(Session& s, std::uint64_t offset, std::uint8_t* out, std::size_t bytes);

// The memory spec of `rows` rows of `row_bytes` at (partition, offset) of
// `region` ("sbuf:P:OFF" in messages), checked against the partitions of
// `s`: RangeError naming the problem when a row would run past partition
// 127 or past the end of its partition. Session::write_rows / read_rows
// check with this before they touch anything.
// rows x row_bytes at a place (HBM: row-major from its offset), checked whole
// (RangeError) before any byte moves.
void check_place(const Session& s, const HostPlace& p, std::size_t rows, std::size_t row_bytes);
void write_place(Session& s, const HostPlace& p, const std::uint8_t* data, std::size_t rows,
                 std::size_t row_bytes);
void read_place(Session& s, const HostPlace& p, std::uint8_t* out, std::size_t rows,
                std::size_t row_bytes);
MemSpec checked_rows(const Session& s, isa::Region region, unsigned partition, std::uint32_t offset,
                     std::size_t rows, std::size_t row_bytes);

// An SFU Local tile's valid region (SPEC §6).
struct TileData {
  bool allocated = false;
  std::uint8_t dtype = 0;          // isa::TileDataType
  std::size_t rows = 0, cols = 0;  // ValidRow x ValidCol
  // rows x cols elements in the tile's type, row-major; undefined bytes 0.
  std::vector<std::uint8_t> bytes;
};
// Tile n (RangeError unless 0 <= n <= 31).
TileData read_tile(Session& s, unsigned n);
// Tile n becomes a new FP32 tile of rows x cols values (row-major), physical
// Col `col` (0: cols; the padding columns are undefined), the old tile of
// that name freed. RangeError for n; InputError, prefixed by `what`, for a
// shape that is not a tile's or a tile file without room. Nothing changes
// on an error.
void write_tile(Session& s, unsigned n, const float* values, std::size_t rows, std::size_t cols,
                std::size_t col, const std::string& what);

}  // namespace tpb::run
