// The access-pattern cost of one streaming pipeline (TIMING.md [A]; SPEC §8):
// an SBUF/PSUM read or write interface delivers its peak bandwidth while the
// innermost free-dimension stride is under 16 bytes and half of it beyond,
// "roughly 50% performance hit on the instructions". The sequencer feeds it
// every access of a stream, whatever kernel makes it, so every Vector,
// Scalar and GpSimd kernel gets the rule from its accesses alone: an access
// of at most `wide_bytes` that starts more than `wide_bytes` from the
// previous access of its partition lane (memory, partition and direction) in
// the stream, the same distance as that one from the access before it, is
// one element of a wide-stride walk (a walk with a short stride makes one
// access per contiguous run instead; a single jump — to another operand,
// to the next row of a pattern — is no walk). A lane whose bytes
// are all such accesses takes `cost_percent` more than the stream's compute
// (100: twice), a lane with part of them that share of it. Pure C++.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/isa/address_map.h"

namespace tpb::timing {

class AccessPattern {
 public:
  // cost_percent 0: off (accesses are not looked at).
  void configure(std::uint32_t wide_bytes, std::uint32_t cost_percent) {
    wide_bytes_ = wide_bytes;
    cost_percent_ = cost_percent;
  }
  // A new stream.
  void reset() {
    if (++gen_ == 0) {  // after 2^32 streams: no lane may look current
      lanes_.fill(Lane{});
      gen_ = 1;
    }
    touched_.clear();
  }
  void access(std::uint64_t addr, std::size_t len, bool write) {
    if (cost_percent_ == 0) return;
    const auto a = static_cast<std::uint32_t>(addr);
    const isa::Region r = isa::region_of(a);
    if (r != isa::Region::Sbuf && r != isa::Region::Psum) return;
    const unsigned key =
        (r == isa::Region::Psum ? 256u : 0u) | (isa::partition_of(a) << 1) | (write ? 1u : 0u);
    Lane& l = lanes_[key % kLanes];
    if (l.gen != gen_) {
      l = Lane{gen_, a, 0, 0, 0};
      touched_.push_back(static_cast<std::uint16_t>(key % kLanes));
    } else {
      const std::int64_t stride = std::int64_t{a} - std::int64_t{l.last};
      if (len <= wide_bytes_ && stride == l.stride && (stride < 0 ? -stride : stride) > wide_bytes_)
        l.wide += len;
      l.stride = stride;
    }
    l.total += len;
    l.last = a;
  }
  // The engine cycles of the stream's slowest interface for a stream of
  // `compute` cycles (0 when no lane had a wide-stride access).
  std::uint64_t interface_cycles(std::uint64_t compute) const {
    std::uint64_t extra = 0;
    for (std::uint16_t k : touched_) {
      const Lane& l = lanes_[k];
      if (l.wide == 0) continue;
      const unsigned __int128 e =
          static_cast<unsigned __int128>(compute) * cost_percent_ * l.wide / (100u * l.total);
      extra = std::max(extra, static_cast<std::uint64_t>(e));
    }
    return extra == 0 ? 0 : compute + extra;
  }

 private:
  static constexpr unsigned kLanes = 512;  // SBUF, PSUM x 128 partitions x read, write
  struct Lane {
    std::uint32_t gen = 0;
    std::uint32_t last = 0;   // the address of the lane's last access
    std::int64_t stride = 0;  // from the one before it to the last
    std::uint64_t total = 0, wide = 0;
  };
  std::uint32_t wide_bytes_ = 16, cost_percent_ = 0;
  std::uint32_t gen_ = 1;
  std::array<Lane, kLanes> lanes_{};
  std::vector<std::uint16_t> touched_;
};

}  // namespace tpb::timing
