#include "models/sc/memory/hbm_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/sc/memory/mem_timing.h"
#include "models/sc/memory/payload_access.h"

namespace tpb::sc {

namespace {

std::uint64_t checked_capacity(const char* who, std::uint64_t capacity) {
  if (capacity == 0 || capacity > isa::kHbmWindow)
    throw std::invalid_argument(std::string(who) + ": capacity " + std::to_string(capacity) +
                                " bytes not in [1, 2^40]");
  return capacity;
}

}  // namespace

HbmMemory::HbmMemory(sc_core::sc_module_name name, std::uint64_t capacity, HbmTiming timing)
    : sc_core::sc_module(name),
      socket("socket"),
      bandwidth("bandwidth", timing.bytes_per_s),
      capacity_(checked_capacity(this->name(), capacity)),
      timing_(timing) {
  map(capacity_);
  socket.register_b_transport(this, &HbmMemory::b_transport);
  socket.register_get_direct_mem_ptr(this, &HbmMemory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &HbmMemory::transport_dbg);
}

void HbmMemory::map(std::uint64_t capacity) {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t bytes = (capacity + page - 1) / page * page;
  // Anonymous private memory: the kernel maps a page on its first write (a
  // read of an untouched page sees the shared zero page), and NORESERVE
  // leaves the reservation out of the commit charge.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error(std::string(this->name()) + ": cannot reserve " +
                             std::to_string(capacity) +
                             " bytes of address space for the HBM: " + std::strerror(errno));
  if (storage_) ::munmap(storage_, mapped_);
  storage_ = static_cast<std::uint8_t*>(p);
  mapped_ = bytes;
}

void HbmMemory::reset(std::uint64_t capacity, HbmTiming timing) {
  checked_capacity(name(), capacity);
  if (dmi_granted_) {
    dmi_granted_ = false;
    socket->invalidate_direct_mem_ptr(0, ~std::uint64_t{0});
  }
  bandwidth.reset(timing.bytes_per_s);
  map(capacity);
  capacity_ = capacity;
  timing_ = timing;
}

std::uint64_t HbmMemory::resident_bytes() const {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t pages = mapped_ / page;
  std::vector<unsigned char> vec(
      static_cast<std::size_t>(std::min<std::uint64_t>(pages, 1u << 20)));
  std::uint64_t resident = 0;
  // mincore in windows of at most 2^20 pages (4 GiB of 4 KiB pages).
  for (std::uint64_t first = 0; first < pages; first += vec.size()) {
    const std::uint64_t n = std::min<std::uint64_t>(vec.size(), pages - first);
    if (::mincore(storage_ + first * page, n * page, vec.data()) != 0) break;
    for (std::uint64_t i = 0; i < n; ++i) resident += vec[i] & 1u;
  }
  return resident * page;
}

HbmMemory::~HbmMemory() {
  if (storage_) ::munmap(storage_, mapped_);
}

std::uint8_t* HbmMemory::backdoor(std::uint64_t addr, std::uint64_t len) {
  if (len == 0 || !in_range(addr, len)) return nullptr;
  return storage_ + addr;
}

void HbmMemory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_response_status st =
      check_data_access(trans, in_range(trans.get_address(), trans.get_data_length()));
  if (st != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(st);
    return;
  }
  move_data(trans, storage_ + trans.get_address());
  delay += timing_.latency;
  trans.set_dmi_allowed(true);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool HbmMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  if (trans.get_address() >= capacity_) {
    dmi.set_start_address(capacity_);
    dmi.set_end_address(~std::uint64_t{0});
    dmi.allow_none();
    return false;
  }
  // The whole capacity is one host range: one grant covers it.
  dmi_granted_ = true;
  dmi.set_dmi_ptr(storage_);
  dmi.set_start_address(0);
  dmi.set_end_address(capacity_ - 1);  // inclusive
  dmi.allow_read_write();
  dmi.set_read_latency(timing_.latency);
  dmi.set_write_latency(timing_.latency);
  if (auto* ext = trans.get_extension<DmiTimingExtension>()) {
    // A DMI access costs what b_transport charges: the latency, no beats.
    ext->timing = MemTiming{timing_.latency, sc_core::SC_ZERO_TIME, 0, sc_core::SC_ZERO_TIME, 1};
    ext->arbiter = nullptr;
    ext->filled = true;
  }
  return true;
}

unsigned HbmMemory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  if (addr >= capacity_) return 0;
  // Debug access is clipped at the end of the capacity.
  const std::uint64_t room = capacity_ - addr;
  const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(trans.get_data_length(), room));
  if (cmd == tlm::TLM_READ_COMMAND)
    std::memcpy(trans.get_data_ptr(), storage_ + addr, n);
  else if (cmd == tlm::TLM_WRITE_COMMAND)
    std::memcpy(storage_ + addr, trans.get_data_ptr(), n);
  else
    return 0;
  return n;
}

}  // namespace tpb::sc
