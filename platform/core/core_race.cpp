// The host socket's part in the race check (SPEC §14): an embedding's host
// that reads or writes memory or a semaphore while the core runs is an agent
// of its own (race::Detector::host_access / host_semaphore).
#include <algorithm>

#include "platform/core/tpb_core.h"

namespace tpb::platform {

void TpbCore::race_host(const tlm::tlm_generic_payload& t) {
  const std::uint64_t addr = t.get_address();
  const std::uint64_t len = t.get_data_length();
  const bool write = t.is_write();
  if (addr >= isa::kSemaphoreBase && addr < isa::kSemaphoreBase + sc::SemaphoreBank::kSpan) {
    // Each semaphore the access touches: a write updates it, a read
    // observes it.
    const std::uint64_t end =
        std::min<std::uint64_t>(addr + len, isa::kSemaphoreBase + sc::SemaphoreBank::kSpan);
    for (std::uint64_t a = addr & ~std::uint64_t{3}; a < end; a += 4)
      setup_.race->host_semaphore(core_id_, static_cast<unsigned>((a - isa::kSemaphoreBase) / 4),
                                  write);
    return;
  }
  setup_.race->host_access(core_id_, addr, len, write);
}

}  // namespace tpb::platform
