#include "platform/run/host_args.h"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "firmware_stubs/sfu/tile_file.h"
#include "models/isa/encodings.h"
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

unsigned check_partition(const HostInt& p) {
  if (!p.in(0, isa::kNumPartitions - 1))
    throw RangeError(
        fmt::format("partition {} does not exist (0..{})", p.str(), isa::kNumPartitions - 1));
  return static_cast<unsigned>(p.value);
}

std::uint32_t check_offset(const HostInt& offset) {
  if (!offset.in(0, isa::kPartitionSlot - 1))
    throw RangeError(fmt::format("offset {} is outside every partition (0..{})", offset.str(),
                                 isa::kPartitionSlot - 1));
  return static_cast<std::uint32_t>(offset.value);
}

std::uint64_t check_hbm_offset(const HostInt& partition, const HostInt& offset,
                               std::uint64_t capacity) {
  if (!partition.in(0, 0))
    throw RangeError(
        fmt::format("hbm has no partitions: partition must be 0, not {}", partition.str()));
  if (offset.negative()) throw RangeError(fmt::format("hbm offset {} is negative", offset.str()));
  if (offset.overflow || static_cast<std::uint64_t>(offset.value) > capacity)
    throw RangeError(
        fmt::format("hbm offset {} is past the HBM capacity of {} bytes", offset.str(), capacity));
  return static_cast<std::uint64_t>(offset.value);
}

unsigned check_tile(const HostInt& n) {
  if (!n.in(0, fw::sfu::kNumTiles - 1))
    throw RangeError(
        fmt::format("tile {} does not exist (T0..T{})", n.str(), fw::sfu::kNumTiles - 1));
  return static_cast<unsigned>(n.value);
}

unsigned check_tile_col(const HostInt& col) {
  if (!col.in(1, 0xFFFF))
    throw RangeError(fmt::format("physical Col {} is not 1..65535", col.str()));
  return static_cast<unsigned>(col.value);
}

unsigned check_semaphore(const HostInt& i) {
  if (!i.in(0, isa::kNumSemaphores - 1))
    throw RangeError(
        fmt::format("semaphore {} does not exist (0..{})", i.str(), isa::kNumSemaphores - 1));
  return static_cast<unsigned>(i.value);
}

std::uint32_t check_semaphore_value(const HostInt& v) {
  if (!v.in(0, 0xFFFFFFFFll))
    throw InputError(fmt::format("semaphore value {} is not a u32 (0..4294967295)", v.str()));
  return static_cast<std::uint32_t>(v.value);
}

unsigned check_register(const HostInt& r) {
  if (!r.in(0, 31)) throw RangeError(fmt::format("register r{} does not exist (r0..r31)", r.str()));
  return static_cast<unsigned>(r.value);
}

unsigned check_threads(const HostInt& n) {
  if (!n.in(1, 1024))
    throw InputError(fmt::format("{} is not a count of host threads (1..1024)", n.str()));
  return static_cast<unsigned>(n.value);
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
