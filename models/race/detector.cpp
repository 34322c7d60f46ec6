#include "models/race/detector.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <fmt/format.h>

namespace tpb::race {

namespace {

// The host of a core, as a queue number of its own (past every core's queues).
constexpr QueueId kHostQueue = 0xFFFF0000u;
constexpr std::size_t kMaxRaceKeys = std::size_t{1} << 20;
constexpr unsigned kDmaEngines = 16;
constexpr unsigned kMemories = 3;  // per core: SBUF, PSUM, tiles (HBM is the device's)

std::uint32_t clock_of(std::uint64_t index) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(index + 1, std::numeric_limits<std::uint32_t>::max()));
}

// "0-3", "0, 8", "5".
std::string engine_list(std::uint16_t bits) {
  std::string out;
  for (unsigned e = 0; e < kDmaEngines;) {
    if (!(bits & (1u << e))) {
      ++e;
      continue;
    }
    unsigned f = e;
    while (f + 1 < kDmaEngines && (bits & (1u << (f + 1)))) ++f;
    out += (out.empty() ? "" : ", ") + (f == e ? fmt::format("{}", e) : fmt::format("{}-{}", e, f));
    e = f + 1;
  }
  return out;
}

std::string side_text(const RaceSide& s, const std::vector<ProgramSource>& sources,
                      bool show_core) {
  if (s.host) return show_core ? fmt::format("the host of core{}", s.core) : "the host";
  std::string t = show_core ? fmt::format("core{}.", s.core) : "";
  t += fmt::format("{}[{}]", isa::engine_name(s.queue), s.index);
  const std::string_view m = isa::opcode_mnemonic(s.opcode);
  if (!m.empty()) t += fmt::format(" {}", m);
  std::string where;
  const ProgramSource* src = s.core < sources.size() ? &sources[s.core] : nullptr;
  if (src && !src->file.empty() && (s.line > 0 || src->binary))
    where = src->binary ? fmt::format("{} word {}", src->file, s.line)
                        : fmt::format("{}:{}", src->file, s.line);
  if (s.dma_engines != 0) {
    const bool one = (s.dma_engines & (s.dma_engines - 1)) == 0;
    where += fmt::format("{}DMA engine{} {}", where.empty() ? "" : ", ", one ? "" : "s",
                         engine_list(s.dma_engines));
  }
  if (!where.empty()) t += " (" + where + ")";
  return t;
}

std::string range_text(unsigned lo, unsigned hi) {
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
}

// The kinds of one conflict: what the side whose access happened first did
// (f) and what the other did (s).
std::uint8_t kinds_of(std::uint8_t f, std::uint8_t s) {
  std::uint8_t k = 0;
  if ((f & kWrite) && (s & kRead)) k |= kRaw;
  if ((f & kRead) && (s & kWrite)) k |= kWar;
  if ((f & kWrite) && (s & kWrite)) k |= kWaw;
  return k;
}

auto order_key(const RaceSide& s) {
  return std::make_tuple(s.host, s.core, s.line, static_cast<unsigned>(s.queue), s.index);
}

}  // namespace

unsigned dma_engine_of_row(const isa::DmaDescriptor& d, unsigned row) {
  return isa::dma_engine_of_row(d, row, kDmaEngines);
}

const char* memory_name(Memory m) {
  static constexpr const char* kNames[] = {"sbuf", "psum", "tile", "hbm"};
  return static_cast<unsigned>(m) < 4 ? kNames[static_cast<unsigned>(m)] : "?";
}

std::string race_kinds(std::uint8_t kinds) {
  std::string out;
  for (const auto& [bit, name] :
       {std::pair{kRaw, "RAW"}, std::pair{kWar, "WAR"}, std::pair{kWaw, "WAW"}})
    if (kinds & bit) out += (out.empty() ? "" : "+") + std::string(name);
  return out;
}

