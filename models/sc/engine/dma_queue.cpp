#include "models/sc/engine/dma_queue.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "models/isa/opcode_table.h"
#include "models/race/detector.h"
#include "models/sc/engine/dma_check.h"

namespace tpb::sc {

void Sequencer::DmaQueue::configure(const timing::TimingConfig& t, std::uint64_t hbm_capacity,
                                    bool has_hbm) {
  const unsigned cores = caps_.cores;  // the device's, kept (set_device_semaphores)
  caps_ = dma_capacities(t, hbm_capacity);
  caps_.has_hbm = has_hbm;
  caps_.cores = cores;
}

void Sequencer::DmaQueue::set_device_semaphores(const std::vector<SemaphoreBank*>* banks,
                                                std::vector<unsigned> targets) {
  device_sems_ = banks;
  update_targets_ = std::move(targets);
  caps_.cores = !update_targets_.empty() ? static_cast<unsigned>(update_targets_.size())
                : banks                  ? static_cast<unsigned>(banks->size())
                                         : 1;
}

bool Sequencer::DmaQueue::submit() {
  if (s_.opcode_ == static_cast<std::uint8_t>(isa::Opcode::Nop)) return submit_nop();
  if (s_.opcode_ != static_cast<std::uint8_t>(isa::Opcode::DmaCopy)) {
    s_.fault("dispatch", fmt::format("a DMA queue executes DMA descriptors only (dma_copy, opcode "
                                     "0x{:02x}), not opcode 0x{:02x}",
                                     static_cast<unsigned>(isa::Opcode::DmaCopy), s_.opcode_));
    return false;
  }
  auto t = std::make_shared<DmaTransfer>();
  std::memcpy(&t->desc, s_.raw_.data(), sizeof t->desc);
  try {
    check_dma(t->desc, caps_);
  } catch (const DmaFault& e) {
    // "address error: ..." or "<predicate>(side): ..." (nothing was written).
    const std::string what = e.what();
    if (what.rfind("address error", 0) == 0) {
      s_.fault("address", what);
    } else {
      const std::size_t cut = what.find_first_of("(:");
      s_.fault("invalid", "invalid DMA descriptor: " + what, {what.substr(0, cut)});
    }
    return false;
  }
  // The engines order their transfers by simulated time: submit at the
  // synced time.
  s_.sync();
  if (!await_slot()) return false;
  t->queue = isa::dma_queue_index(s_.engine_);
  t->index = s_.index_;
  t->issue_ps = s_.now_ps();
  t->fetch_ps = s_.fetch_ps_;
  t->fetched_ps = s_.fetched_ps_;
  // The race check: the queue has passed the transfer's wait; its DMA
  // engines take it (dma_engine_begin) as they reach it.
  if (s_.race_)
    s_.race_->dma_queue_begin(s_.race_core_, s_.engine_, s_.index_, s_.opcode_, s_.events_);
  s_.env_.dma->submit(t);
  const isa::DmaDescriptor& d = t->desc;
  const bool src_hbm = d.src.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
  const bool dst_hbm = d.dst.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
  const bool add = d.dst_rmw_op == static_cast<std::uint8_t>(isa::DmaRmwOp::Add);
  s_.notify([&](SequencerObserver& o) {
    o.on_count("dma_bytes", t->bytes);
    if (src_hbm || (dst_hbm && add))
      o.on_count("hbm_read_bytes", (src_hbm ? t->bytes : 0) + (dst_hbm && add ? t->bytes : 0));
    if (dst_hbm) o.on_count("hbm_write_bytes", t->bytes);
  });
  s_.notify([&](SequencerObserver& o) {
    o.on_issue(IssueEvent{s_.engine_, s_.index_, s_.opcode_, &s_.raw_, t->issue_ps, 0});
  });
  ++in_flight_;
  ++submitted_;
  order_.emplace_back().first.index = s_.index_;
  return true;
}

bool Sequencer::DmaQueue::await_slot() {
  // A descriptor holds its ring slot until its transfer completes
  // (docs/CONVENTIONS.md "DMA"): a queue has at most a ring of transfers in
  // flight, so a queue of any length runs in bounded memory.
  const std::size_t limit = std::max<std::size_t>(1, s_.env_.queue->ring_words());
  if (in_flight_ < limit) return true;
  RunControl& c = *s_.env_.control;
  while (in_flight_ >= limit) {
    sc_core::wait(slot_ev_ | c.abort_event());
    s_.refresh_stamp();
    s_.clock_.reset_local();
    if (c.aborted()) throw RunControl::Abort{};
  }
  if (c.proceed(s_.now_ps())) return true;
  s_.watchdog_stop();
  return false;
}

bool Sequencer::DmaQueue::submit_nop() {
  // The wait-only instruction on a DMA queue (SPEC §18): its wait is passed,
  // it moves nothing, and it completes with the queue's earlier transfers
  // (in order), its update then meaning "every earlier transfer is done".
  s_.sync();
  const std::uint64_t now = s_.now_ps();
  if (s_.race_)
    s_.race_->dma_queue_begin(s_.race_core_, s_.engine_, s_.index_, s_.opcode_, s_.events_);
  s_.notify([&](SequencerObserver& o) {
    o.on_issue(IssueEvent{s_.engine_, s_.index_, s_.opcode_, &s_.raw_, now, 0});
  });
  Completion& c = order_.emplace_back().first;
  c.index = s_.index_;
  c.opcode = s_.opcode_;
  c.events = s_.events_;
  c.fetch_ps = s_.fetch_ps_;
  c.fetched_ps = s_.fetched_ps_;
  c.start_ps = now;
  c.end_ps = now;
  order_.back().second = true;
  ++submitted_;  // in queue order, as a transfer (the pending list's range)
  complete_in_order();
  return true;
}

void Sequencer::DmaQueue::transfer_done(DmaTransfer& t) {
  // Called by the engine that moved the transfer's last share, at its time;
  // the transfer completes (retire, semaphore update) when it lands and every
  // earlier transfer of the queue has completed: a queue completes in order,
  // as a compute engine does (docs/CONVENTIONS.md "DMA").
  RunControl& ctl = *s_.env_.control;
  if (in_flight_ > 0) --in_flight_;
  slot_ev_.notify(sc_core::SC_ZERO_TIME);
  if (ctl.aborted() || s_.stopped_) return;
  auto it = std::find_if(order_.begin(), order_.end(),
                         [&](const auto& e) { return e.first.index == t.index; });
  if (it == order_.end()) return;
  Completion& c = it->first;
  c.opcode = static_cast<std::uint8_t>(isa::Opcode::DmaCopy);
  c.events = t.desc.events;
  c.update_core = physical_update_core(t.desc.update_core);
  c.fetch_ps = t.fetch_ps;
  c.fetched_ps = t.fetched_ps;
  c.start_ps = t.issue_ps;
  c.end_ps = t.done_ps;
  it->second = true;
  complete_in_order();
}

void Sequencer::DmaQueue::complete_in_order() {
  RunControl& ctl = *s_.env_.control;
  while (!order_.empty() && order_.front().second) {
    Completion done = order_.front().first;
    order_.pop_front();
    if (!s_.completions_.empty())
      done.end_ps = std::max(done.end_ps, s_.completions_.back().end_ps);
    // Its release in the race check: the engines that moved it, joined with
    // the queue's earlier transfers (they completed before it).
    if (s_.race_)
      s_.race_->end(s_.race_core_, s_.engine_, done.index, done.events, done.update_core);
    const bool first = s_.completions_.empty();
    s_.completions_.push_back(std::move(done));
    if (first) {
      const std::uint64_t now = ctl.rel_ps(sc_core::sc_time_stamp());
      const std::uint64_t at = s_.completions_.back().end_ps;
      s_.complete_ev_.notify(ps_time(at > now ? at - now : 0));
    }
  }
}

void Sequencer::DmaQueue::transfer_fault(DmaTransfer& t, const std::string& kind,
                                         const std::string& what) {
  if (in_flight_ > 0) --in_flight_;
  slot_ev_.notify(sc_core::SC_ZERO_TIME);
  if (s_.env_.control->aborted()) return;
  FaultInfo info;
  info.engine = s_.engine_;
  info.index = t.index;
  info.opcode = static_cast<std::uint8_t>(isa::Opcode::DmaCopy);
  info.kind = kind;
  const std::string_view m = isa::opcode_mnemonic(info.opcode);
  info.message = fmt::format("{} instruction {} (opcode 0x{:02x} {}): {}",
                             isa::engine_name(s_.engine_), t.index, info.opcode, m, what);
  const std::uint64_t now = s_.env_.control->rel_ps(sc_core::sc_time_stamp());
  s_.notify([&](SequencerObserver& o) { o.on_fault(now); });
  s_.env_.control->fault(std::move(info), now);
}

}  // namespace tpb::sc
