#include "models/sc/memory/mem_port.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "models/isa/address_map.h"

namespace tpb::sc {

MemPort::MemPort(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {
  socket.register_invalidate_direct_mem_ptr(this, &MemPort::invalidate_direct_mem_ptr);
}

unsigned MemPort::counter_index(std::uint64_t addr) {
  if (addr >= (std::uint64_t{1} << 27)) return kCountOther;
  const auto a = static_cast<std::uint32_t>(addr);
  switch (isa::region_of(a)) {
    case isa::Region::Sbuf:
      return isa::partition_of(a) / isa::kPartitionsPerQuadrant;
    case isa::Region::Psum:
      return kCountPsum;
    default:
      return kCountOther;
  }
}

const MemPort::Region* MemPort::lookup(std::uint64_t addr) {
  // The last two hits first: a DMA engine alternates between a source and
  // a destination.
  for (const std::size_t i : {last_, other_}) {
    if (i >= regions_.size()) continue;
    const Region& r = regions_[i];
    if (addr >= r.start && addr <= r.end) {
      if (i != last_) std::swap(last_, other_);
      return &r;
    }
  }
  other_ = last_;
  // The regions are kept sorted by start (an HBM of many 2 MiB chunks is
  // many regions): the last one starting at or before addr holds it, unless
  // ranges overlap (a target's odd answers), which the scan below covers.
  const auto after = std::upper_bound(regions_.begin(), regions_.end(), addr,
                                      [](std::uint64_t a, const Region& r) { return a < r.start; });
  if (after != regions_.begin() && addr <= std::prev(after)->end) {
    last_ = static_cast<std::size_t>(std::prev(after) - regions_.begin());
    return &regions_[last_];
  }
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    if (addr >= regions_[i].start && addr <= regions_[i].end) {
      last_ = i;
      return &regions_[i];
    }
  }
  // Miss: ask once; the answer (granted or denied range) is cached until an
  // invalidation overlapping it.
  tlm::tlm_generic_payload req;
  req.set_command(tlm::TLM_READ_COMMAND);
  req.set_address(addr);
  req.set_data_length(0);
  dmi_ext_.filled = false;
  dmi_ext_.arbiter = nullptr;
  req.set_extension(&dmi_ext_);
  tlm::tlm_dmi dmi;
  ++dmi_requests_;
  bool granted = false;
  try {
    granted = socket->get_direct_mem_ptr(req, dmi);
  } catch (...) {
    // The extension is this port's: the payload must not free it (a target
    // out of host memory throws, HostSpaceError).
    req.clear_extension(&dmi_ext_);
    throw;
  }
  req.clear_extension(&dmi_ext_);

  Region r{};
  r.start = dmi.get_start_address();
  r.end = dmi.get_end_address();
  if (addr < r.start || addr > r.end) {
    // A target that does not describe a range covering addr: cache just this
    // address so we still never ask twice for it.
    r.start = r.end = addr;
  }
  if (granted && dmi.get_dmi_ptr() != nullptr && r.start == dmi.get_start_address()) {
    r.ptr = dmi.get_dmi_ptr();
    r.can_read = dmi.is_read_allowed();
    r.can_write = dmi.is_write_allowed();
    r.read_latency = dmi.get_read_latency();
    r.write_latency = dmi.get_write_latency();
    r.has_timing = dmi_ext_.filled;
    r.timing = dmi_ext_.timing;
    r.arbiter = dmi_ext_.filled ? dmi_ext_.arbiter : nullptr;
  }
  const auto at = std::upper_bound(regions_.begin(), regions_.end(), r.start,
                                   [](std::uint64_t a, const Region& x) { return a < x.start; });
  // (The index first: insert may move the vector.)
  last_ = static_cast<std::size_t>(at - regions_.begin());
  regions_.insert(at, r);
  return &regions_[last_];
}

const MemPort::Region* MemPort::dmi_region(std::uint64_t addr, std::uint64_t len, bool for_write) {
  if (len == 0) return nullptr;
  const std::uint64_t last = addr + len - 1;
  if (last < addr) return nullptr;
  // SBUF/PSUM: partition crossings go to the target, which reports them.
  if (addr < (std::uint64_t{1} << 26) && (addr >> 18) != (last >> 18)) return nullptr;
  const Region* r = lookup(addr);
  if (!r->ptr || last > r->end) return nullptr;
  if (for_write ? !r->can_write : !r->can_read) return nullptr;
  return r;
}

std::optional<MemPort::DmiSpan> MemPort::dmi(std::uint64_t addr, std::uint64_t len,
                                             bool for_write) {
  const Region* r = dmi_region(addr, len, for_write);
  if (!r) return std::nullopt;
  DmiSpan s{r->ptr + (addr - r->start),
            r->read_latency,
            r->write_latency,
            std::nullopt,
            r->arbiter,
            addr,
            nullptr};
  if (r->has_timing) s.timing = r->timing;
  return s;
}

sc_core::sc_time MemPort::DmiSpan::cost(std::uint64_t len, const sc_core::sc_time& local_offset,
                                        bool is_write) const {
  if (!timing) return is_write ? write_latency : read_latency;  // target gave no timing
  return mem_access_cost(*timing, arbiter, local_offset, len, addr, is_write, stream);
}

bool MemPort::stream_charge(std::uint64_t addr, StreamCharge& out) const {
  if (!stream_ || addr >= (std::uint64_t{1} << 26)) return false;  // SBUF and PSUM only
  out = StreamCharge{stream_, static_cast<unsigned>((addr >> 18) & 0x7F)};
  return true;
}

std::uint8_t* MemPort::direct(std::uint64_t addr, std::uint64_t len, bool for_write,
                              sc_core::sc_time& delay) {
  // DmiSpan::cost without building the span (every kernel access comes here).
  const Region* r = dmi_region(addr, len, for_write);
  if (!r) return nullptr;
  if (!r->has_timing) {
    delay += for_write ? r->write_latency : r->read_latency;
  } else {
    StreamCharge charge;
    const StreamCharge* stream = stream_charge(addr, charge) ? &charge : nullptr;
    delay += mem_access_cost(r->timing, r->arbiter, delay, len, addr, for_write, stream);
  }
  account(addr, len, for_write);
  return r->ptr + (addr - r->start);
}

tlm::tlm_response_status MemPort::read(std::uint64_t addr, void* dst, unsigned len,
                                       sc_core::sc_time& delay) {
  return read_into(addr, dst, len, delay, !timing_only_);
}

tlm::tlm_response_status MemPort::read_control(std::uint64_t addr, void* dst, unsigned len,
                                               sc_core::sc_time& delay) {
  return read_into(addr, dst, len, delay, true);
}

tlm::tlm_response_status MemPort::read_into(std::uint64_t addr, void* dst, unsigned len,
                                            sc_core::sc_time& delay, bool copy) {
  if (len == 0) return tlm::TLM_OK_RESPONSE;
  if (const std::uint8_t* p = direct(addr, len, false, delay)) {
    if (copy) std::memcpy(dst, p, len);
    return tlm::TLM_OK_RESPONSE;
  }
  return transport(tlm::TLM_READ_COMMAND, addr, dst, len, delay);
}

tlm::tlm_response_status MemPort::write(std::uint64_t addr, const void* src, unsigned len,
                                        sc_core::sc_time& delay) {
  if (len == 0) return tlm::TLM_OK_RESPONSE;
  if (std::uint8_t* p = direct(addr, len, true, delay)) {
    if (!timing_only_) std::memcpy(p, src, len);
    return tlm::TLM_OK_RESPONSE;
  }
  // The payload's data pointer is non-const by TLM's design; a write never
  // stores through it.
  return transport(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(src), len, delay);
}

tlm::tlm_response_status MemPort::transport(tlm::tlm_command cmd, std::uint64_t addr, void* data,
                                            unsigned len, sc_core::sc_time& delay) {
  trans_.set_command(cmd);
  trans_.set_address(addr);
  trans_.set_data_ptr(static_cast<unsigned char*>(data));
  trans_.set_data_length(len);
  trans_.set_streaming_width(len);
  trans_.set_byte_enable_ptr(nullptr);
  trans_.set_byte_enable_length(0);
  trans_.set_dmi_allowed(false);
  trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const bool streamed = stream_charge(addr, stream_ext_.charge);
  if (streamed) trans_.set_extension(&stream_ext_);
  try {
    socket->b_transport(trans_, delay);
  } catch (...) {
    if (streamed) trans_.clear_extension(&stream_ext_);
    throw;
  }
  if (streamed) trans_.clear_extension(&stream_ext_);
  const tlm::tlm_response_status st = trans_.get_response_status();
  if (st == tlm::TLM_OK_RESPONSE) account(addr, len, cmd == tlm::TLM_WRITE_COMMAND);
  return st;
}

void MemPort::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    const Region& r = regions_[i];
    if (r.end < start || r.start > end) regions_[out++] = r;  // no overlap: keep
  }
  regions_.resize(out);
  last_ = other_ = 0;
}

}  // namespace tpb::sc