std::string race_message(const Race& r, const std::vector<ProgramSource>& sources) {
  const bool show_core = sources.size() > 1 || r.first.core != 0 || r.second.core != 0;
  const std::string a = side_text(r.first, sources, show_core);
  const std::string b = side_text(r.second, sources, show_core);
  std::string mem = show_core && r.memory != Memory::Hbm ? fmt::format("core{} ", r.core) : "";
  switch (r.memory) {
    case Memory::Sbuf:
    case Memory::Psum:
      mem += fmt::format("{} partition{} {}", memory_name(r.memory),
                         r.partition_lo == r.partition_hi ? "" : "s",
                         range_text(r.partition_lo, r.partition_hi));
      break;
    case Memory::Tiles:
      mem += r.partition_lo == r.partition_hi
                 ? fmt::format("tile T{}", r.partition_lo)
                 : fmt::format("tiles T{}-T{}", r.partition_lo, r.partition_hi);
      break;
    case Memory::Hbm:
      mem += "hbm";
      break;
  }
  mem += fmt::format(" bytes 0x{:x}-0x{:x}", r.lo, r.hi - 1);
  const bool same_queue = !r.first.host && !r.second.host && r.first.core == r.second.core &&
                          r.first.queue == r.second.queue;
  if (same_queue)
    return fmt::format(
        "{} is not ordered after {}: a DMA queue orders its transfers per DMA engine only, and "
        "no semaphore orders them: {} on {}",
        b, a, race_kinds(r.kinds), mem);
  return fmt::format("no semaphore orders {} after {}: {} on {}", b, a, race_kinds(r.kinds), mem);
}

std::size_t Detector::RaceKeyHash::operator()(const RaceKey& k) const {
  std::size_t h = std::hash<std::uint64_t>()(k.ia * 0x9E3779B97F4A7C15ull ^ k.ib);
  h ^= std::hash<std::uint64_t>()((std::uint64_t{k.qa} << 32) | k.qb) + 0x9E3779B9 + (h << 6);
  return h ^ (std::size_t{k.mem} << 8) ^ (std::size_t{k.core} << 16);
}

Detector::Detector(std::vector<CoreProgram> cores) : cores_(std::move(cores)) {
  PlanInput in;
  for (unsigned c = 0; c < cores_.size(); ++c) {
    in.start.push_back(cores_[c].semaphores);
    in.update_targets.push_back(cores_[c].update_targets);
    bool all = true;
    for (const auto* n : cores_[c].notes) all = all && n != nullptr;
    if (!all) continue;  // without every queue's notes, the core's waits are observed
    for (unsigned q = 0; q < isa::kNumQueues; ++q)
      in.queues.push_back(PlanQueue{queue_id(c, static_cast<isa::Queue>(q)),
                                    cores_[c].notes[q]->data(), cores_[c].notes[q]->size()});
  }
  plan_ = SemaphorePlan(in);
  sems_.resize(std::max<std::size_t>(1, cores_.size()) * isa::kNumSemaphores);
  queues_.resize(std::max<std::size_t>(1, cores_.size()) * isa::kNumQueues);
}

Detector::~Detector() = default;

AgentIdx Detector::new_agent(QueueId q, std::uint8_t dma_engine, bool host) {
  Agent a;
  a.queue = q;
  a.dma_engine = dma_engine;
  a.host = host;
  agents_.push_back(std::move(a));
  return static_cast<AgentIdx>(agents_.size() - 1);
}

Detector::Queue& Detector::queue(unsigned core, isa::Queue q) {
  const QueueId id = queue_id(core, q);
  if (id >= queues_.size()) queues_.resize(id + 1);
  Queue& qu = queues_[id];
  if (qu.known) return qu;
  qu.known = true;
  qu.dma = isa::is_dma_queue(q);
  for (unsigned e = 0; e < (qu.dma ? kDmaEngines : 1u); ++e)
    qu.agents[e] = new_agent(id, static_cast<std::uint8_t>(e), false);
  if (core < cores_.size()) qu.notes = cores_[core].notes[static_cast<unsigned>(q)];
  qu.increments.clear();
  return qu;
}

AgentIdx Detector::host_agent(unsigned core) {
  if (core >= hosts_.size()) hosts_.resize(core + 1, 0);
  if (hosts_[core] == 0) {
    const AgentIdx a = new_agent(kHostQueue + core, 0, true);
    agents_[a].clock = 1;
    agents_[a].vc.set(a, 1);
    hosts_[core] = a + 1;
  }
  return hosts_[core] - 1;
}

Detector::SemState& Detector::sem(SemId s) {
  if (s >= sems_.size()) sems_.resize(s + 1);
  return sems_[s];
}

void Detector::begin(unsigned core, isa::Queue q, std::uint64_t index, std::uint8_t opcode,
                     const isa::Events& ev) {
  if (isa::is_dma_queue(q)) {
    for (unsigned e = 0; e < kDmaEngines; ++e) dma_engine_begin(core, q, index, e, opcode, ev);
    return;
  }
  Queue& qu = queue(core, q);
  note_opcode(qu, index, opcode);
  start(core, q, qu.agents[0], index, ev);
}

