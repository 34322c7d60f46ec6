#include "models/race/semaphore_plan.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace tpb::race {

namespace {

using isa::UpdateMode;
using isa::WaitMode;

std::string queue_name(QueueId q) {
  const unsigned core = q / isa::kNumQueues;
  const char* name = isa::engine_name(static_cast<isa::Queue>(q % isa::kNumQueues));
  return core == 0 ? name : fmt::format("core{}.{}", core, name);
}

std::string inst_text(QueueId q, std::uint64_t index) {
  return fmt::format("{}[{}]", queue_name(q), index);
}

}  // namespace

namespace plan_detail {

// An instruction that waits on or increments a counting semaphore.
struct Op {
  std::uint64_t index = 0;
  bool waits = false, incs = false;
  SemId wait_sem = 0, inc_sem = 0;
  std::uint32_t k = 0;
  std::uint64_t ordinal = 0;  // of its increment among its queue's of inc_sem
};

struct PlanQueueOps {
  QueueId id = 0;
  bool dma = false;
  std::vector<Op> ops;
  std::vector<std::uint32_t> incs;  // positions in ops of its increments
};

// A closure's answer: the wait can be satisfied, cannot, or the budget ran out.
enum class Reach { Yes, No, Unknown };

}  // namespace plan_detail

using namespace plan_detail;

class Planner {
 public:
  Planner(const PlanInput& in, std::uint64_t budget, SemaphorePlan& out)
      : in_(in), budget_(budget), out_(out) {}
  void run();

 private:
  void classify();
  void build();
  // Whether the wait at ops position `wpos` of queue `a` can be satisfied
  // when queue `qs` runs no instruction from index `stop` on (starts and
  // completions; with `completions_only`, only its completions stop).
  Reach reachable(std::size_t a, std::size_t wpos, std::size_t qs, std::uint64_t stop,
                  bool completions_only);
  void plan_multi(std::size_t a, std::size_t wpos, std::vector<QueuePrefix>& out, bool& unknown);
  std::uint64_t start(SemId s) const {
    const unsigned core = s / isa::kNumSemaphores;
    return core < in_.start.size() ? in_.start[core][s % isa::kNumSemaphores] : 0;
  }

  const PlanInput& in_;
  const std::vector<unsigned>& targets_of(unsigned core) const {
    static const std::vector<unsigned> kNone;
    return core < in_.update_targets.size() ? in_.update_targets[core] : kNone;
  }
  std::uint64_t budget_;
  SemaphorePlan& out_;
  std::vector<PlanQueueOps> queues_;
  std::map<SemId, std::vector<std::size_t>> producers_;  // queue positions, in first-seen order
  std::map<SemId, std::uint64_t> made_;                  // increments in the program
  // Closure scratch, sized once.
  std::vector<std::uint64_t> count_;
  std::vector<std::vector<std::size_t>> blocked_;
  std::vector<std::size_t> sptr_, cptr_;
};

void Planner::classify() {
  std::size_t cores = in_.start.size();
  for (const PlanQueue& pq : in_.queues)
    cores = std::max<std::size_t>(cores, pq.id / isa::kNumQueues + 1);
  out_.exact_.assign(std::max<std::size_t>(cores, 1) * isa::kNumSemaphores, true);
  std::map<SemId, std::vector<QueueId>> producers;
  auto observe = [&](SemId s, std::string why) {
    if (out_.exact_[s]) {
      out_.exact_[s] = false;
      out_.why_[s] = std::move(why);
    }
  };
  for (const PlanQueue& pq : in_.queues) {
    const unsigned core = pq.id / isa::kNumQueues;
    for (std::uint64_t i = 0; i < pq.count; ++i) {
      const isa::Events& ev = pq.notes[i].events;
      if (ev.wait_mode == static_cast<std::uint8_t>(WaitMode::Equal) &&
          ev.wait_idx < isa::kNumSemaphores)
        observe(sem_id(core, ev.wait_idx),
                fmt::format("waited on with == by {}", inst_text(pq.id, i)));
      if (ev.update_idx >= isa::kNumSemaphores) continue;
      const SemId s = sem_id(update_target(core, pq.notes[i], targets_of(core)), ev.update_idx);
      switch (static_cast<UpdateMode>(ev.update_mode)) {
        case UpdateMode::Increment: {
          auto& p = producers[s];
          if (std::find(p.begin(), p.end(), pq.id) == p.end()) p.push_back(pq.id);
          break;
        }
        case UpdateMode::Decrement:
          observe(s, fmt::format("decremented by {}", inst_text(pq.id, i)));
          break;
        case UpdateMode::Set:
          observe(s, fmt::format("set by {}", inst_text(pq.id, i)));
          break;
        default:
          break;
      }
    }
  }
  // Several producers are decided by closures over the program's semaphore
  // operations, which a wait on an observed semaphore would make
  // timing-dependent: then they are observed too.
  bool observed_wait = false;
  for (const PlanQueue& pq : in_.queues) {
    const unsigned core = pq.id / isa::kNumQueues;
    for (std::uint64_t i = 0; i < pq.count && !observed_wait; ++i) {
      const isa::Events& ev = pq.notes[i].events;
      if ((ev.wait_mode == static_cast<std::uint8_t>(WaitMode::Equal) ||
           ev.wait_mode == static_cast<std::uint8_t>(WaitMode::GreaterEqual)) &&
          ev.wait_idx < isa::kNumSemaphores && !out_.exact_[sem_id(core, ev.wait_idx)])
        observed_wait = true;
    }
  }
  if (!observed_wait) return;
  for (const auto& [s, p] : producers) {
    if (p.size() < 2 || !out_.exact_[s]) continue;
    std::string names;
    for (QueueId q : p) names += (names.empty() ? "" : ", ") + queue_name(q);
    observe(s, fmt::format("incremented by several queues ({}) in a program that also waits on "
                           "timing-dependent semaphores",
                           names));
  }
}

