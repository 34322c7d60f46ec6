// Walking a resolved TENSOR3D pattern in one partition (SPEC §2): shared by
// the firmware stubs that read or write strided operands.
#pragma once

#include <cstdint>

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/kernel/kernel.h"

namespace tpb::fw {

// One resolved TENSOR3D operand (registers applied).
struct ResolvedPattern {
  std::uint32_t start = 0;  // 27-bit address of element (0,0,0) in the start partition
  std::int16_t step[3] = {0, 0, 0};
  std::uint32_t num[3] = {0, 0, 0};
  std::uint64_t count() const { return std::uint64_t{num[0]} * num[1] * num[2]; }
};

// Calls fn(byte address, element index k, run length in elements) for the
// runs of `p` over `elem_bytes`-byte elements in `partition`, dim 0 innermost
// (a run is a stretch of dim 0 with step 1). Throws KernelFault naming the
// operand (`what`), the element and the offset when an element leaves the
// partition's 256 KiB slot.
template <typename Fn>
void for_each_run(const ResolvedPattern& p, unsigned elem_bytes, unsigned partition,
                  const char* what, Fn fn) {
  const std::uint32_t region = p.start & ~(isa::kRegionSize - 1);
  const std::uint32_t base = region | (partition << isa::kPartitionShift);
  const std::int64_t off0 = isa::offset_of(p.start);
  const bool contiguous = p.step[0] == 1;
  const std::uint32_t run = contiguous ? p.num[0] : 1;
  const std::uint32_t runs0 = contiguous ? 1 : p.num[0];
  std::uint64_t k = 0;
  for (std::uint32_t i2 = 0; i2 < p.num[2]; ++i2)
    for (std::uint32_t i1 = 0; i1 < p.num[1]; ++i1)
      for (std::uint32_t i0 = 0; i0 < runs0; ++i0) {
        const std::int64_t elem = std::int64_t{i0} * p.step[0] + std::int64_t{i1} * p.step[1] +
                                  std::int64_t{i2} * p.step[2];
        const std::int64_t off = off0 + elem * elem_bytes;
        if (off < 0 || off + std::int64_t{run} * elem_bytes > std::int64_t{isa::kPartitionSlot})
          throw KernelFault(
              fmt::format("address error: {} element ({},{},{}) of partition {} at byte offset {} "
                          "(pattern start 0x{:07x}) lies outside the partition",
                          what, i0, i1, i2, partition, off, p.start));
        fn(std::uint64_t{base} + static_cast<std::uint64_t>(off), k, run);
        k += run;
      }
}

}  // namespace tpb::fw
