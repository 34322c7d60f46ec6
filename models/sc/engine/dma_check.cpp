#include "models/sc/engine/dma_check.h"

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/isa/names.h"
#include "models/numerics/element_ops.h"

namespace tpb::sc {

namespace {

using isa::DmaDescriptor;
using isa::DmaEndpoint;

}  // namespace

void check_dma(const DmaDescriptor& d, const DmaCapacities& caps) {
  if (d.num_rows < 1 || d.num_rows > isa::kDmaMaxRows)
    throw DmaFault(fmt::format("dma_valid_num_rows: num_rows {} is not in 1..{}", d.num_rows,
                               isa::kDmaMaxRows));
  if (d.row_bytes == 0) throw DmaFault("dma_valid_row_bytes: row_bytes is 0");
  if (d.update_core > caps.cores)
    throw DmaFault(fmt::format(
        "dma_update_core_in_device: update=...(core{}:sem{}) names a core this device of {} "
        "core{} does not have",
        d.update_core - 1, d.events.update_idx, caps.cores, caps.cores == 1 ? "" : "s"));
  for (const auto& [e, side] :
       {std::pair<const DmaEndpoint*, const char*>{&d.src, "src"}, {&d.dst, "dst"}}) {
    if (dma_is_sbuf(*e)) {
      if (e->addr > isa::addr4::kAddressMask ||
          isa::region_of(static_cast<std::uint32_t>(e->addr)) != isa::Region::Sbuf)
        throw DmaFault(fmt::format("dma_sbuf_endpoint_address({}): 0x{:x} is not an SBUF address",
                                   side, e->addr));
      if (e->row_stride != 0)
        throw DmaFault(
            fmt::format("dma_sbuf_endpoint_row_stride({}): an SBUF endpoint's rows are partitions, "
                        "row_stride must be 0 (is {})",
                        side, e->row_stride));
      const auto a = static_cast<std::uint32_t>(e->addr);
      const unsigned p = isa::partition_of(a);
      if (p + d.num_rows > isa::kNumPartitions)
        throw DmaFault(
            fmt::format("dma_sbuf_rows_in_partitions({}): start partition {} + {} rows exceeds {}",
                        side, p, d.num_rows, isa::kNumPartitions));
      if (std::uint64_t{isa::offset_of(a)} + d.row_bytes > caps.sbuf_bytes_per_partition)
        throw DmaFault(fmt::format(
            "address error: dma_sbuf_row_in_partition({}): {} bytes at offset 0x{:x} cross the "
            "end of the partition ({} bytes)",
            side, d.row_bytes, isa::offset_of(a), caps.sbuf_bytes_per_partition));
    } else if (dma_is_hbm(*e)) {
      if (!caps.has_hbm) throw DmaFault(fmt::format("dma {}: the core has no HBM", side));
      const std::uint64_t cap = caps.hbm_bytes;
      const std::uint64_t span = std::uint64_t{d.num_rows - 1u} * e->row_stride + d.row_bytes;
      if (e->addr > cap || span > cap - e->addr)
        throw DmaFault(fmt::format(
            "address error: dma_hbm_in_capacity({}): {} rows of {} bytes from HBM offset 0x{:x} "
            "(row_stride {}) end at 0x{:x}, past the HBM capacity of {} bytes",
            side, d.num_rows, d.row_bytes, e->addr, e->row_stride,
            static_cast<unsigned __int128>(e->addr) + span > UINT64_MAX ? UINT64_MAX
                                                                        : e->addr + span,
            cap));
    } else {
      throw DmaFault(fmt::format(
          "dma_valid_endpoint_kind({}): kind {} is neither HBM (0) nor SBUF (1)", side, e->kind));
    }
  }
  if (dma_is_hbm(d.dst) && d.num_rows > 1 && d.dst.row_stride < d.row_bytes)
    throw DmaFault(fmt::format(
        "dma_hbm_dst_rows_disjoint: destination rows of {} bytes {} bytes apart overlap",
        d.row_bytes, d.dst.row_stride));
  if (d.dst_rmw_op > static_cast<std::uint8_t>(isa::DmaRmwOp::Add))
    throw DmaFault(
        fmt::format("dma_valid_rmw_op: dst_rmw_op {} is not 0 (none) or 1 (add)", d.dst_rmw_op));
  if (dma_adds(d)) {
    if (!num::is_add_dtype(d.rmw_dtype))
      throw DmaFault(fmt::format("dma_valid_rmw_dtype: rmw_dtype 0x{:x} ({}) cannot be added",
                                 d.rmw_dtype, isa::dtype_name(d.rmw_dtype)));
    if (d.row_bytes % isa::dtype_size(d.rmw_dtype) != 0)
      throw DmaFault(fmt::format(
          "dma_rmw_row_bytes_multiple: row_bytes {} is not a whole number of {} elements",
          d.row_bytes, isa::dtype_name(d.rmw_dtype)));
  } else if (d.rmw_dtype != 0) {
    throw DmaFault(fmt::format(
        "dma_rmw_dtype_only_with_op: rmw_dtype 0x{:x} without dst_rmw_op add", d.rmw_dtype));
  }
}

}  // namespace tpb::sc