void Planner::build() {
  for (const PlanQueue& pq : in_.queues) {
    const unsigned core = pq.id / isa::kNumQueues;
    PlanQueueOps q;
    q.id = pq.id;
    q.dma = isa::is_dma_queue(static_cast<isa::Queue>(pq.id % isa::kNumQueues));
    std::map<SemId, std::uint64_t> ordinals;
    for (std::uint64_t i = 0; i < pq.count; ++i) {
      const isa::Events& ev = pq.notes[i].events;
      Op op;
      op.index = i;
      if (ev.wait_mode == static_cast<std::uint8_t>(WaitMode::GreaterEqual) &&
          ev.wait_idx < isa::kNumSemaphores && out_.exact(sem_id(core, ev.wait_idx))) {
        op.waits = true;
        op.wait_sem = sem_id(core, ev.wait_idx);
        op.k = ev.sem_value;
      }
      const unsigned target = update_target(core, pq.notes[i], targets_of(core));
      if (ev.update_mode == static_cast<std::uint8_t>(UpdateMode::Increment) &&
          ev.update_idx < isa::kNumSemaphores && out_.exact(sem_id(target, ev.update_idx))) {
        op.incs = true;
        op.inc_sem = sem_id(target, ev.update_idx);
        op.ordinal = ++ordinals[op.inc_sem];
        ++made_[op.inc_sem];
      }
      if (!op.waits && !op.incs) continue;
      if (op.incs) {
        q.incs.push_back(static_cast<std::uint32_t>(q.ops.size()));
        auto& p = producers_[op.inc_sem];
        if (p.empty() || queues_.size() != p.back()) p.push_back(queues_.size());
      }
      q.ops.push_back(op);
    }
    if (!q.ops.empty()) queues_.push_back(std::move(q));
  }
  count_.assign(out_.exact_.size(), 0);
  blocked_.assign(out_.exact_.size(), {});
  sptr_.assign(queues_.size(), 0);
  cptr_.assign(queues_.size(), 0);
}

Reach Planner::reachable(std::size_t a, std::size_t wpos, std::size_t qs, std::uint64_t stop,
                         bool completions_only) {
  const Op& w = queues_[a].ops[wpos];
  for (SemId s = 0; s < count_.size(); ++s) {
    count_[s] = start(s);
    blocked_[s].clear();
  }
  std::fill(sptr_.begin(), sptr_.end(), 0);
  std::fill(cptr_.begin(), cptr_.end(), 0);
  auto satisfied = [&] { return sptr_[a] >= wpos && count_[w.wait_sem] >= w.k; };
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < queues_.size(); ++i) ready.push_back(i);
  auto increment = [&](SemId s) {
    ++count_[s];
    for (std::size_t b : blocked_[s]) ready.push_back(b);
    blocked_[s].clear();
  };
  while (!ready.empty()) {
    const std::size_t qi = ready.front();
    ready.pop_front();
    PlanQueueOps& q = queues_[qi];
    std::size_t& sp = sptr_[qi];
    std::size_t& cp = cptr_[qi];
    const bool held = qi == qs;
    while (sp < q.ops.size()) {
      const Op& op = q.ops[sp];
      if (qi == a && sp >= wpos) break;
      if (held && !completions_only && op.index >= stop) break;
      if (op.waits && count_[op.wait_sem] < op.k) {
        blocked_[op.wait_sem].push_back(qi);
        break;
      }
      if (++out_.steps_ > budget_) return Reach::Unknown;
      ++sp;
      if (!q.dma) {
        cp = sp;
        if (op.incs) increment(op.inc_sem);
      }
    }
    if (q.dma)
      for (; cp < sp; ++cp) {
        const Op& op = q.ops[cp];
        if (held && op.index >= stop) break;
        if (op.incs) increment(op.inc_sem);
      }
    if (satisfied()) return Reach::Yes;
  }
  return satisfied() ? Reach::Yes : Reach::No;
}