void Detector::dma_engine_begin(unsigned core, isa::Queue q, std::uint64_t index, unsigned engine,
                                std::uint8_t opcode, const isa::Events& ev) {
  catch_up(core, q, engine % kDmaEngines, index);
  Queue& qu = queue(core, q);
  note_opcode(qu, index, opcode);
  Transfer& t = transfer(qu, index);
  if (t.begun & (1u << (engine % kDmaEngines))) return;
  t.begun = static_cast<std::uint16_t>(t.begun | (1u << (engine % kDmaEngines)));
  start(core, q, qu.agents[engine % kDmaEngines], index, ev);
}

void Detector::dma_queue_begin(unsigned core, isa::Queue q, std::uint64_t index,
                               std::uint8_t opcode, const isa::Events& ev) {
  Queue& qu = queue(core, q);
  note_opcode(qu, index, opcode);
  Transfer& t = transfer(qu, index);
  t.registered = true;
  t.opcode = opcode;
  t.ev = ev;
}

void Detector::catch_up(unsigned core, isa::Queue q, unsigned engine, std::uint64_t upto) {
  Queue& qu = queue(core, q);
  const auto bit = static_cast<std::uint16_t>(1u << engine);
  // Index order: each is begun and ended before the next (no insertion
  // here). The engine has taken every registered transfer below its mark
  // (transfers register in index order, before any engine begins them), so
  // a queue of many transfers in flight costs no scan per call.
  std::uint64_t& mark = qu.caught_up[engine];
  for (auto it = first_at(qu, mark); it != qu.in_flight.end() && it->index < upto; ++it) {
    Transfer& t = *it;
    if (!t.registered || (t.begun & bit)) continue;
    t.begun = static_cast<std::uint16_t>(t.begun | bit);
    start(core, q, qu.agents[engine], t.index, t.ev);
    dma_engine_end(core, q, t.index, engine);
  }
  mark = std::max(mark, upto);
}

std::deque<Detector::Transfer>::iterator Detector::first_at(Queue& qu, std::uint64_t index) {
  return std::lower_bound(qu.in_flight.begin(), qu.in_flight.end(), index,
                          [](const Transfer& t, std::uint64_t i) { return t.index < i; });
}

void Detector::note_opcode(Queue& qu, std::uint64_t index, std::uint8_t opcode) {
  if (qu.notes) return;  // the notes have it
  if (qu.opcodes.size() <= index) qu.opcodes.resize(index + 1, 0);
  qu.opcodes[index] = opcode;
}

void Detector::start(unsigned core, isa::Queue q, AgentIdx a, std::uint64_t index,
                     const isa::Events& ev) {
  agents_[a].clock = clock_of(index);
  agents_[a].vc.set(a, agents_[a].clock);
  if ((ev.wait_mode == static_cast<std::uint8_t>(isa::WaitMode::Equal) ||
       ev.wait_mode == static_cast<std::uint8_t>(isa::WaitMode::GreaterEqual)) &&
      ev.wait_idx < isa::kNumSemaphores)
    acquire(&a, 1, queue_id(core, q), sem_id(core, ev.wait_idx), index,
            ev.wait_mode == static_cast<std::uint8_t>(isa::WaitMode::GreaterEqual));
}

Detector::Transfer& Detector::transfer(Queue& qu, std::uint64_t index) {
  // In index order (a binary search: a queue may have a ring of transfers
  // in flight); a new one is almost always the last.
  const auto at = first_at(qu, index);
  if (at != qu.in_flight.end() && at->index == index) return *at;
  Transfer t;
  t.index = index;
  return *qu.in_flight.insert(at, std::move(t));
}

void Detector::dma_engine_end(unsigned core, isa::Queue q, std::uint64_t index, unsigned engine) {
  Queue& qu = queue(core, q);
  Transfer& t = transfer(qu, index);
  const unsigned e = engine % kDmaEngines;
  if (t.ended & (1u << e)) return;
  t.ended = static_cast<std::uint16_t>(t.ended | (1u << e));
  t.released.join(agents_[qu.agents[e]].vc);
}

void Detector::dma_engines_join(unsigned core, isa::Queue q, const std::vector<unsigned>& from,
                                const std::vector<unsigned>& to) {
  Queue& qu = queue(core, q);
  VectorClock all;
  for (unsigned e : from) all.join(agents_[qu.agents[e % kDmaEngines]].vc);
  for (unsigned e : to) agents_[qu.agents[e % kDmaEngines]].vc.join(all);
}

