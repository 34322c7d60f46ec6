// Vector clocks for the race check (SPEC §14): one logical clock per agent
// (a compute engine, or one DMA engine of a DMA queue, of a core), indexed
// by the detector's dense agent numbers. Pure C++.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpb::race {

// A dense agent number (Detector numbers the agents as they first appear).
using AgentIdx = std::uint32_t;

// One access's time: agent `agent` at its own clock `clock` (0: none).
struct Epoch {
  AgentIdx agent = 0;
  std::uint32_t clock = 0;
  bool valid() const { return clock != 0; }
  bool operator==(const Epoch& o) const { return agent == o.agent && clock == o.clock; }
  bool operator!=(const Epoch& o) const { return !(*this == o); }
};

class VectorClock {
 public:
  std::uint32_t operator[](AgentIdx a) const { return a < c_.size() ? c_[a] : 0; }
  void set(AgentIdx a, std::uint32_t v) {
    if (a >= c_.size()) c_.resize(a + 1, 0);
    c_[a] = v;
  }
  // Entry a = max(entry a, v).
  void raise(AgentIdx a, std::uint32_t v) {
    if ((*this)[a] < v) set(a, v);
  }
  // Whether the access at `e` happens before (or is) what this clock knows.
  bool covers(const Epoch& e) const { return (*this)[e.agent] >= e.clock; }
  // This = max(this, o), entry by entry.
  void join(const VectorClock& o) {
    if (o.c_.size() > c_.size()) c_.resize(o.c_.size(), 0);
    const std::uint32_t* src = o.c_.data();
    std::uint32_t* dst = c_.data();
    for (std::size_t i = 0, n = o.c_.size(); i < n; ++i) dst[i] = std::max(dst[i], src[i]);
  }
  void clear() { c_.clear(); }
  std::size_t size() const { return c_.size(); }
  bool operator==(const VectorClock& o) const {
    const std::size_t n = std::max(c_.size(), o.c_.size());
    for (std::size_t i = 0; i < n; ++i)
      if ((*this)[static_cast<AgentIdx>(i)] != o[static_cast<AgentIdx>(i)]) return false;
    return true;
  }

 private:
  std::vector<std::uint32_t> c_;
};

}  // namespace tpb::race
