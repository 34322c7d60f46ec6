#include "models/sc/memory/hbm_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/sc/memory/mem_timing.h"
#include "models/sc/memory/payload_access.h"
#include "models/sc/memory/zeroed_storage.h"

namespace tpb::sc {

namespace {

std::uint64_t checked_capacity(const char* who, std::uint64_t capacity) {
  if (capacity == 0 || capacity > isa::kHbmWindow)
    throw std::invalid_argument(std::string(who) + ": capacity " + std::to_string(capacity) +
                                " bytes not in [1, 2^40]");
  return capacity;
}

std::string fmt_hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

// ----------------------------------------------------------------- storage

HbmStorage::HbmStorage(std::uint64_t capacity) { reset(capacity); }

HbmStorage::~HbmStorage() { free_all(); }

void HbmStorage::free_all() {
  for (std::uint8_t*& c : chunks_)
    if (c) {
      ZeroedStorageDeleter{kChunkBytes}(c);
      c = nullptr;
    }
  mapped_ = 0;
}

void HbmStorage::reset(std::uint64_t capacity) {
  free_all();
  capacity_ = capacity;
  // One pointer per chunk: 4 MiB of table for the whole 2^40 window.
  chunks_.assign((capacity + kChunkBytes - 1) / kChunkBytes, nullptr);
  chunks_.shrink_to_fit();
}

std::uint64_t HbmStorage::chunk_last(std::uint64_t addr) const {
  return std::min(chunk_start(addr) + kChunkBytes, capacity_) - 1;
}

std::uint8_t* HbmStorage::chunk(std::uint64_t addr) {
  std::uint8_t*& c = chunks_[addr / kChunkBytes];
  if (!c) {
    try {
      c = zeroed_storage(kChunkBytes).release();
    } catch (const std::bad_alloc&) {
      throw HostSpaceError("HBM: no host address space left for 2 MiB of HBM at offset 0x" +
                           fmt_hex(chunk_start(addr)) + " (" + std::to_string(mapped_) +
                           " chunks mapped)");
    }
    ++mapped_;
  }
  return c;
}

void HbmStorage::read(std::uint64_t addr, std::uint8_t* dst, std::uint64_t len) const {
  while (len > 0) {
    const std::uint64_t n = std::min(len, chunk_last(addr) - addr + 1);
    const std::uint8_t* c = chunks_[addr / kChunkBytes];
    if (c)
      std::memcpy(dst, c + (addr - chunk_start(addr)), n);
    else
      std::memset(dst, 0, n);
    addr += n;
    dst += n;
    len -= n;
  }
}

void HbmStorage::write(std::uint64_t addr, const std::uint8_t* src, std::uint64_t len) {
  while (len > 0) {
    const std::uint64_t n = std::min(len, chunk_last(addr) - addr + 1);
    std::memcpy(chunk(addr) + (addr - chunk_start(addr)), src, n);
    addr += n;
    src += n;
    len -= n;
  }
}

std::uint64_t HbmStorage::resident_bytes() const {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec(kChunkBytes / page);
  std::uint64_t resident = 0;
  for (const std::uint8_t* c : chunks_) {
    if (!c) continue;
    if (::mincore(const_cast<std::uint8_t*>(c), kChunkBytes, vec.data()) != 0) continue;
    for (unsigned char v : vec) resident += v & 1u;
  }
  return resident * page;
}

// ------------------------------------------------------------------ target

HbmMemory::HbmMemory(sc_core::sc_module_name name, std::uint64_t capacity, HbmTiming timing)
    : sc_core::sc_module(name),
      socket("socket"),
      bandwidth("bandwidth", timing.bytes_per_s),
      timing_(timing),
      storage_(std::make_shared<HbmStorage>(checked_capacity(this->name(), capacity))) {
  socket.register_b_transport(this, &HbmMemory::b_transport);
  socket.register_get_direct_mem_ptr(this, &HbmMemory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &HbmMemory::transport_dbg);
}

void HbmMemory::invalidate_dmi() {
  if (!dmi_granted_) return;
  dmi_granted_ = false;
  socket->invalidate_direct_mem_ptr(0, ~std::uint64_t{0});
}

void HbmMemory::reset(std::uint64_t capacity, HbmTiming timing) {
  checked_capacity(name(), capacity);
  invalidate_dmi();
  bandwidth.reset(timing.bytes_per_s);
  storage_->reset(capacity);
  timing_ = timing;
}

void HbmMemory::share_storage(std::shared_ptr<HbmStorage> s) {
  invalidate_dmi();
  storage_ = std::move(s);
}

HbmMemory::~HbmMemory() = default;

std::uint8_t* HbmMemory::backdoor(std::uint64_t addr, std::uint64_t len) {
  if (len == 0 || !in_range(addr, len)) return nullptr;
  if (addr + len - 1 > storage_->chunk_last(addr)) return nullptr;
  return storage_->chunk(addr) + (addr - storage_->chunk_start(addr));
}

void HbmMemory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  const tlm::tlm_response_status st = check_data_access(trans, in_range(addr, len));
  if (st != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(st);
    return;
  }
  const tlm::tlm_command cmd = trans.get_command();
  if (len != 0 && cmd != tlm::TLM_IGNORE_COMMAND) {
    const bool be = trans.get_byte_enable_ptr() != nullptr;
    if (cmd == tlm::TLM_READ_COMMAND && !be) {
      storage_->read(addr, trans.get_data_ptr(), len);  // no chunk mapped to read zeros
    } else if (!be) {
      storage_->write(addr, trans.get_data_ptr(), len);
    } else {
      // Byte enables: through a copy of the span (it may cross chunks).
      std::vector<std::uint8_t> span(len);
      storage_->read(addr, span.data(), len);
      move_data(trans, span.data());
      if (cmd == tlm::TLM_WRITE_COMMAND) storage_->write(addr, span.data(), len);
    }
  }
  delay += timing_.latency;
  trans.set_dmi_allowed(true);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool HbmMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = trans.get_address();
  if (addr >= capacity()) {
    dmi.set_start_address(capacity());
    dmi.set_end_address(~std::uint64_t{0});
    dmi.allow_none();
    return false;
  }
  // One chunk per grant (mapped now: address space, no host pages yet).
  dmi_granted_ = true;
  dmi.set_dmi_ptr(storage_->chunk(addr));
  dmi.set_start_address(storage_->chunk_start(addr));
  dmi.set_end_address(storage_->chunk_last(addr));  // inclusive
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
  if (addr >= capacity()) return 0;
  // Debug access is clipped at the end of the capacity.
  const std::uint64_t room = capacity() - addr;
  const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(trans.get_data_length(), room));
  if (cmd == tlm::TLM_READ_COMMAND)
    storage_->read(addr, trans.get_data_ptr(), n);
  else if (cmd == tlm::TLM_WRITE_COMMAND)
    storage_->write(addr, trans.get_data_ptr(), n);
  else
    return 0;
  return n;
}

}  // namespace tpb::sc
