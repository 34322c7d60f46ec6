// The run-time checks of a DMA descriptor (SPEC §10) against the configured
// capacities: the static contract (isa::check_instruction) checks the
// generation's defaults, this the profile's (an HBM raised or lowered by
// `hbm.bytes`, the SBUF's bytes per partition). Every row and address is
// checked before the first byte moves, so a bad descriptor writes nothing.
// The transfer itself is the DMA engines' (dma_engines.h).
#pragma once

#include <cstdint>
#include <stdexcept>

#include "models/isa/encodings.h"

namespace tpb::sc {

// What a descriptor is checked against.
struct DmaCapacities {
  bool has_hbm = true;
  std::uint64_t hbm_bytes = 0;  // the HBM's capacity
  std::uint32_t sbuf_bytes_per_partition = 0;
  // The cores of the device (SPEC §15): a remote semaphore's core must be one.
  unsigned cores = 1;
};

// A descriptor the queue cannot perform: its message names the predicate or
// the address (the queue's sequencer adds engine, index and opcode).
class DmaFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline bool dma_is_hbm(const isa::DmaEndpoint& e) {
  return e.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
}
inline bool dma_is_sbuf(const isa::DmaEndpoint& e) {
  return e.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Sbuf);
}
inline bool dma_adds(const isa::DmaDescriptor& d) {
  return d.dst_rmw_op == static_cast<std::uint8_t>(isa::DmaRmwOp::Add);
}
// Bytes of HBM bandwidth per byte moved: a read of an HBM source, a write
// of an HBM destination, and its read too when the write adds.
inline unsigned dma_hbm_weight(const isa::DmaDescriptor& d) {
  return (dma_is_hbm(d.src) ? 1u : 0u) + (dma_is_hbm(d.dst) ? (dma_adds(d) ? 2u : 1u) : 0u);
}

// Throws DmaFault naming the predicate and the address.
void check_dma(const isa::DmaDescriptor& d, const DmaCapacities& caps);

}  // namespace tpb::sc