void Detector::acquire(const AgentIdx* agents, unsigned n, QueueId qid, SemId s,
                       std::uint64_t index, bool ge) {
  SemState& st = sem(s);
  if (ge && plan_.exact(s) && !st.host_written) {
    const SemaphorePlan::Acquire a = plan_.acquire(qid, index);
    auto kept = a.increment ? kept_.find(*a.increment) : kept_.end();
    if (a.planned && (!a.increment || kept != kept_.end())) {
      if (a.increment) {
        for (unsigned e = 0; e < n; ++e) agents_[agents[e]].vc.join(kept->second.first);
        kept->second.second = kept->second.second > n ? kept->second.second - n : 0;
        if (kept->second.second == 0) kept_.erase(kept);
      }
      for (std::size_t i = 0; i < a.num_prefixes; ++i) {
        const QueuePrefix& p = a.prefixes[i];
        const Queue& from =
            queue(p.queue / isa::kNumQueues, static_cast<isa::Queue>(p.queue % isa::kNumQueues));
        const std::array<AgentIdx, kDmaEngines> producers = from.agents;
        const unsigned m = from.dma ? kDmaEngines : 1u;
        const auto clock = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(p.count, std::numeric_limits<std::uint32_t>::max()));
        for (unsigned f = 0; f < m; ++f)
          for (unsigned e = 0; e < n; ++e) agents_[agents[e]].vc.raise(producers[f], clock);
      }
      return;
    }
    // The count reached the wait's value without an increment the plan
    // says it needs (a host write): what the run observed.
    if (a.planned && st.why.empty())
      st.why = "at a wait's value without an increment the wait needs";
  }
  for (unsigned e = 0; e < n; ++e) agents_[agents[e]].vc.join(st.released);
  st.observed_used = true;
  if (st.why.empty())
    st.why = st.host_written                  ? "written by the host during the run"
             : !plan_.why_observed(s).empty() ? plan_.why_observed(s)
                                              : "in a program loaded without notes";
}

void Detector::release(SemId s, const VectorClock& vc, QueueId qid, const isa::Events& ev) {
  SemState& st = sem(s);
  st.released.join(vc);
  if (ev.update_mode != static_cast<std::uint8_t>(isa::UpdateMode::Increment)) return;
  Queue& qu = queues_[qid];
  const Increment inc{s, qid, ++qu.increments[s]};
  if (const std::uint32_t w = plan_.waiters(inc); w > 0) kept_[inc] = {vc, w};
}

void Detector::end(unsigned core, isa::Queue q, std::uint64_t index, const isa::Events& ev,
                   unsigned update_core) {
  Queue& qu = queue(core, q);
  const bool updates = ev.update_mode >= static_cast<std::uint8_t>(isa::UpdateMode::Increment) &&
                       ev.update_mode <= static_cast<std::uint8_t>(isa::UpdateMode::Set) &&
                       ev.update_idx < isa::kNumSemaphores;
  const QueueId qid = queue_id(core, q);
  const unsigned target = update_core != 0 ? update_core - 1 : core;  // SPEC §15
  if (!qu.dma) {
    if (updates) release(sem_id(target, ev.update_idx), agents_[qu.agents[0]].vc, qid, ev);
    return;
  }
  // A transfer completes when its last DMA engine does; an engine that has
  // not begun it (no rows of it, in a model that registers transfers) takes
  // it now, in its turn: the queue's earlier transfers have completed.
  for (unsigned e = 0; e < kDmaEngines; ++e) {
    const Transfer& t = transfer(qu, index);
    if (t.registered && !(t.begun & (1u << e))) {
      catch_up(core, q, e, index + 1);
    } else if (t.begun & (1u << e)) {
      dma_engine_end(core, q, index, e);
    }
  }
  Transfer& t = transfer(qu, index);
  // A queue completes its transfers in order (docs/CONVENTIONS.md "DMA"):
  // this one's release holds the earlier ones'.
  t.released.join(qu.completed);
  qu.completed = std::move(t.released);
  qu.in_flight.erase(first_at(qu, index));
  if (updates) release(sem_id(target, ev.update_idx), qu.completed, qid, ev);
}

void Detector::access(unsigned core, isa::Queue q, std::uint64_t addr, std::uint64_t len,
                      bool write) {
  Queue& qu = queue(core, q);
  record(qu.agents[0], addr, len, write ? kWrite : kRead, core);
}

