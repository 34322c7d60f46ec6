// Memories and tiles of a Session as arrays (SPEC §9, §12): what a binding
// hands over in memory, and the .npy files `tpbsim run --load / --dump`
// names. A memory access goes to a checked place (host_args.h: SBUF / PSUM
// rows from a partition, or HBM bytes from an offset); everything here
// checks it whole, against the Session's configuration, before any byte
// moves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "platform/io/npy.h"
#include "platform/run/host_args.h"
#include "platform/run/mem_spec.h"
#include "platform/run/session.h"

namespace tpb::run {

// rows x row_bytes at a place of the selected core (HBM: row-major from its
// offset), checked whole (RangeError naming the problem: a row past
// partition 127 or past the end of its partition, bytes past the HBM
// capacity) before any byte moves.
void check_place(const Session& s, const HostPlace& p, std::size_t rows, std::size_t row_bytes);
void write_place(Session& s, const HostPlace& p, const std::uint8_t* data, std::size_t rows,
                 std::size_t row_bytes);
void read_place(Session& s, const HostPlace& p, std::uint8_t* out, std::size_t rows,
                std::size_t row_bytes);

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

// --load / --dump of a Session (the .npy files of SPEC §9), on the spec's core.
// A --load's array, read and checked against the partitions (and the HBM,
// cfg.hbm_capacity()) before anything runs.
io::NpyArray read_load(const MemSpec& m, const platform::CoreConfig& cfg);
void load_npy(Session& s, const MemSpec& m, const io::NpyArray& a);
void dump_npy(Session& s, const MemSpec& m, const std::string& file);
void load_tile_npy(Session& s, const TileSpec& t);
void dump_tile_npy(Session& s, const TileSpec& t, const std::string& file);

}  // namespace tpb::run
