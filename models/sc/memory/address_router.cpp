#include "models/sc/memory/address_router.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace tpb::sc {

AddressRouter::AddressRouter(sc_core::sc_module_name name)
    : sc_core::sc_module(name),
      target_socket("target_socket"),
      initiator_socket("initiator_socket") {
  target_socket.register_b_transport(this, &AddressRouter::b_transport);
  target_socket.register_transport_dbg(this, &AddressRouter::transport_dbg);
  target_socket.register_get_direct_mem_ptr(this, &AddressRouter::get_direct_mem_ptr);
  initiator_socket.register_invalidate_direct_mem_ptr(this,
                                                      &AddressRouter::invalidate_direct_mem_ptr);
}

void AddressRouter::add_target(const std::string& name, std::uint64_t base, std::uint64_t size,
                               tlm::tlm_target_socket<>& target) {
  if (size == 0)
    throw std::invalid_argument(fmt::format("{}: route '{}' has size 0", this->name(), name));
  if (base + size - 1 < base)
    throw std::invalid_argument(
        fmt::format("{}: route '{}' [{:#x}, +{:#x}) wraps around", this->name(), name, base, size));
  for (const RouteEntry& e : table_) {
    if (base <= e.last() && e.base <= base + size - 1)
      throw std::invalid_argument(
          fmt::format("{}: route '{}' [{:#x}, {:#x}] overlaps route '{}' [{:#x}, {:#x}]",
                      this->name(), name, base, base + size - 1, e.name, e.base, e.last()));
  }
  initiator_socket.bind(target);
  table_.push_back(RouteEntry{name, base, size, static_cast<unsigned>(table_.size())});
  // table_ may have reallocated: rebuild the sorted view.
  sorted_.clear();
  for (const RouteEntry& e : table_) sorted_.push_back(&e);
  std::sort(sorted_.begin(), sorted_.end(),
            [](const RouteEntry* a, const RouteEntry* b) { return a->base < b->base; });
}

const RouteEntry* AddressRouter::decode(std::uint64_t addr) const {
  // Last row whose base <= addr.
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), addr,
                             [](std::uint64_t a, const RouteEntry* e) { return a < e->base; });
  if (it == sorted_.begin()) return nullptr;
  const RouteEntry* e = *(it - 1);
  return addr <= e->last() ? e : nullptr;
}

const RouteEntry* AddressRouter::decode_access(std::uint64_t addr, std::uint64_t len) const {
  const RouteEntry* e = decode(addr);
  if (!e) return nullptr;
  if (len > 0 && addr + (len - 1) > e->last()) return nullptr;  // runs off the row's end
  return e;
}

void AddressRouter::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t addr = trans.get_address();
  const RouteEntry* e = decode_access(addr, trans.get_data_length());
  if (!e) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  trans.set_address(addr - e->base);
  initiator_socket[e->port]->b_transport(trans, delay);
  trans.set_address(addr);  // the initiator sees its own address again
}

unsigned AddressRouter::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const RouteEntry* e = decode(addr);
  if (!e) return 0;
  // Clip at the row end so a debug access never reaches a neighbour's storage.
  const std::uint64_t room = e->last() - addr + 1;
  const unsigned len = trans.get_data_length();
  if (room < len) trans.set_data_length(static_cast<unsigned>(room));
  trans.set_address(addr - e->base);
  const unsigned n = initiator_socket[e->port]->transport_dbg(trans);
  trans.set_address(addr);
  trans.set_data_length(len);
  return n;
}

bool AddressRouter::get_direct_mem_ptr(int, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = trans.get_address();
  const RouteEntry* e = decode(addr);
  if (!e) {
    // Deny DMI for the whole unmapped gap around addr.
    std::uint64_t lo = 0, hi = ~std::uint64_t{0};
    for (const RouteEntry* r : sorted_) {
      if (r->last() < addr) lo = r->last() + 1;
      if (r->base > addr) {
        hi = r->base - 1;
        break;
      }
    }
    dmi.set_start_address(lo);
    dmi.set_end_address(hi);
    dmi.allow_none();
    return false;
  }
  trans.set_address(addr - e->base);
  const bool granted = initiator_socket[e->port]->get_direct_mem_ptr(trans, dmi);
  trans.set_address(addr);
  // Translate to global addresses and clip to the row. A granted range starts
  // at or below the local address, so clipping only ever moves its end.
  std::uint64_t start = dmi.get_start_address();
  std::uint64_t end = dmi.get_end_address();
  if (start > e->size - 1) start = e->size - 1;
  if (end > e->size - 1) end = e->size - 1;
  dmi.set_start_address(e->base + start);
  dmi.set_end_address(e->base + end);
  return granted;
}

void AddressRouter::invalidate_direct_mem_ptr(int port, sc_dt::uint64 start, sc_dt::uint64 end) {
  if (port < 0 || static_cast<std::size_t>(port) >= table_.size()) return;
  const RouteEntry& e = table_[static_cast<std::size_t>(port)];
  if (start > e.size - 1) return;  // entirely outside what this row exposes
  const std::uint64_t gstart = e.base + start;
  const std::uint64_t gend = e.base + std::min<std::uint64_t>(end, e.size - 1);
  for (unsigned i = 0; i < target_socket.size(); ++i)
    target_socket[i]->invalidate_direct_mem_ptr(gstart, gend);
}

}  // namespace tpb::sc
