// The `--load` / `--dump` specs of `tpbsim run` (SPEC §9): memory specs
// `sbuf|psum:PARTITION:OFFSET[:ROWSxCOLS:DTYPE]=FILE.npy` and tile specs
// `tile:N[:COL]=FILE.npy`, parsed and checked against the partitions before
// anything runs. Pure parsing and overflow-safe arithmetic (no SystemC), so
// unit tests and the fuzz target (sc_tests/fuzz/fuzz_mem_spec.cpp) call it
// directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "platform/io/npy.h"
#include "platform/run/host_args.h"

namespace tpb::run {

// A bad spec; what() names the spec and what is wrong.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MemSpec {
  std::string text;
  // SPEC §15: `coreK:` before the memory names core K of a device (none:
  // core 0); checked against the device by check_core. HBM is the device's
  // and takes no prefix.
  unsigned core = 0;
  // Where (host_args.h): SBUF / PSUM rows from a partition, or
  // `hbm:OFFSET[:ROWSxCOLS:DTYPE]` (SPEC §10): the array's bytes, row-major,
  // from that byte of the device's HBM.
  HostPlace place;
  std::size_t rows = 0, cols = 0;  // --dump only
  io::NpyDtype dtype = io::NpyDtype::U8;
  std::string file;
};

// `tile:N[:COL]=FILE.npy` (SPEC §9, §6): an SFU Local tile; COL, for --load
// only, is the physical Col (>= the array's columns; the padding is undefined).
struct TileSpec {
  std::string text;
  unsigned core = 0;  // `coreK:tile:N...` (SPEC §15)
  unsigned tile = 0;
  unsigned col = 0;  // 0: the array's columns
  std::string file;
};

// A non-negative integer (decimal, 0x hex or 0 octal) filling the whole of
// `s`; SpecError "bad WHAT 'S' in 'SPEC'" otherwise (empty, sign, junk, > 2^64-1).
std::uint64_t parse_uint(const std::string& s, const std::string& what, const std::string& spec);
// `s` split at every `c` (n separators give n + 1 fields, empty ones kept).
std::vector<std::string> split(const std::string& s, char c);

// Where FILE starts in a spec SPEC=FILE: after its first '=' (a FILE may
// hold '=', a SPEC never does); npos when there is none. Every reader of a
// spec (the parsers below, a sweep rewriting its outputs) splits it here.
std::size_t spec_file_start(const std::string& spec);

// MEM:PARTITION:OFFSET=FILE (load) or MEM:PARTITION:OFFSET:ROWSxCOLS:DTYPE=FILE
// (dump); partition <= 127, offset < 256 KiB, rows and cols >= 1. HBM:
// hbm:OFFSET=FILE and hbm:OFFSET:ROWSxCOLS:DTYPE=FILE (OFFSET any u64; the
// capacity is checked by check_hbm_fits).
MemSpec parse_mem_spec(const std::string& spec, bool dump);
// Whether a spec names a tile ("tile:" prefix, after a core prefix) rather
// than a memory.
bool is_tile_spec(const std::string& s);
// `coreK:` at the start of a spec (SPEC §15): K, and `rest` the spec after
// it; none: 0 and the spec. SpecError for a bad K.
unsigned core_prefix(const std::string& spec, std::string& rest);
// A spec's core inside a device of `cores` cores; SpecError naming it.
void check_core(const std::string& text, unsigned core, unsigned cores);
// tile:N=FILE (dump) or tile:N[:COL]=FILE (load); N <= 31, COL 1..65535.
TileSpec parse_tile_spec(const std::string& spec, bool dump);

// `rows` rows from the place's partition stay inside partition 127
// (overflow-safe: rows can be anything a user or a .npy header gives).
void check_rows(const MemSpec& m, std::size_t rows);
// A row of `row_bytes` from the place's offset stays inside a partition of
// `cap` bytes.
void check_row_fits(const MemSpec& m, std::uint64_t row_bytes, std::uint32_t cap);
// A --dump's ROWS x COLS of its DTYPE fit the partitions of `cap` bytes:
// check_rows and every row inside its partition.
void check_dump_fits(const MemSpec& m, std::uint32_t cap);
// `bytes` bytes from the place's HBM offset stay inside an HBM of
// `capacity` bytes (overflow-safe).
void check_hbm_fits(const MemSpec& m, std::uint64_t bytes, std::uint64_t capacity);
// The bytes of an HBM --dump: ROWS x COLS x the DTYPE's size (saturating).
std::uint64_t dump_bytes(const MemSpec& m);

}  // namespace tpb::run
