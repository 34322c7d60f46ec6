#include "models/sc/engine/dma_executor.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/numerics/element_ops.h"
#include "models/sc/engine/timing_config.h"

namespace tpb::sc {

namespace {

using isa::DmaDescriptor;
using isa::DmaEndpoint;

bool is_hbm(const DmaEndpoint& e) {
  return e.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
}
bool is_sbuf(const DmaEndpoint& e) {
  return e.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Sbuf);
}
bool adds(const DmaDescriptor& d) {
  return d.dst_rmw_op == static_cast<std::uint8_t>(isa::DmaRmwOp::Add);
}

// The TLM address of row r of an endpoint (checked: inside its memory).
std::uint64_t row_addr(const DmaEndpoint& e, unsigned r) {
  if (is_hbm(e)) return isa::hbm_addr(e.addr + std::uint64_t{r} * e.row_stride);
  const auto a = static_cast<std::uint32_t>(e.addr);
  return isa::sbuf_addr(isa::partition_of(a) + r, isa::offset_of(a));
}

std::string status_text(tlm::tlm_response_status s) {
  switch (s) {
    case tlm::TLM_ADDRESS_ERROR_RESPONSE:
      return "TLM_ADDRESS_ERROR_RESPONSE";
    case tlm::TLM_COMMAND_ERROR_RESPONSE:
      return "TLM_COMMAND_ERROR_RESPONSE";
    case tlm::TLM_BURST_ERROR_RESPONSE:
      return "TLM_BURST_ERROR_RESPONSE";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE:
      return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
    case tlm::TLM_GENERIC_ERROR_RESPONSE:
      return "TLM_GENERIC_ERROR_RESPONSE";
    default:
      return "TLM_INCOMPLETE_RESPONSE";
  }
}

// ceil(bytes / bytes_per_s) in ps, in 128 bits.
std::uint64_t stream_ps(std::uint64_t bytes, std::uint64_t bytes_per_s) {
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 1000000000000ull;
  return static_cast<std::uint64_t>((num + bytes_per_s - 1) / bytes_per_s);
}

}  // namespace

DmaExecutor::DmaExecutor(MemPort& port, BandwidthShare* hbm, DmaTiming timing)
    : port_(port), hbm_(hbm), timing_(timing) {
  if (timing_.queue_bytes_per_s == 0) timing_.queue_bytes_per_s = 1;
}