void Detector::dma_move(unsigned core, isa::Queue q, const isa::DmaDescriptor& d, unsigned row,
                        std::uint64_t src, std::uint64_t dst, std::uint32_t len) {
  dma_engine_move(core, q, race::dma_engine_of_row(d, row), d, src, dst, len);
}

void Detector::dma_engine_move(unsigned core, isa::Queue q, unsigned engine,
                               const isa::DmaDescriptor& d, std::uint64_t src, std::uint64_t dst,
                               std::uint32_t len) {
  Queue& qu = queue(core, q);
  const AgentIdx a = qu.agents[engine % kDmaEngines];
  record(a, src, len, kRead, core);
  if (d.dst_rmw_op == static_cast<std::uint8_t>(isa::DmaRmwOp::Add))
    record(a, dst, len, kRead, core);
  record(a, dst, len, kWrite, core);
}

void Detector::host_access(unsigned core, std::uint64_t addr, std::uint64_t len, bool write) {
  record(host_agent(core), addr, len, write ? kWrite : kRead, core);
}

void Detector::host_semaphore(unsigned core, unsigned idx, bool write) {
  if (idx >= isa::kNumSemaphores) return;
  const AgentIdx h = host_agent(core);
  SemState& st = sem(sem_id(core, idx));
  Agent& a = agents_[h];
  if (write) {
    st.released.join(a.vc);
    st.host_written = true;
    // Accesses after this write are new: a later wait may be ordered after
    // the write but not after them.
    a.clock = a.clock == std::numeric_limits<std::uint32_t>::max() ? a.clock : a.clock + 1;
    a.vc.set(h, a.clock);
  } else {
    a.vc.join(st.released);
    st.observed_used = true;
    if (st.why.empty()) st.why = "read by the host during the run";
  }
}

ShadowRange* Detector::hbm_window(std::uint64_t w) {
  if (w != last_window_) {
    std::unique_ptr<ShadowRange>& r = hbm_[w];
    if (!r) r = std::make_unique<ShadowRange>();
    last_window_ = w;
    last_hbm_ = r.get();
  }
  return last_hbm_;
}

ShadowRange* Detector::range(unsigned core, Memory m, unsigned partition) {
  const std::size_t i =
      (std::size_t{core} * kMemories + static_cast<unsigned>(m)) * isa::kNumPartitions + partition;
  if (i >= ranges_.size()) ranges_.resize(i + 1);
  if (!ranges_[i]) ranges_[i] = std::make_unique<ShadowRange>();
  return ranges_[i].get();
}

void Detector::record(AgentIdx agent, std::uint64_t addr, std::uint64_t len, std::uint8_t mask,
                      unsigned core) {
  if (len == 0) return;
  const Agent& a = agents_[agent];
  const Epoch e{agent, a.clock};
  if (addr >= isa::kHbmBase) {
    std::uint64_t at = addr - isa::kHbmBase;
    len = std::min(len, UINT64_MAX - at);
    constexpr std::uint64_t kWindow = std::uint64_t{1} << kHbmWindowBits;
    while (len > 0) {
      const std::uint64_t base = at & ~(kWindow - 1), off = at - base;
      const std::uint64_t n = std::min(len, kWindow - off);
      hbm_window(base >> kHbmWindowBits)
          ->access(off, off + n, e, mask, a.vc, [&](const Conflict& c) {
            conflict(agent, mask, Conflict{c.earlier, c.earlier_mask, base + c.lo, base + c.hi},
                     Memory::Hbm, 0, 0);
          });
      at += n;
      len -= n;
    }
    return;
  }
  while (len > 0 && addr < (std::uint64_t{1} << 27)) {
    const auto a32 = static_cast<std::uint32_t>(addr);
    Memory m;
    switch (isa::region_of(a32)) {
      case isa::Region::Sbuf:
        m = Memory::Sbuf;
        break;
      case isa::Region::Psum:
        m = Memory::Psum;
        break;
      case isa::Region::SfuTile:
        m = Memory::Tiles;
        break;
      default:
        return;  // the control region is no data memory
    }
    const unsigned p = isa::partition_of(a32);
    const std::uint64_t off = isa::offset_of(a32);
    const std::uint64_t n = std::min<std::uint64_t>(len, isa::kPartitionSlot - off);
    range(core, m, p)->access(off, off + n, e, mask, a.vc, [&](const Conflict& c) {
      conflict(agent, mask, c, m, core, p);
    });
    addr += n;
    len -= n;
  }
}

