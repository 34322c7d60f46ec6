#include "platform/cosim/memory_tap.h"

#include <cstring>

#include "models/sc/engine/timing_config.h"

namespace tpb::cosim {

MemoryTap::MemoryTap(sc::PartitionedMemory& mem, std::uint64_t lo, std::uint64_t hi)
    : lo_(lo), hi_(hi) {
  mem.add_observer([this](const sc::MemOp& op) { on_op(op); });
}

void MemoryTap::on_op(const sc::MemOp& op) {
  ++ops_;
  if (op.debug || op.cmd != tlm::TLM_WRITE_COMMAND) return;
  // Whole 32-bit words inside the window, in address order.
  for (unsigned k = 0; k + 4 <= op.len; k += 4) {
    const std::uint64_t a = op.addr + k;
    if (a < lo_ || a + 3 > hi_) continue;
    std::uint32_t w;
    std::memcpy(&w, op.data + k, 4);
    writes_.push_back(TappedWrite{sc::to_ps(op.time), a, w});
  }
}

}  // namespace tpb::cosim
