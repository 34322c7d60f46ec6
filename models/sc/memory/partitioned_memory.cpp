#include "models/sc/memory/partitioned_memory.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "models/sc/memory/payload_access.h"

namespace tpb::sc {

PartitionedMemory::PartitionedMemory(sc_core::sc_module_name name, unsigned num_partitions,
                                     std::uint32_t bytes_per_partition, MemTiming timing)
    : sc_core::sc_module(name),
      socket("socket"),
      num_partitions_(num_partitions),
      bytes_per_partition_(bytes_per_partition),
      timing_(timing),
      arbiter_(timing, num_partitions, bytes_per_partition) {
  if (num_partitions == 0 || num_partitions > 128)
    throw std::invalid_argument(std::string(this->name()) + ": num_partitions " +
                                std::to_string(num_partitions) + " not in [1, 128]");
  reset(bytes_per_partition, timing, sc_core::SC_ZERO_TIME);
  socket.register_b_transport(this, &PartitionedMemory::b_transport);
  socket.register_get_direct_mem_ptr(this, &PartitionedMemory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &PartitionedMemory::transport_dbg);
}

void PartitionedMemory::reset(std::uint32_t bytes_per_partition, MemTiming timing,
                              sc_core::sc_time origin) {
  if (bytes_per_partition == 0 || bytes_per_partition > kPartitionSlot)
    throw std::invalid_argument(std::string(this->name()) + ": bytes_per_partition " +
                                std::to_string(bytes_per_partition) + " not in [1, 262144]");
  if (dmi_granted_) {
    dmi_granted_ = false;
    socket->invalidate_direct_mem_ptr(0, span() - 1);
  }
  bytes_per_partition_ = bytes_per_partition;
  timing_ = timing;
  arbiter_ = BandwidthArbiter(timing, num_partitions_, bytes_per_partition);
  arbiter_.set_origin(origin);
  const std::size_t bytes = (num_partitions_ - 1) * kPartitionSlot + bytes_per_partition;
  // calloc again rather than clear: untouched pages cost nothing.
  storage_.reset();
  storage_ = zeroed_storage(bytes);
}

bool PartitionedMemory::in_range(std::uint64_t addr, std::uint64_t len) const {
  const std::uint64_t p = addr >> kPartitionShift;
  const std::uint64_t off = addr & (kPartitionSlot - 1);
  // off + len cannot overflow: off < 2^18 and len is at most 2^32.
  return p < num_partitions_ && off + len <= bytes_per_partition_;
}

std::uint8_t* PartitionedMemory::backdoor(std::uint64_t local_addr, std::uint64_t len) {
  if (len == 0 || !in_range(local_addr, len)) return nullptr;
  return storage_.get() + local_addr;
}

void PartitionedMemory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  const tlm::tlm_response_status st = check_data_access(trans, in_range(addr, len));
  if (st != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(st);
    return;
  }
  std::uint8_t* mem = storage_.get() + addr;
  move_data(trans, mem);
  if (!observers_.empty()) notify(cmd, addr, mem, len, delay, false);
  const StreamChargeExtension* sx = trans.get_extension<StreamChargeExtension>();
  delay += mem_access_cost(timing_, &arbiter_, delay, len, addr, cmd == tlm::TLM_WRITE_COMMAND,
                           sx ? &sx->charge : nullptr);
  trans.set_dmi_allowed(observers_.empty());
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool PartitionedMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t p = addr >> kPartitionShift;
  const std::uint64_t off = addr & (kPartitionSlot - 1);
  if (p >= num_partitions_) {
    // Deny for the whole hole above the last partition.
    dmi.set_start_address(span());
    dmi.set_end_address(~std::uint64_t{0});
    dmi.allow_none();
    return false;
  }
  const std::uint64_t pbase = p << kPartitionShift;
  if (!observers_.empty()) {
    // Observed: every access must reach b_transport.
    dmi.set_start_address(0);
    dmi.set_end_address(span() - 1);
    dmi.allow_none();
    return false;
  }
  if (off >= bytes_per_partition_) {
    // Deny for the unbacked tail of this partition slot.
    dmi.set_start_address(pbase + bytes_per_partition_);
    dmi.set_end_address(pbase + kPartitionSlot - 1);
    dmi.allow_none();
    return false;
  }
  if (bytes_per_partition_ == kPartitionSlot) {
    // Slots are full, storage is one contiguous run: grant all of it.
    dmi.set_dmi_ptr(storage_.get());
    dmi.set_start_address(0);
    dmi.set_end_address(span() - 1);  // inclusive
  } else {
    dmi.set_dmi_ptr(storage_.get() + pbase);
    dmi.set_start_address(pbase);
    dmi.set_end_address(pbase + bytes_per_partition_ - 1);  // inclusive
  }
  dmi.allow_read_write();
  dmi_granted_ = true;
  dmi.set_read_latency(timing_.latency);
  dmi.set_write_latency(timing_.latency);
  if (auto* ext = trans.get_extension<DmiTimingExtension>()) {
    ext->timing = timing_;
    ext->arbiter = arbiter_.enabled() ? &arbiter_ : nullptr;
    ext->filled = true;
  }
  return true;
}

unsigned PartitionedMemory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t addr = trans.get_address();
  if (!in_range(addr, 1)) return 0;
  // Debug access is clipped at the end of the partition's capacity.
  const std::uint64_t room = bytes_per_partition_ - (addr & (kPartitionSlot - 1));
  const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(trans.get_data_length(), room));
  std::uint8_t* mem = storage_.get() + addr;
  if (cmd == tlm::TLM_READ_COMMAND)
    std::memcpy(trans.get_data_ptr(), mem, n);
  else if (cmd == tlm::TLM_WRITE_COMMAND)
    std::memcpy(mem, trans.get_data_ptr(), n);
  else
    return 0;
  if (!observers_.empty()) notify(cmd, addr, mem, n, sc_core::SC_ZERO_TIME, true);
  return n;
}

void PartitionedMemory::add_observer(MemObserver f) {
  observers_.push_back(std::move(f));
  if (dmi_granted_) {
    dmi_granted_ = false;
    socket->invalidate_direct_mem_ptr(0, span() - 1);
  }
}

void PartitionedMemory::notify(tlm::tlm_command cmd, std::uint64_t addr, const std::uint8_t* data,
                               unsigned len, const sc_core::sc_time& offset, bool debug) const {
  const MemOp op{cmd, addr, data, len, sc_core::sc_time_stamp() + offset, debug};
  for (const MemObserver& f : observers_) f(op);
}

}  // namespace tpb::sc
