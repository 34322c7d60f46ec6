// Which instructions a satisfied wait is ordered after (SPEC §14,
// docs/CONVENTIONS.md "Race check"), decided from the program before the
// run. Pure C++.
//
// A semaphore that only ever increments and is only waited on with ge is a
// counting semaphore, and its waits are ordered exactly: after what must
// have run in every interleaving of the program in which the wait is
// satisfied (counts only grow, so the largest set of semaphore operations
// that can run with some instructions held back is unique: a greedy
// closure decides "must have run" exactly).
//  - One producer queue: the wait ge(s, k) needs the (k - start)-th
//    increment, and what it needs is what that increment was ordered after
//    in the run (its release clock), so the plan names that increment.
//  - Several producers: no one increment is needed, yet what all the ways
//    to reach k have in common may be; the plan computes, for each queue,
//    the last instruction without which the wait cannot be satisfied (a
//    closure per candidate, binary searched over the queue's increments).
// Every other semaphore (a decrement or a set, an == wait on it, or several
// producers in a program whose other waits are timing-dependent, which a
// closure cannot decide) is observed: a wait is ordered after every update
// the run made before it was satisfied, which holds for this run's timing.
//
// The closure runs each queue in program order; a DMA queue's transfer
// starts (its wait) after the previous one started and completes (its
// update) after it started and the previous one completed, since its DMA
// engines order transfers per engine only (SPEC §8).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program_spool.h"

namespace tpb::race {

// A core's queue as one number: core x kNumQueues + the queue (isa::Queue).
using QueueId = std::uint32_t;
// A core's semaphore as one number: core x 64 + its index.
using SemId = std::uint32_t;
inline constexpr QueueId queue_id(unsigned core, isa::Queue q) {
  return core * isa::kNumQueues + static_cast<unsigned>(q);
}
inline constexpr SemId sem_id(unsigned core, unsigned idx) {
  return core * isa::kNumSemaphores + idx;
}
// The core whose semaphore an instruction of `core` updates: its own, or
// the one its DMA descriptor names (update=inc(coreK:semN), SPEC §15):
// `targets[K]` (logical cores, `--lnc 2`), or K when it has none.
inline unsigned update_target(unsigned core, const isa::InstructionNote& n,
                              const std::vector<unsigned>& targets = {}) {
  if (n.update_core == 0) return core;
  const unsigned k = n.update_core - 1u;
  return k < targets.size() ? targets[k] : k;
}

// What the plan reads of a program: each queue's instructions (their EVENTS),
// and every core's semaphore values when the run starts.
struct PlanQueue {
  QueueId id = 0;
  const isa::InstructionNote* notes = nullptr;  // by instruction index
  std::uint64_t count = 0;
};
struct PlanInput {
  std::vector<PlanQueue> queues;
  std::vector<std::array<std::uint32_t, isa::kNumSemaphores>> start;  // by core
  std::vector<std::vector<unsigned>> update_targets;                  // by core (update_target)
};

// The `ordinal`-th increment (1-based) of semaphore `sem` by queue `producer`.
struct Increment {
  SemId sem = 0;
  QueueId producer = 0;
  std::uint64_t ordinal = 0;
  bool operator==(const Increment& o) const {
    return sem == o.sem && producer == o.producer && ordinal == o.ordinal;
  }
};
struct IncrementHash {
  std::size_t operator()(const Increment& i) const {
    return std::hash<std::uint64_t>()((std::uint64_t{i.sem} << 40) ^
                                      (std::uint64_t{i.producer} << 48) ^ i.ordinal);
  }
};

// Queue `queue`'s instructions 0 .. count - 1 precede the wait.
struct QueuePrefix {
  QueueId queue = 0;
  std::uint64_t count = 0;
};

class SemaphorePlan {
 public:
  // At most this many closure steps per plan (a long program with many
  // multi-producer waits); the waits past it are observed.
  static constexpr std::uint64_t kClosureBudget = std::uint64_t{1} << 27;

  SemaphorePlan() = default;
  explicit SemaphorePlan(const PlanInput& in, std::uint64_t closure_budget = kClosureBudget);

  // Whether waits on `s` use the exact rule (else: what the run observed).
  bool exact(SemId s) const { return s < exact_.size() && exact_[s]; }
  // Why `s` is observed ("decremented by dma3[4]", ...); "" when exact.
  const std::string& why_observed(SemId s) const;

  // What the wait of instruction `index` of queue `q` is ordered after (its
  // wait is ge on an exact semaphore): the release clock of `increment`
  // (one producer), and / or the prefixes (several).
  struct Acquire {
    bool planned = false;  // false: not a planned wait (observed)
    const Increment* increment = nullptr;
    const QueuePrefix* prefixes = nullptr;
    std::size_t num_prefixes = 0;
  };
  Acquire acquire(QueueId q, std::uint64_t index) const;
  // How many acquires are ordered after this increment (its clock must be
  // kept until they have run): one per compute wait, 16 per DMA wait (one
  // per DMA engine).
  std::uint32_t waiters(const Increment& i) const {
    auto it = waiters_.find(i);
    return it == waiters_.end() ? 0 : it->second;
  }
  // Closure steps the plan took (its cost).
  std::uint64_t closure_steps() const { return steps_; }

 private:
  friend class Planner;
  struct Wait {
    std::uint64_t index = 0;
    std::int64_t increment = -1;         // into increments_
    std::uint32_t first = 0, count = 0;  // into prefixes_
  };
  std::vector<bool> exact_;
  std::unordered_map<SemId, std::string> why_;
  std::vector<std::vector<Wait>> waits_;  // by queue, sorted by index
  std::vector<Increment> increments_;
  std::vector<QueuePrefix> prefixes_;
  std::unordered_map<Increment, std::uint32_t, IncrementHash> waiters_;
  std::uint64_t steps_ = 0;
};

}  // namespace tpb::race
