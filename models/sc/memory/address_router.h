// The core's ONE address-decode table (SPEC §2): initiators bind to
// target_socket, every target is added with add_target(). In the style of the
// Accellera lt example's SimpleBusLT: decode, subtract the base, forward, and
// translate DMI ranges back to global addresses; invalidations fan out to
// every initiator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

namespace tpb::sc {

struct RouteEntry {
  std::string name;
  std::uint64_t base = 0;
  std::uint64_t size = 0;  // bytes; the entry covers [base, base + size - 1]
  unsigned port = 0;       // index into initiator_socket
  std::uint64_t last() const { return base + size - 1; }
};

class AddressRouter : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<AddressRouter> target_socket;
  tlm_utils::multi_passthrough_initiator_socket<AddressRouter> initiator_socket;

  explicit AddressRouter(sc_core::sc_module_name name);

  // Elaboration only. Binds initiator_socket to `target` and adds one row.
  // Throws std::invalid_argument on size 0, wrap-around, or overlap with an
  // existing row (naming both rows): a platform assembly error.
  void add_target(const std::string& name, std::uint64_t base, std::uint64_t size,
                  tlm::tlm_target_socket<>& target);

  // Rows in the order they were added (== port order).
  const std::vector<RouteEntry>& table() const { return table_; }
  // The row that holds `addr`, if any.
  const RouteEntry* decode(std::uint64_t addr) const;

 private:
  void b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  void invalidate_direct_mem_ptr(int port, sc_dt::uint64 start, sc_dt::uint64 end);

  // A row that holds the whole access [addr, addr + len), or nullptr.
  const RouteEntry* decode_access(std::uint64_t addr, std::uint64_t len) const;

  std::vector<RouteEntry> table_;          // insertion order, table_[i].port == i
  std::vector<const RouteEntry*> sorted_;  // by base, for the lookup
};

}  // namespace tpb::sc
