// A brute-force oracle for the race check (SPEC §14 "exact"), shared by the
// unit test (sc_tests/unit/test_race_oracle.cpp) and the fuzz target
// (sc_tests/fuzz/fuzz_race.cpp): small programs of compute engines and DMA
// queues (two DMA engines each) ordered by counting semaphores. The oracle
// walks every reachable state of the program's semaphore semantics and
// says, for each pair of accesses, whether one must precede the other in
// every interleaving; the detector sees one interleaving. It must report no
// pair the oracle calls ordered, a race on every location the oracle has
// one on, and, when every location has one writer and one access per agent,
// exactly the oracle's pairs (else an agent's later read may stand for its
// earlier ones).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "models/race/detector.h"
#include "sc_tests/unit/test_race_util.h"

namespace tpb::race::oracle {

using isa::Queue;
using namespace tpb::race::test;

constexpr unsigned kLocs = 3;     // locations: HBM bytes [16 l, 16 l + 16)
constexpr unsigned kEngines = 2;  // DMA engines per DMA queue in these programs (0 and 1)

struct Acc {
  unsigned loc;
  bool write;
};
struct Inst {
  isa::Events ev{};
  std::vector<Acc> acc;                         // compute
  std::array<std::vector<Acc>, kEngines> part;  // DMA: engine e's read and write
};
struct QueueProg {
  Queue q;
  bool dma;
  std::vector<Inst> insts;
};

// A step: compute instruction (q, i, -1), DMA engine part (q, i, e), DMA
// completion (q, i, kEngines).
struct Step {
  unsigned q, i;
  int e;
  bool operator<(const Step& o) const { return std::tie(q, i, e) < std::tie(o.q, o.i, o.e); }
  bool operator==(const Step& o) const { return q == o.q && i == o.i && e == o.e; }
};

struct Program {
  std::vector<QueueProg> queues;
  Prog notes;
};

// Where the random choices come from: a seeded generator (the unit test)
// or a fuzzer's bytes (sc_tests/fuzz/fuzz_race.cpp).
class Choices {
 public:
  virtual ~Choices() = default;
  virtual unsigned pick(unsigned n) = 0;  // 0 .. n - 1
  bool chance(unsigned percent) { return pick(100) < percent; }
};
class RngChoices : public Choices {
 public:
  explicit RngChoices(std::uint32_t seed) : rng_(seed) {}
  unsigned pick(unsigned n) override {
    return std::uniform_int_distribution<unsigned>(0, n - 1)(rng_);
  }