void Planner::plan_multi(std::size_t a, std::size_t wpos, std::vector<QueuePrefix>& out,
                         bool& unknown) {
  const Op& w = queues_[a].ops[wpos];
  for (std::size_t qi = 0; qi < queues_.size(); ++qi) {
    const PlanQueueOps& q = queues_[qi];
    const bool own = qi == a;
    if (own && !q.dma) continue;  // program order
    // Its increments that can matter (its own queue's: those before the wait).
    std::size_t n = q.incs.size();
    if (own)
      n = static_cast<std::size_t>(
          std::lower_bound(q.incs.begin(), q.incs.end(), static_cast<std::uint32_t>(wpos)) -
          q.incs.begin());
    if (n == 0) continue;
    auto blocks = [&](std::size_t m) -> Reach {  // held back from its m-th increment on
      return reachable(a, wpos, qi, q.ops[q.incs[m]].index, own);
    };
    // Held back from its first increment, can the wait still be satisfied?
    Reach r = blocks(0);
    if (r == Reach::Unknown) {
      unknown = true;
      return;
    }
    if (r == Reach::Yes) continue;
    // The last increment it cannot do without: counts only grow, so holding
    // back from a later one allows a superset.
    std::size_t lo = 0, hi = n - 1;
    while (lo < hi) {
      const std::size_t mid = (lo + hi + 1) / 2;
      r = blocks(mid);
      if (r == Reach::Unknown) {
        unknown = true;
        return;
      }
      if (r == Reach::No)
        lo = mid;
      else
        hi = mid - 1;
    }
    out.push_back(QueuePrefix{q.id, q.ops[q.incs[lo]].index + 1});
  }
  (void)w;
}

void Planner::run() {
  classify();
  build();
  std::map<QueueId, std::vector<SemaphorePlan::Wait>> waits;
  for (std::size_t qi = 0; qi < queues_.size(); ++qi) {
    const PlanQueueOps& q = queues_[qi];
    for (std::size_t p = 0; p < q.ops.size(); ++p) {
      const Op& op = q.ops[p];
      if (!op.waits) continue;
      SemaphorePlan::Wait w;
      w.index = op.index;
      const std::uint64_t base = start(op.wait_sem);
      auto prod = producers_.find(op.wait_sem);
      if (op.k > base && prod != producers_.end()) {
        const std::uint64_t needed = op.k - base;
        if (prod->second.size() == 1) {
          const PlanQueueOps& pq = queues_[prod->second[0]];
          if (needed <= made_[op.wait_sem]) {
            const Increment inc{op.wait_sem, pq.id, needed};
            w.increment = static_cast<std::int64_t>(out_.increments_.size());
            out_.increments_.push_back(inc);
            // A DMA queue's wait is acquired by each of its 16 engines.
            out_.waiters_[inc] += q.dma ? 16 : 1;
          }
        } else {
          std::vector<QueuePrefix> pre;
          bool unknown = false;
          plan_multi(qi, p, pre, unknown);
          if (unknown) {
            if (out_.exact_[op.wait_sem]) {
              out_.exact_[op.wait_sem] = false;
              out_.why_[op.wait_sem] =
                  "incremented by several queues, in a program too long to plan every wait on "
                  "it exactly";
            }
            continue;
          }
          w.first = static_cast<std::uint32_t>(out_.prefixes_.size());
          w.count = static_cast<std::uint32_t>(pre.size());
          out_.prefixes_.insert(out_.prefixes_.end(), pre.begin(), pre.end());
        }
      }
      waits[q.id].push_back(w);
    }
  }
  for (auto& [q, v] : waits) {
    if (q >= out_.waits_.size()) out_.waits_.resize(q + 1);
    out_.waits_[q] = std::move(v);
  }
}

SemaphorePlan::SemaphorePlan(const PlanInput& in, std::uint64_t closure_budget) {
  Planner(in, closure_budget, *this).run();
}

const std::string& SemaphorePlan::why_observed(SemId s) const {
  static const std::string none;
  auto it = why_.find(s);
  return it == why_.end() ? none : it->second;
}

SemaphorePlan::Acquire SemaphorePlan::acquire(QueueId q, std::uint64_t index) const {
  if (q >= waits_.size()) return {};
  const std::vector<Wait>& v = waits_[q];
  auto w = std::lower_bound(v.begin(), v.end(), index,
                            [](const Wait& a, std::uint64_t i) { return a.index < i; });
  if (w == v.end() || w->index != index) return {};
  Acquire a;
  a.planned = true;
  if (w->increment >= 0) a.increment = &increments_[static_cast<std::size_t>(w->increment)];
  a.prefixes = prefixes_.data() + w->first;
  a.num_prefixes = w->count;
  return a;
}

}  // namespace tpb::race