RaceSide Detector::side_of(AgentIdx ai, std::uint32_t clock, std::uint8_t mask) const {
  const Agent& a = agents_[ai];
  RaceSide s;
  s.mask = mask;
  if (a.host) {
    s.host = true;
    s.core = a.queue - kHostQueue;
    return s;
  }
  s.core = a.queue / isa::kNumQueues;
  s.queue = static_cast<isa::Queue>(a.queue % isa::kNumQueues);
  s.index = clock - 1;
  const Queue& qu = queues_[a.queue];
  if (qu.notes && s.index < qu.notes->size()) {
    s.line = (*qu.notes)[s.index].line;
    s.opcode = (*qu.notes)[s.index].opcode;
  } else if (s.index < qu.opcodes.size()) {
    s.opcode = qu.opcodes[s.index];
  }
  if (qu.dma) s.dma_engines = static_cast<std::uint16_t>(1u << a.dma_engine);
  return s;
}

void Detector::conflict(AgentIdx now, std::uint8_t now_mask, const Conflict& c, Memory m,
                        unsigned core, unsigned partition) {
  // The sides in the order their accesses happened in this run (the
  // earlier one first), and the kind in that order: a producer written after
  // its consumer in the text that ran first is the consumer's RAW.
  RaceSide x = side_of(c.earlier.agent, c.earlier.clock, c.earlier_mask);
  RaceSide y = side_of(now, agents_[now].clock, now_mask);
  const std::uint8_t kinds = kinds_of(x.mask, y.mask);
  auto qid = [](const RaceSide& s) {
    return s.host ? kHostQueue + s.core : queue_id(s.core, s.queue);
  };
  // One entry per pair of instructions, whichever happened first.
  const bool text_order = !(order_key(y) < order_key(x));
  const RaceSide& a = text_order ? x : y;
  const RaceSide& b = text_order ? y : x;
  const RaceKey key{qid(a),
                    qid(b),
                    a.index,
                    b.index,
                    static_cast<std::uint8_t>(m),
                    static_cast<std::uint16_t>(core)};
  auto it = race_index_.find(key);
  if (it == race_index_.end()) {
    if (race_index_.size() >= kMaxRaceKeys) {
      ++total_;  // past the index: counted, perhaps more than once
      return;
    }
    ++total_;
    const std::size_t at = races_.size() < kMaxRaces ? races_.size() : SIZE_MAX;
    race_index_.emplace(key, at);
    if (at == SIZE_MAX) return;
    Race r;
    r.first = x;
    r.second = y;
    r.memory = m;
    r.core = core;
    r.partition_lo = r.partition_hi = partition;
    r.lo = c.lo;
    r.hi = c.hi;
    r.kinds = kinds;
    races_.push_back(r);
    return;
  }
  if (it->second == SIZE_MAX) return;
  Race& r = races_[it->second];
  // The pair seen before, perhaps the other way round this time.
  const bool same = qid(r.first) == qid(x) && r.first.index == x.index;
  RaceSide& rx = same ? r.first : r.second;
  RaceSide& ry = same ? r.second : r.first;
  rx.mask |= x.mask;
  ry.mask |= y.mask;
  rx.dma_engines |= x.dma_engines;
  ry.dma_engines |= y.dma_engines;
  r.partition_lo = std::min(r.partition_lo, partition);
  r.partition_hi = std::max(r.partition_hi, partition);
  r.lo = std::min(r.lo, c.lo);
  r.hi = std::max(r.hi, c.hi);
  r.kinds |= same ? kinds : kinds_of(y.mask, x.mask);
}

Report Detector::finish() {
  Report r;
  r.races = races_;
  std::sort(r.races.begin(), r.races.end(), [](const Race& a, const Race& b) {
    return std::make_tuple(order_key(a.first), order_key(a.second), a.memory, a.core) <
           std::make_tuple(order_key(b.first), order_key(b.second), b.memory, b.core);
  });
  r.total = total_;
  for (SemId s = 0; s < sems_.size(); ++s)
    if (sems_[s].observed_used) r.timing_dependent.emplace_back(s, sems_[s].why);
  for (const CoreProgram& c : cores_) r.sources.push_back(c.source);
  return r;
}

std::size_t Detector::live_segments() const {
  std::size_t n = 0;
  for (const auto& [w, r] : hbm_) n += r->segments();
  for (const auto& r : ranges_)
    if (r) n += r->segments();
  return n;
}

}  // namespace tpb::race