 private:
  std::mt19937 rng_;
};
class ByteChoices : public Choices {
 public:
  ByteChoices(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  unsigned pick(unsigned n) override { return p_ == end_ ? 0 : *p_++ % n; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

inline Program make_program(Choices& c) {
  Program p;
  const Queue all[] = {Queue::Pool, Queue::Dve, Queue::Dma0, Queue::Dma1};
  std::vector<Queue> chosen;
  for (Queue e : all)
    if (c.chance(80)) chosen.push_back(e);
  if (chosen.size() < 2) chosen = {Queue::Pool, Queue::Dma0};
  for (Queue e : chosen) {
    QueueProg qp{e, isa::is_dma_queue(e), {}};
    const unsigned n = 1 + c.pick(3);
    for (unsigned i = 0; i < n; ++i) {
      Inst in;
      if (c.chance(45)) {
        in.ev.wait_mode = 2;
        in.ev.wait_idx = static_cast<std::uint8_t>(c.pick(2));
        in.ev.sem_value = 1 + c.pick(2);
      }
      if (c.chance(55)) {
        in.ev.update_mode = 1;
        in.ev.update_idx = static_cast<std::uint8_t>(c.pick(2));
      }
      if (qp.dma) {
        for (unsigned e2 = 0; e2 < kEngines; ++e2)
          if (c.chance(70)) {
            in.part[e2].push_back(Acc{c.pick(kLocs), false});
            in.part[e2].push_back(Acc{c.pick(kLocs), true});
          }
      } else {
        const unsigned k = c.pick(3);
        for (unsigned j = 0; j < k; ++j) {
          const unsigned loc = c.pick(kLocs);
          in.acc.push_back(Acc{loc, c.chance(50)});
        }
      }
      qp.insts.push_back(in);
    }
    p.queues.push_back(qp);
  }
  // Notes in an interleaved text order (lines), as a program file would.
  std::vector<std::pair<unsigned, unsigned>> order;
  for (unsigned q = 0; q < p.queues.size(); ++q)
    for (unsigned i = 0; i < p.queues[q].insts.size(); ++i) order.push_back({q, i});
  for (std::size_t k = order.size(); k > 1; --k)
    std::swap(order[k - 1], order[c.pick(static_cast<unsigned>(k))]);
  std::map<std::pair<unsigned, unsigned>, std::uint32_t> line;
  for (std::size_t k = 0; k < order.size(); ++k) line[order[k]] = static_cast<std::uint32_t>(k + 1);
  for (unsigned q = 0; q < p.queues.size(); ++q)
    for (unsigned i = 0; i < p.queues[q].insts.size(); ++i)
      p.notes.notes[static_cast<unsigned>(p.queues[q].q)].push_back(
          isa::InstructionNote{line[{q, i}], p.queues[q].insts[i].ev, opcode_of(p.queues[q].q)});
  return p;
}

// The semaphore machine: per queue a compute pointer, or per DMA engine a
// pointer and a completion count.
struct State {
  std::vector<std::uint8_t> v;  // compute: ptr; DMA: ptr e0, ptr e1, completed
  bool operator<(const State& o) const { return v < o.v; }
};

struct Machine {
  const Program& p;
  std::vector<unsigned> base;  // offset of queue q in State::v
  explicit Machine(const Program& prog) : p(prog) {
    unsigned at = 0;
    for (const QueueProg& q : p.queues) {
      base.push_back(at);
      at += q.dma ? kEngines + 1 : 1;
    }
  }
  State initial() const {
    State s;
    s.v.assign(base.empty() ? 0 : base.back() + (p.queues.back().dma ? kEngines + 1 : 1), 0);
    return s;
  }
  std::array<unsigned, 2> counts(const State& s) const {
    std::array<unsigned, 2> c{};
    for (unsigned q = 0; q < p.queues.size(); ++q) {
      const QueueProg& qp = p.queues[q];
      const unsigned done = qp.dma ? s.v[base[q] + kEngines] : s.v[base[q]];
      for (unsigned i = 0; i < done; ++i)
        if (qp.insts[i].ev.update_mode == 1) ++c[qp.insts[i].ev.update_idx];
    }
    return c;
  }
  bool waits_ok(const Inst& in, const std::array<unsigned, 2>& c) const {
    return in.ev.wait_mode != 2 || c[in.ev.wait_idx] >= in.ev.sem_value;
  }
  std::vector<Step> enabled(const State& s) const {
    std::vector<Step> out;
    const auto c = counts(s);
    for (unsigned q = 0; q < p.queues.size(); ++q) {
      const QueueProg& qp = p.queues[q];
      if (!qp.dma) {
        const unsigned i = s.v[base[q]];
        if (i < qp.insts.size() && waits_ok(qp.insts[i], c)) out.push_back({q, i, -1});
        continue;
      }
      for (unsigned e = 0; e < kEngines; ++e) {
        const unsigned i = s.v[base[q] + e];
        if (i < qp.insts.size() && waits_ok(qp.insts[i], c))
          out.push_back({q, i, static_cast<int>(e)});
      }
      const unsigned j = s.v[base[q] + kEngines];
      bool all = j < qp.insts.size();
      for (unsigned e = 0; all && e < kEngines; ++e) all = s.v[base[q] + e] > j;
      if (all) out.push_back({q, j, static_cast<int>(kEngines)});
    }
    return out;
  }
  State apply(State s, const Step& st) const {
    if (st.e < 0)
      ++s.v[base[st.q]];
    else
      ++s.v[base[st.q] + static_cast<unsigned>(st.e)];
    return s;
  }
  bool executed(const State& s, const Step& st) const {
    const unsigned b = base[st.q];
    return st.e < 0 ? st.i < s.v[b] : st.i < s.v[b + static_cast<unsigned>(st.e)];
  }
  const std::vector<Acc>& accesses(const Step& st) const {
    static const std::vector<Acc> none;
    const Inst& in = p.queues[st.q].insts[st.i];
    if (st.e < 0) return in.acc;
    if (st.e < static_cast<int>(kEngines)) return in.part[static_cast<unsigned>(st.e)];
    return none;
  }
};

using Pair =
    std::pair<std::pair<unsigned, unsigned>, std::pair<unsigned, unsigned>>;  // (q,i),(q,i)
inline Pair make_pair(unsigned qa, unsigned ia, unsigned qb, unsigned ib) {
  auto a = std::make_pair(qa, ia), b = std::make_pair(qb, ib);
  return a < b ? Pair{a, b} : Pair{b, a};
}

struct Outcome {
  std::string failure;  // empty: the detector agrees with the oracle
  bool raced = false;   // the oracle found a race
};

// Walks every reachable state of `p`'s semaphore semantics (the oracle), runs
// the detector on one interleaving chosen by `schedule`, and compares.
inline Outcome check(const Program& p, Choices& schedule) {
  const Machine m(p);
  // Every reachable state; for each access step, the steps that can still
  // be pending when it is enabled (it may run before them).
  std::set<State> seen{m.initial()};
  std::vector<State> work{m.initial()};
  std::map<Step, std::set<Step>> may_precede_pending;  // y -> {x pending when y enabled}
  std::vector<Step> all_steps;
  for (unsigned q = 0; q < p.queues.size(); ++q)
    for (unsigned i = 0; i < p.queues[q].insts.size(); ++i) {
      if (!p.queues[q].dma) {
        all_steps.push_back({q, i, -1});
        continue;
      }
      for (unsigned e = 0; e < kEngines; ++e) all_steps.push_back({q, i, static_cast<int>(e)});
    }
  while (!work.empty()) {
    const State s = work.back();
    work.pop_back();
    for (const Step& y : m.enabled(s)) {
      if (y.e != static_cast<int>(kEngines)) {
        auto& pend = may_precede_pending[y];
        for (const Step& x : all_steps)
          if (!(x == y) && !m.executed(s, x)) pend.insert(x);
      }
      const State n = m.apply(s, y);
      if (seen.insert(n).second) work.push_back(n);
    }
  }
  // Oracle races: conflicting accesses of two steps neither of which
  // must precede the other.
  std::set<Pair> oracle;
  std::set<unsigned> oracle_locs;
  auto must_precede = [&](const Step& x, const Step& y) {
    const auto it = may_precede_pending.find(y);
    return it == may_precede_pending.end() || it->second.count(x) == 0;
  };
  std::array<unsigned, kLocs> writers{};
  for (const Step& s : all_steps)
    for (const Acc& a : m.accesses(s)) writers[a.loc] += a.write;

  // One interleaving for the detector, from `schedule`.
  Detector d({p.notes.core()});
  State s = m.initial();
  std::set<Step> ran;
  for (;;) {
    std::vector<Step> en = m.enabled(s);
    if (en.empty()) break;
    const Step st = en[schedule.pick(static_cast<unsigned>(en.size()))];
    const QueueProg& qp = p.queues[st.q];
    const Inst& in = qp.insts[st.i];
    if (st.e < 0) {
      d.begin(0, qp.q, st.i, opcode_of(qp.q), in.ev);
      for (const Acc& a : in.acc) d.access(0, qp.q, hbm(16 * a.loc), 16, a.write);
      d.end(0, qp.q, st.i, in.ev);
    } else if (st.e < static_cast<int>(kEngines)) {
      const unsigned e = static_cast<unsigned>(st.e);
      d.dma_engine_begin(0, qp.q, st.i, e, 0xd0, in.ev);
      const std::vector<Acc>& pa = in.part[e];
      if (!pa.empty())  // a row on partition 8e: DMA engine e
        d.dma_move(0, qp.q, store_from(0), 8 * e, hbm(16 * pa[0].loc), hbm(16 * pa[1].loc), 16);
      d.dma_engine_end(0, qp.q, st.i, e);
    } else {
      d.end(0, qp.q, st.i, in.ev);
    }
    ran.insert(st);
    s = m.apply(s, st);
  }
  for (const Step& x : all_steps)
    for (const Step& y : all_steps) {
      if (!(x < y) || !ran.count(x) || !ran.count(y)) continue;
      bool conflict = false;
      std::set<unsigned> locs;
      for (const Acc& a : m.accesses(x))
        for (const Acc& b : m.accesses(y))
          if (a.loc == b.loc && (a.write || b.write)) {
            conflict = true;
            locs.insert(a.loc);
          }
      if (!conflict || must_precede(x, y) || must_precede(y, x)) continue;
      oracle.insert(make_pair(static_cast<unsigned>(p.queues[x.q].q), x.i,
                              static_cast<unsigned>(p.queues[y.q].q), y.i));
      oracle_locs.insert(locs.begin(), locs.end());
    }

  const Report r = d.finish();
  std::set<Pair> found;
  std::set<unsigned> found_locs;
  for (const Race& race : r.races) {
    found.insert(make_pair(
        static_cast<unsigned>(race.first.queue), static_cast<unsigned>(race.first.index),
        static_cast<unsigned>(race.second.queue), static_cast<unsigned>(race.second.index)));
    for (std::uint64_t l = race.lo / 16; l * 16 < race.hi; ++l)
      found_locs.insert(static_cast<unsigned>(l));
  }
  Outcome out;
  out.raced = !oracle.empty();
  for (const Pair& f : found)
    if (!oracle.count(f))
      out.failure += "a pair the oracle says is ordered: queue " + std::to_string(f.first.first) +
                     "[" + std::to_string(f.first.second) + "] / queue " +
                     std::to_string(f.second.first) + "[" + std::to_string(f.second.second) + "]; ";
  // Every location where the oracle has a race gets at least one report.
  for (unsigned l : oracle_locs)
    if (!found_locs.count(l))
      out.failure += "no race reported on location " + std::to_string(l) + "; ";
  const bool one_writer =
      std::all_of(writers.begin(), writers.end(), [](unsigned w) { return w <= 1; });
  bool one_access_per_agent = true;
  {
    std::map<std::pair<std::pair<unsigned, int>, unsigned>, unsigned> per;  // ((q, engine), loc)
    for (const Step& st : all_steps) {
      std::set<unsigned> locs;
      for (const Acc& a : m.accesses(st)) locs.insert(a.loc);
      for (unsigned l : locs) one_access_per_agent &= ++per[{{st.q, st.e}, l}] <= 1;
    }
  }
  // With one writer of each location and one access of it per agent (the
  // detector keeps the last write and each agent's last read), it names
  // every racing pair.
  if (one_writer && one_access_per_agent && found != oracle)
    out.failure += "the pairs differ from the oracle's; ";
  if (!r.timing_dependent.empty()) out.failure += "a counting semaphore was observed; ";
  return out;
}

}  // namespace tpb::race::oracle
