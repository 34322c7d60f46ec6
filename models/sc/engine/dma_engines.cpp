#include "models/sc/engine/dma_engines.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/numerics/element_ops.h"
#include "models/race/detector.h"
#include "models/sc/memory/zeroed_storage.h"

namespace tpb::sc {

namespace {

using isa::DmaDescriptor;
using isa::DmaEndpoint;

// The TLM address of row r of an endpoint (checked: inside its memory).
std::uint64_t row_addr(const DmaEndpoint& e, unsigned r) {
  if (dma_is_hbm(e)) return isa::hbm_addr(e.addr + std::uint64_t{r} * e.row_stride);
  const auto a = static_cast<std::uint32_t>(e.addr);
  return isa::sbuf_addr(isa::partition_of(a) + r, isa::offset_of(a));
}

// ceil(bytes / bytes_per_s) in ps, in 128 bits.
std::uint64_t stream_ps(std::uint64_t bytes, std::uint64_t bytes_per_s) {
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 1000000000000ull;
  return static_cast<std::uint64_t>((num + bytes_per_s - 1) / bytes_per_s);
}

constexpr std::uint32_t kChunkBytes = 64 * 1024;

}  // namespace

DmaEngines::DmaEngines(sc_core::sc_module_name name, RunControl& control)
    : sc_core::sc_module(name),
      ports("port", kMaxEngines),
      control_(control),
      engine_(kMaxEngines) {
  // A small coroutine stack (SystemC's default is 256 KiB): a core has 128
  // engine threads, so a device of 32 cores fits in 4 GiB of address space
  // (SPEC §15). An engine thread runs no kernel: its deepest call is a
  // transfer's completion through its queue's sequencer and observers.
  sc_core::sc_spawn_options opts;
  opts.set_stack_size(kEngineStackBytes);
  for (unsigned e = 0; e < kMaxEngines; ++e)
    sc_core::sc_spawn([this, e] { engine_thread(e); }, sc_core::sc_gen_unique_name("engine"),
                      &opts);
}

void DmaEngines::configure(const timing::TimingConfig& t, BandwidthShare* hbm,
                           std::vector<Client*> clients) {
  engines_ = std::clamp<unsigned>(t.dma.engines, 1, kMaxEngines);
  part_per_engine_ = t.dma_partitions_per_engine();
  hbm_ = hbm;
  hbm_group_ = 0;
  clients_ = std::move(clients);
  bytes_per_s_ = std::max<std::uint64_t>(1, std::uint64_t{t.dma.mbytes_per_s} * 1000000);
  latency_ps_ = std::uint64_t{t.dma.latency_ns} * 1000;
  queue_cost_ps_ = std::uint64_t{t.dma.transfer_cost_ns} * 1000;
  engine_cost_ps_ = std::uint64_t{t.dma.engine_cost_ns} * 1000;
  hbm_latency_ps_ = std::uint64_t{t.hbm.latency_ns} * 1000;
  sbuf_latency_ps_ = timing::TimingConfig::cycles_to_ps(t.sbuf.latency_cycles, t.memory_clock_mhz);
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
    weights_[q] = std::max<std::uint32_t>(1, t.dma.queue_weights[q]);
  sbuf_bytes_ = t.sbuf_bytes_per_partition;
  memory_clock_mhz_ = t.memory_clock_mhz;
}

void DmaEngines::reset_run() {
  ++run_;
  // A run's memory counters are its own (the core's totals follow).
  for (auto& p : ports) p.set_counts({}, {});
  for (Engine& en : engine_) {
    for (auto& q : en.queue) q.clear();
    en.next = en.served = 0;
    std::fill(std::begin(en.queue_free), std::end(en.queue_free), 0);
    en.last_queue = -1;
    en.totals = {};
    en.history.clear();
  }
  any_.reset();
}

void DmaEngines::set_timing_only(bool on) {
  timing_only_ = on;
  for (auto& p : ports) p.set_timing_only(on);
}

std::uint64_t DmaEngines::now_ps() const { return control_.rel_ps(sc_core::sc_time_stamp()); }

void DmaEngines::submit(const std::shared_ptr<DmaTransfer>& tp) {
  DmaTransfer& t = *tp;
  const DmaDescriptor& d = t.desc;
  t.bytes = std::uint64_t{d.num_rows} * d.row_bytes;
  t.hbm_bytes = t.bytes * dma_hbm_weight(d);
  t.ready_ps = t.issue_ps + latency_ps_;
  t.done_ps = t.ready_ps;
  t.shares_left = 0;
  // The engine of each row: its SBUF partition's, HBM -> HBM rows round
  // robin (isa::dma_engine_of_row).
  std::vector<Share> shares(engines_);
  for (unsigned r = 0; r < d.num_rows; ++r)
    shares[isa::dma_engine_of_row(d, r, engines_)].rows.push_back(r);
  t.part_engines.clear();
  t.arrived = 0;
  if (dma_is_sbuf(d.src) && dma_is_sbuf(d.dst)) add_parts(t, shares);
  for (unsigned e = 0; e < engines_; ++e) {
    Share& s = shares[e];
    const bool part =
        std::find(t.part_engines.begin(), t.part_engines.end(), e) != t.part_engines.end();
    if (s.rows.empty() && !part) continue;  // (a part without rows holds its queue)
    s.t = tp;
    s.run = run_;
    s.bytes = std::uint64_t{s.rows.size()} * d.row_bytes;
    if (!s.rows.empty()) ++t.shares_left;
    engine_[e].queue[t.queue].push_back(std::move(s));
    engine_[e].work.notify(sc_core::SC_ZERO_TIME);
  }
}

void DmaEngines::add_parts(DmaTransfer& t, std::vector<Share>& shares) {
  // SPEC §10: a transfer is ordered on the engine of every SBUF partition it
  // reads or writes. Rows go by their source partition; a row whose
  // destination another engine carries makes the transfer one its engines
  // take together, a part on each.
  const DmaDescriptor& d = t.desc;
  std::vector<bool> writes(engines_, false);
  bool apart = false;
  for (unsigned r = 0; r < d.num_rows; ++r) {
    const unsigned to = isa::dma_engine_of_sbuf_row(d.dst, r, engines_);
    writes[to] = true;
    apart = apart || to != isa::dma_engine_of_sbuf_row(d.src, r, engines_);
  }
  if (!apart) return;
  for (unsigned e = 0; e < engines_; ++e)
    if (!shares[e].rows.empty() || writes[e]) t.part_engines.push_back(e);
}

void DmaEngines::arrive(unsigned e, Share& part) {
  part.arrived = true;
  DmaTransfer& t = *part.t;
  if (++t.arrived < t.part_engines.size()) return;
  // Every engine has reached it: its movers go, each ordered after what
  // every part's engine did before it (the race check's model too).
  if (race_) {
    const isa::Queue q = isa::dma_queue(t.queue);
    for (unsigned pe : t.part_engines)
      race_->dma_engine_begin(race_core_, q, t.index, pe, t.desc.header.opcode, t.desc.events);
    race_->dma_engines_join(race_core_, q, t.part_engines, t.part_engines);
  }
  for (unsigned pe : t.part_engines)
    if (pe != e) engine_[pe].work.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngines::release(DmaTransfer& t) {
  // Every share moved: each part's engine is ordered after all of them and
  // goes on with its queue.
  const isa::Queue q = isa::dma_queue(t.queue);
  if (race_) {
    race_->dma_engines_join(race_core_, q, t.part_engines, t.part_engines);
    for (unsigned pe : t.part_engines) race_->dma_engine_end(race_core_, q, t.index, pe);
  }
  for (unsigned pe : t.part_engines) {
    auto& fifo = engine_[pe].queue[t.queue];
    if (!fifo.empty() && fifo.front().t.get() == &t) fifo.pop_front();
    engine_[pe].work.notify(sc_core::SC_ZERO_TIME);
  }
}

int DmaEngines::pick(unsigned e, std::uint64_t now, std::uint64_t& wake) {
  Engine& en = engine_[e];
  wake = UINT64_MAX;
  // Parts of transfers taken together reach this engine as soon as it is
  // free with them at the head of their queue.
  for (auto& fifo : en.queue)
    if (!fifo.empty() && !fifo.front().t->part_engines.empty() && !fifo.front().arrived)
      arrive(e, fifo.front());
  auto ready = [&](unsigned q) {
    const auto& fifo = en.queue[q];
    if (fifo.empty()) return false;
    const Share& h = fifo.front();
    // A part holds its queue until its transfer has moved (release()).
    if (!h.t->part_engines.empty() &&
        (h.rows.empty() || h.moved || h.t->arrived < h.t->part_engines.size()))
      return false;
    const std::uint64_t at = earliest_start(en, q);
    if (at <= now) return true;
    wake = std::min(wake, at);
    return false;
  };
  // Weighted round robin: the current queue keeps its turn for up to its
  // weight of transfers; then the next queue with a transfer ready (the
  // current one last, for a new turn).
  if (ready(en.next) && en.served < weights_[en.next]) {
    ++en.served;
    return static_cast<int>(en.next);
  }
  for (unsigned k = 1; k <= isa::kNumDmaQueues; ++k) {
    const unsigned q = (en.next + k) % isa::kNumDmaQueues;
    if (!ready(q)) continue;
    en.next = q;
    en.served = 1;
    return static_cast<int>(q);
  }
  return -1;
}

std::uint64_t DmaEngines::earliest_start(const Engine& en, unsigned q) const {
  return std::max(en.queue[q].front().t->ready_ps, en.queue_free[q]);
}

void DmaEngines::transfer_time(Engine& en, unsigned q, const Share& s) {
  // A share of another queue than the engine's last: its descriptor ring's
  // work (the next descriptor of the same ring is fetched while the current
  // one moves).
  if (en.last_queue != static_cast<int>(q) && engine_cost_ps_ != 0) wait(ps_time(engine_cost_ps_));
  en.last_queue = static_cast<int>(q);
  // The data: one flow of the HBM's bandwidth, capped at the engine's.
  const unsigned weight = dma_hbm_weight(s.t->desc);
  if (weight != 0 && hbm_)
    hbm_->transfer(s.bytes, bytes_per_s_, weight, hbm_group_);  // waits
  else
    wait(ps_time(stream_ps(s.bytes, bytes_per_s_)));
}

void DmaEngines::engine_thread(unsigned e) {
  Engine& en = engine_[e];
  for (;;) {
    std::uint64_t wake = UINT64_MAX;
    const int q = pick(e, now_ps(), wake);
    if (q < 0) {
      if (wake == UINT64_MAX)
        wait(en.work);
      else
        wait(ps_time(wake - now_ps()), en.work);
      continue;
    }
    Share& front = en.queue[q].front();
    if (front.t->part_engines.empty()) {
      en.current = std::move(front);
      en.queue[q].pop_front();
    } else {  // a part: it stays at the head, holding the queue
      front.moved = true;
      en.current = front;
    }
    Share& s = en.current;
    if (control_.aborted()) {  // a fault elsewhere: the run ends, drop it
      s = Share{};
      continue;
    }
    const DmaDescriptor& d = s.t->desc;
    const std::uint64_t start = now_ps();
    en.queue_free[q] = start + queue_cost_ps_;
    any_.begin(start);
    if (observer_) observer_->on_share_begin(e, s.t->queue, s.t->index, start, s.bytes);
    if (race_)
      race_->dma_engine_begin(race_core_, isa::dma_queue(s.t->queue), s.t->index, e,
                              d.header.opcode, d.events);
    transfer_time(en, static_cast<unsigned>(q), s);
    const std::uint64_t data_end = now_ps();
    if (s.run == run_) any_.end(data_end);  // the engine is free again
    // A run that ended while the bytes were on their way: nothing to tell.
    if (s.run != run_ || control_.aborted()) {
      s = Share{};
      continue;
    }
    if (!move_or_fault(e, s)) {
      s = Share{};
      continue;
    }
    if (race_) race_->dma_engine_end(race_core_, isa::dma_queue(s.t->queue), s.t->index, e);
    finish_share(e, s, start, data_end);
    s = Share{};
  }
}

void DmaEngines::finish_share(unsigned e, Share& s, std::uint64_t start, std::uint64_t data_end) {
  DmaTransfer& t = *s.t;
  const DmaDescriptor& d = t.desc;
  // Lands a fill after its bytes are through: the source's and the
  // destination's access latency (HBM: its latency; SBUF: the SBUF's).
  const std::uint64_t fill = (dma_is_hbm(d.src) ? hbm_latency_ps_ : sbuf_latency_ps_) +
                             (dma_is_hbm(d.dst) ? hbm_latency_ps_ : sbuf_latency_ps_);
  t.done_ps = std::max(t.done_ps, data_end + fill);
  const std::uint64_t busy_end = data_end;
  Engine& en = engine_[e];
  ++en.totals.shares;
  en.totals.busy_ps += busy_end - start;
  en.totals.bytes += s.bytes;
  const DmaShareRecord rec{e, t.queue, t.index, start, data_end, busy_end, s.bytes};
  // Kept until the time has passed it: a fault may still take it back.
  const std::uint64_t now = now_ps();
  while (!en.history.empty() && en.history.front().busy_ps < now) en.history.pop_front();
  en.history.push_back(rec);
  if (observer_) observer_->on_share_end(rec);
  if (--t.shares_left != 0) return;
  if (!t.part_engines.empty()) release(t);
  clients_[t.queue]->transfer_done(t);
}

void DmaEngines::move(unsigned e, const Share& s) {
  const DmaDescriptor& d = s.t->desc;
  MemPort& port = ports[e];
  const bool add = dma_adds(d);
  const unsigned es = add ? isa::dtype_size(d.rmw_dtype) : 1;
  const std::uint32_t chunk = std::min<std::uint32_t>(kChunkBytes, d.row_bytes);
  buf_.resize(chunk);
  if (add) acc_.resize(chunk);
  // The access costs are the engine's bandwidth above, not these delays.
  auto access = [&](std::uint64_t addr, void* data, std::uint32_t len, bool is_write,
                    const char* what) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_response_status st =
        is_write ? port.write(addr, data, len, delay) : port.read(addr, data, len, delay);
    if (st != tlm::TLM_OK_RESPONSE)
      throw DmaFault(fmt::format("address error: DMA {} {} of {} bytes at 0x{:x}: {}", what,
                                 is_write ? "write" : "read", len, addr, tlm_status_name(st)));
  };
  for (unsigned r : s.rows) {
    const std::uint64_t src = row_addr(d.src, r), dst = row_addr(d.dst, r);
    for (std::uint32_t off = 0; off < d.row_bytes; off += chunk) {
      const std::uint32_t n = std::min(chunk, d.row_bytes - off);
      if (race_)
        race_->dma_engine_move(race_core_, isa::dma_queue(s.t->queue), e, d, src + off, dst + off,
                               n);
      if (timing_only_) {
        // SPEC §13: no byte moves and no storage is touched (the descriptor
        // was checked whole: every access would be served); each counted as
        // it would be moved.
        port.account(src + off, n, false);
        if (add) port.account(dst + off, n, false);
        port.account(dst + off, n, true);
        continue;
      }
      access(src + off, buf_.data(), n, false, "src");
      if (!add) {
        access(dst + off, buf_.data(), n, true, "dst");
        continue;
      }
      access(dst + off, acc_.data(), n, false, "dst");
      num::add_elements(d.rmw_dtype, buf_.data(), acc_.data(), n / es);
      access(dst + off, acc_.data(), n, true, "dst");
    }
  }
}

bool DmaEngines::move_or_fault(unsigned e, const Share& s) {
  Client& c = *clients_[s.t->queue];
  try {
    move(e, s);
    return true;
  } catch (const DmaFault& f) {
    const std::string what = f.what();
    c.transfer_fault(*s.t, what.rfind("address error", 0) == 0 ? "address" : "kernel", what);
  } catch (const HostSpaceError& f) {
    c.transfer_fault(*s.t, "host", f.what());
  } catch (const std::bad_alloc&) {
    c.transfer_fault(*s.t, "host",
                     "out of host memory (the machine, or a memory limit such as ulimit -v)");
  }
  return false;
}

trace::EngineStats DmaEngines::stats(unsigned e, std::uint64_t stop_ps) const {
  const Engine& en = engine_[e];
  EngineTotals t = en.totals;
  // Shares past a stop are taken back; one in progress counts up to it.
  for (const DmaShareRecord& r : en.history) {
    if (r.busy_ps <= stop_ps) continue;
    t.busy_ps -= r.busy_ps - std::max(r.start_ps, std::min(stop_ps, r.busy_ps));
    if (r.data_ps > stop_ps) {
      --t.shares;
      t.bytes -= r.bytes;
    }
  }
  trace::EngineStats s;
  s.name = engine_name(e);
  s.clock_mhz = memory_clock_mhz_;
  s.instructions = t.shares;
  s.busy_cycles = (t.busy_ps * memory_clock_mhz_ + 500000) / 1000000;
  s.bytes_read = s.bytes_written = t.bytes;
  return s;
}

}  // namespace tpb::sc
