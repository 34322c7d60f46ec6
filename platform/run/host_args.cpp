#include "platform/run/host_args.h"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "models/isa/encodings.h"
#include "models/state/sfu_tile_file.h"
#include "models/timing/timing_profile.h"

namespace tpb::run {

HostInt HostInt::past(int sign, std::string digits) {
  HostInt h;
  h.overflow = sign < 0 ? -1 : 1;
  h.value =
      sign < 0 ? std::numeric_limits<long long>::min() : std::numeric_limits<long long>::max();
  h.digits = std::move(digits);
  return h;
}

std::string HostInt::str() const { return overflow ? digits : std::to_string(value); }

namespace {

// v's value when it is in [lo, hi]; else E(message()).
template <typename E, typename Message>
long long within(const HostInt& v, long long lo, long long hi, Message message) {
  if (!v.in(lo, hi)) throw E(message());
  return v.value;
}

}  // namespace

isa::Region memory_region(const std::string& name) {
  if (name == "sbuf") return isa::Region::Sbuf;
  if (name == "psum") return isa::Region::Psum;
  if (is_hbm(name))
    throw InputError("memory 'hbm' has no partitions (partition 0, offset = the HBM byte offset)");
  throw InputError(fmt::format("memory '{}' is not one of sbuf, psum, hbm", name));
}

unsigned check_partition(const HostInt& p) {
  const long long last = isa::kNumPartitions - 1;
  return static_cast<unsigned>(within<RangeError>(p, 0, last, [&] {
    return fmt::format("partition {} does not exist (0..{})", p.str(), last);
  }));
}

std::uint32_t check_offset(const HostInt& offset) {
  const long long last = isa::kPartitionSlot - 1;
  return static_cast<std::uint32_t>(within<RangeError>(offset, 0, last, [&] {
    return fmt::format("offset {} is outside every partition (0..{})", offset.str(), last);
  }));
}

std::uint64_t check_hbm_offset(const HostInt& partition, const HostInt& offset,
                               std::uint64_t capacity) {
  within<RangeError>(partition, 0, 0, [&] {
    return fmt::format("hbm has no partitions: partition must be 0, not {}", partition.str());
  });
  if (offset.negative()) throw RangeError(fmt::format("hbm offset {} is negative", offset.str()));
  if (offset.overflow || static_cast<std::uint64_t>(offset.value) > capacity)
    throw RangeError(
        fmt::format("hbm offset {} is past the HBM capacity of {} bytes", offset.str(), capacity));
  return static_cast<std::uint64_t>(offset.value);
}

HostPlace checked_place(const std::string& mem, const HostInt& partition, const HostInt& offset,
                        std::uint64_t hbm_bytes) {
  HostPlace p;
  if (is_hbm(mem)) {
    p.hbm = true;
    p.offset = check_hbm_offset(partition, offset, hbm_bytes);
    return p;
  }
  p.region = memory_region(mem);
  p.partition = check_partition(partition);
  p.offset = check_offset(offset);
  return p;
}

std::uint64_t row_addr(const HostPlace& p, std::size_t row) {
  const unsigned partition = p.partition + static_cast<unsigned>(row);
  const auto offset = static_cast<std::uint32_t>(p.offset);
  return p.region == isa::Region::Sbuf ? isa::sbuf_addr(partition, offset)
                                       : isa::psum_addr(partition, offset);
}

unsigned check_tile(const HostInt& n) {
  const long long last = sfu::kNumTiles - 1;
  return static_cast<unsigned>(within<RangeError>(
      n, 0, last, [&] { return fmt::format("tile {} does not exist (T0..T{})", n.str(), last); }));
}

unsigned check_tile_col(const HostInt& col) {
  return static_cast<unsigned>(within<RangeError>(
      col, 1, 0xFFFF, [&] { return fmt::format("physical Col {} is not 1..65535", col.str()); }));
}

unsigned check_semaphore(const HostInt& i) {
  const long long last = isa::kNumSemaphores - 1;
  return static_cast<unsigned>(within<RangeError>(i, 0, last, [&] {
    return fmt::format("semaphore {} does not exist (0..{})", i.str(), last);
  }));
}

std::uint32_t check_semaphore_value(const HostInt& v) {
  return static_cast<std::uint32_t>(within<InputError>(v, 0, 0xFFFFFFFFll, [&] {
    return fmt::format("semaphore value {} is not a u32 (0..4294967295)", v.str());
  }));
}

unsigned check_register(const HostInt& r) {
  return static_cast<unsigned>(within<RangeError>(
      r, 0, 31, [&] { return fmt::format("register r{} does not exist (r0..r31)", r.str()); }));
}

unsigned check_threads(const HostInt& n) {
  return static_cast<unsigned>(within<InputError>(n, 1, 1024, [&] {
    return fmt::format("{} is not a count of host threads (1..1024)", n.str());
  }));
}

unsigned check_cores(const HostInt& n) {
  const long long last = isa::kMaxDeviceCores;
  return static_cast<unsigned>(within<InputError>(
      n, 1, last, [&] { return fmt::format("{}: a device has 1 to {} cores", n.str(), last); }));
}

std::uint64_t check_max_sim_ps(const HostInt& ps) {
  if (ps.in(1, static_cast<long long>(timing::TimingConfig::kMaxPs)))
    return static_cast<std::uint64_t>(ps.value);
  if (ps.negative() || ps.value == 0)
    throw InputError(fmt::format("{} ps must be more than 0", ps.str()));
  throw InputError(fmt::format("{} ps is past the longest simulated time, 2^62 ps ({} ps)",
                               ps.str(), timing::TimingConfig::kMaxPs));
}

double check_max_wall_seconds(double seconds) {
  if (!(seconds > 0) || !(seconds <= 1e9))
    throw InputError(fmt::format("{} seconds is not in (0, 1e9]", seconds));
  return seconds;
}

}  // namespace tpb::run