void DmaExecutor::check(const DmaDescriptor& d) const {
  if (d.num_rows < 1 || d.num_rows > isa::kDmaMaxRows)
    throw DmaFault(fmt::format("dma_valid_num_rows: num_rows {} is not in 1..{}", d.num_rows,
                               isa::kDmaMaxRows));
  if (d.row_bytes == 0) throw DmaFault("dma_valid_row_bytes: row_bytes is 0");
  for (const auto& [e, side] :
       {std::pair<const DmaEndpoint*, const char*>{&d.src, "src"}, {&d.dst, "dst"}}) {
    if (is_sbuf(*e)) {
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
      if (std::uint64_t{isa::offset_of(a)} + d.row_bytes > timing_.sbuf_bytes_per_partition)
        throw DmaFault(fmt::format(
            "address error: dma_sbuf_row_in_partition({}): {} bytes at offset 0x{:x} cross the "
            "end of the partition ({} bytes)",
            side, d.row_bytes, isa::offset_of(a), timing_.sbuf_bytes_per_partition));
    } else if (is_hbm(*e)) {
      if (!hbm_) throw DmaFault(fmt::format("dma {}: the core has no HBM", side));
      const std::uint64_t cap = timing_.hbm_bytes;
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
  if (is_hbm(d.dst) && d.num_rows > 1 && d.dst.row_stride < d.row_bytes)
    throw DmaFault(fmt::format(
        "dma_hbm_dst_rows_disjoint: destination rows of {} bytes {} bytes apart overlap",
        d.row_bytes, d.dst.row_stride));
  if (d.dst_rmw_op > static_cast<std::uint8_t>(isa::DmaRmwOp::Add))
    throw DmaFault(
        fmt::format("dma_valid_rmw_op: dst_rmw_op {} is not 0 (none) or 1 (add)", d.dst_rmw_op));
  if (adds(d)) {
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

void DmaExecutor::access(std::uint64_t addr, void* data, std::uint32_t len, bool is_write,
                         Side& side, const char* what) {
  // SBUF accesses go to the side's partition lanes (the stream's time);
  // an HBM access returns its latency, the side's fill.
  port_.begin_stream(&side.lanes);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  const tlm::tlm_response_status st =
      is_write ? port_.write(addr, data, len, d) : port_.read(addr, data, len, d);
  port_.end_stream();
  if (st != tlm::TLM_OK_RESPONSE)
    throw DmaFault(fmt::format("address error: DMA {} {} of {} bytes at 0x{:x}: {}", what,
                               is_write ? "write" : "read", len, addr, status_text(st)));
  if (d > side.hbm_latency) side.hbm_latency = d;
}

void DmaExecutor::move(const DmaDescriptor& d) {
  const bool add = adds(d);
  const unsigned es = add ? isa::dtype_size(d.rmw_dtype) : 1;
  const std::uint32_t chunk = std::min<std::uint32_t>(kChunkBytes, d.row_bytes);
  buf_.resize(chunk);
  if (add) acc_.resize(chunk);
  for (unsigned r = 0; r < d.num_rows; ++r) {
    const std::uint64_t src = row_addr(d.src, r), dst = row_addr(d.dst, r);
    for (std::uint32_t off = 0; off < d.row_bytes; off += chunk) {
      const std::uint32_t n = std::min(chunk, d.row_bytes - off);
      access(src + off, buf_.data(), n, false, src_side_, "src");
      if (!add) {
        access(dst + off, buf_.data(), n, true, dst_side_, "dst");
        continue;
      }
      access(dst + off, acc_.data(), n, false, dst_side_, "dst");
      num::add_elements(d.rmw_dtype, buf_.data(), acc_.data(), n / es);
      access(dst + off, acc_.data(), n, true, dst_side_, "dst");
    }
  }
}

DmaResult DmaExecutor::execute(const DmaDescriptor& d, tlm_utils::tlm_quantumkeeper& qk) {
  check(d);
  DmaResult r;
  r.bytes = std::uint64_t{d.num_rows} * d.row_bytes;
  // The HBM share orders flows by simulated time: start from the synced time.
  qk.sync();
  r.issue_ps = to_ps(sc_core::sc_time_stamp());
  qk.inc(timing_.latency);
  qk.sync();
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  r.start_ps = to_ps(start);

  const unsigned weight = (is_hbm(d.src) ? 1u : 0u) + (is_hbm(d.dst) ? (adds(d) ? 2u : 1u) : 0u);
  sc_core::sc_time transfer;
  if (weight != 0) {
    transfer = hbm_->transfer(r.bytes, timing_.queue_bytes_per_s, weight);  // waits
    r.hbm_bytes = r.bytes * weight;
  } else {
    transfer = ps_time(stream_ps(r.bytes, timing_.queue_bytes_per_s));
  }

  src_side_.lanes.reset();
  dst_side_.lanes.reset();
  src_side_.hbm_latency = dst_side_.hbm_latency = sc_core::SC_ZERO_TIME;
  move(d);
  const sc_core::sc_time lanes = std::max(
      {src_side_.lanes.max_read(), dst_side_.lanes.max_read(), dst_side_.lanes.max_write()});
  const sc_core::sc_time fill = (is_hbm(d.src) ? src_side_.hbm_latency : src_side_.lanes.fill()) +
                                (is_hbm(d.dst) ? dst_side_.hbm_latency : dst_side_.lanes.fill());
  const sc_core::sc_time end = start + std::max(transfer, lanes) + fill;
  qk.set(end - sc_core::sc_time_stamp());
  r.end_ps = to_ps(end);
  return r;
}

}  // namespace tpb::sc
