// Fuzz target: the --load / --dump spec parser of `tpbsim run`
// (platform/run/mem_spec.h, docs/FUZZING.md).
//
// Input: the text of one spec (as after `--load ` or `--dump `). It is parsed
// as a --load and as a --dump (tile specs as tile specs). Properties:
//   - a spec is accepted or refused with a SpecError naming it, nothing else;
//   - an accepted spec's fields are in range (partition <= 127, offset <
//     256 KiB, tile <= 31, COL 1..65535, rows and cols >= 1) and its FILE is
//     the text after the first '=';
//   - the shape checks (check_rows, check_row_fits, check_dump_fits) accept
//     exactly the shapes whose every row lies inside its partition, decided
//     here in 128-bit arithmetic, for the partition sizes of every generation
//     and for boundary row counts and row sizes; an accepted row's address is
//     partition << 18 | offset in its region.
#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "platform/run/mem_spec.h"
#include "platform/run/no_sc_main.h"
#include "sc_tests/fuzz/fuzz_check.h"

namespace {

using namespace tpb;
using u128 = unsigned __int128;

const std::vector<std::uint32_t>& capacities() {
  static const std::vector<std::uint32_t> caps = [] {
    std::vector<std::uint32_t> v;
    for (isa::Arch a :
         {isa::Arch::Sunda, isa::Arch::Cayman, isa::Arch::Mariana, isa::Arch::Maverick}) {
      const isa::MemoryCapacity c = isa::default_capacity(a);
      v.push_back(c.sbuf_bytes_per_partition);
      v.push_back(c.psum_bytes_per_partition);
    }
    v.push_back(1);
    v.push_back(isa::kPartitionSlot);
    return v;
  }();
  return caps;
}

template <typename F>
bool accepted(F&& f) {
  try {
    f();
    return true;
  } catch (const run::SpecError&) {
    return false;
  }
}

// An hbm: spec is a byte offset into the device's HBM, any u64: it fits or
// not when the HBM's capacity is known (check_hbm_fits).
void check_hbm(const run::MemSpec& m) {
  const std::uint64_t offset = m.place.offset;
  FUZZ_CHECK(m.place.partition == 0, "partition %u on the HBM", m.place.partition);
  const std::uint64_t kCapacities[] = {0, 1, std::uint64_t{16} << 30, ~std::uint64_t{0}};
  const std::uint64_t kBytes[] = {0, 1, std::uint64_t{1} << 32, ~std::uint64_t{0}};
  for (std::uint64_t capacity : kCapacities)
    for (std::uint64_t bytes : kBytes) {
      const bool ok = accepted([&] { run::check_hbm_fits(m, bytes, capacity); });
      FUZZ_CHECK(ok == (u128{offset} + bytes <= capacity),
                 "check_hbm_fits(%llu) from HBM offset %llu, capacity %llu: %d",
                 static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(offset),
                 static_cast<unsigned long long>(capacity), ok);
    }
}

void check_mem(const run::MemSpec& m, const std::string& spec, bool dump) {
  const run::HostPlace& at = m.place;
  FUZZ_CHECK(m.file == spec.substr(spec.find('=') + 1), "file '%s'", m.file.c_str());
  FUZZ_CHECK(m.text == spec, "text");
  if (dump) FUZZ_CHECK(m.rows >= 1 && m.cols >= 1, "empty shape %zux%zu", m.rows, m.cols);
  if (at.hbm) return check_hbm(m);
  FUZZ_CHECK(at.partition < isa::kNumPartitions, "partition %u accepted", at.partition);
  FUZZ_CHECK(at.offset < isa::kPartitionSlot, "offset %llu accepted",
             static_cast<unsigned long long>(at.offset));
  const std::uint64_t base = at.region == isa::Region::Sbuf ? isa::region_base(isa::Region::Sbuf)
                                                            : isa::region_base(isa::Region::Psum);
  const std::size_t kRows[] = {0, 1, 2, 127, 128, 129, std::size_t{1} << 32, ~std::size_t{0}};
  for (std::size_t rows : kRows) {
    const bool ok = accepted([&] { run::check_rows(m, rows); });
    FUZZ_CHECK(ok == (u128{at.partition} + rows <= isa::kNumPartitions),
               "check_rows(%zu) from partition %u: %d", rows, at.partition, ok);
    if (ok && rows > 0) {
      const std::uint64_t last = run::row_addr(at, rows - 1);
      FUZZ_CHECK(last == base + ((std::uint64_t{at.partition} + rows - 1) << isa::kPartitionShift |
                                 at.offset),
                 "row %zu at 0x%llx", rows - 1, static_cast<unsigned long long>(last));
    }
  }
  for (std::uint32_t cap : capacities()) {
    const std::uint64_t kBytes[] = {
        0, 1, cap, cap - at.offset, cap - at.offset + 1, std::uint64_t{1} << 32, ~std::uint64_t{0}};
    for (std::uint64_t row_bytes : kBytes) {
      const bool ok = accepted([&] { run::check_row_fits(m, row_bytes, cap); });
      FUZZ_CHECK(ok == (u128{at.offset} + row_bytes <= cap || (row_bytes == 0 && at.offset >= cap)),
                 "check_row_fits(%llu) from offset %llu, partition of %u bytes: %d",
                 static_cast<unsigned long long>(row_bytes),
                 static_cast<unsigned long long>(at.offset), cap, ok);
    }
    if (dump) {
      const bool ok = accepted([&] { run::check_dump_fits(m, cap); });
      const u128 row_bytes = u128{m.cols} * tpb::io::npy_itemsize(m.dtype);
      FUZZ_CHECK(ok == (u128{at.partition} + m.rows <= isa::kNumPartitions &&
                        u128{at.offset} + row_bytes <= cap),
                 "check_dump_fits %zux%zu from %u:0x%llx, partition of %u bytes: %d", m.rows,
                 m.cols, at.partition, static_cast<unsigned long long>(at.offset), cap, ok);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return -1;
  const std::string spec(reinterpret_cast<const char*>(data), size);
  for (bool dump : {false, true}) {
    if (run::is_tile_spec(spec)) {
      run::TileSpec t;
      if (!accepted([&] { t = run::parse_tile_spec(spec, dump); })) continue;
      FUZZ_CHECK(t.tile < 32, "tile %u accepted", t.tile);
      FUZZ_CHECK(t.col <= 0xFFFF && (!dump || t.col == 0), "COL %u accepted", t.col);
      FUZZ_CHECK(t.file == spec.substr(spec.find('=') + 1) && !t.file.empty(), "file '%s'",
                 t.file.c_str());
    } else {
      run::MemSpec m;
      if (!accepted([&] { m = run::parse_mem_spec(spec, dump); })) continue;
      check_mem(m, spec, dump);
    }
  }
  return 0;
}
