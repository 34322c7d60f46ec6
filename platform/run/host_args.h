// The arguments a host hands the core, checked in one place: `tpbsim run`'s
// options and specs, the Python bindings (platform/python) and the DPI-C
// functions (platform/dpi) all call these, so they take the same values and
// say the same thing about the others (docs/BAD_INPUT.md "Hosts").
//
// Each check throws RangeError (a place outside the core: a partition, an
// offset, a tile, a semaphore, a register) or InputError (a value outside its
// domain: a count of threads, a limit) whose message names the argument and
// its range; callers prefix where it came from ("'sbuf:200:0=x.npy': ",
// "max_wall_seconds: ").
#pragma once

#include <cstdint>
#include <string>

#include "models/isa/address_map.h"
#include "platform/run/run_options.h"

namespace tpb::run {

// An integer as a host gave it: a 64-bit value, or one past 64 bits (a Python
// int, a decimal string), kept as its text for the message.
struct HostInt {
  long long value = 0;
  int overflow = 0;  // +1: above INT64_MAX, -1: below INT64_MIN
  std::string digits;

  HostInt() = default;
  HostInt(long long v) : value(v) {}  // NOLINT: a plain integer is a HostInt
  static HostInt past(int sign, std::string digits);
  // Whether it is a value in [lo, hi].
  bool in(long long lo, long long hi) const { return !overflow && value >= lo && value <= hi; }
  bool negative() const { return overflow < 0 || (!overflow && value < 0); }
  std::string str() const;
};

// A partitioned memory by its name: "sbuf" or "psum" ("hbm", which has no
// partitions, is reached by byte offset: is_hbm); any other name is an
// InputError listing the memories.
isa::Region memory_region(const std::string& name);
// Whether `name` is the core's HBM ("hbm", SPEC §10).
inline bool is_hbm(const std::string& name) { return name == "hbm"; }
// SBUF / PSUM partition 0..127.
unsigned check_partition(const HostInt& p);
// A byte offset inside a partition slot (0 .. 256 KiB - 1); the generation's
// capacity is checked with the rows (arrays.h: check_place).
std::uint32_t check_offset(const HostInt& offset);
// An HBM place: partition 0 (HBM has none), offset 0 .. capacity (the bytes
// from it are checked with them: arrays.h, check_place).
std::uint64_t check_hbm_offset(const HostInt& partition, const HostInt& offset,
                               std::uint64_t capacity);
// Where a memory access of a host goes (Python's Core.write / read, the DPI
// row calls, a --load / --dump spec: MemSpec::place): HBM by byte offset
// (partition 0), or SBUF / PSUM rows from a partition. checked_place checks
// the name, the partition and the offset; the extent is checked with the
// rows (arrays.h: check_place).
struct HostPlace {
  bool hbm = false;
  isa::Region region = isa::Region::Sbuf;
  unsigned partition = 0;
  std::uint64_t offset = 0;
  static HostPlace rows(isa::Region r, unsigned partition, std::uint32_t offset) {
    return {false, r, partition, offset};
  }
};
HostPlace checked_place(const std::string& mem, const HostInt& partition, const HostInt& offset,
                        std::uint64_t hbm_bytes);
// The address of row `row` of an SBUF / PSUM place (partition + row, its
// offset); row < isa::kNumPartitions - partition (checked with the rows).
std::uint64_t row_addr(const HostPlace& p, std::size_t row);
// f() with its error's message said from where the value came ("--threads ",
// "cores="): prefixed, its type (InputError, RangeError) kept.
template <typename F>
auto from_argument(const std::string& where, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const RangeError& e) {
    throw RangeError(where + e.what());
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  }
}

// An SFU Local tile T0..T31.
unsigned check_tile(const HostInt& n);
// A tile's physical Col, 1..65535.
unsigned check_tile_col(const HostInt& col);
// A semaphore 0..63, and a value for it (a u32).
unsigned check_semaphore(const HostInt& i);
std::uint32_t check_semaphore_value(const HostInt& v);
// An engine register r0..r31.
unsigned check_register(const HostInt& r);
// Host threads of a run's arithmetic, 1..1024 (InputError).
unsigned check_threads(const HostInt& n);
// The cores of a device (SPEC §15), 1..isa::kMaxDeviceCores (InputError
// "N: a device has 1 to 32 cores").
unsigned check_cores(const HostInt& n);
// The watchdogs (InputError): a simulated time of 1 ps .. 2^62 ps, a wall
// time of (0, 1e9] seconds. The message is the value and its range.
std::uint64_t check_max_sim_ps(const HostInt& ps);
double check_max_wall_seconds(double seconds);

}  // namespace tpb::run
