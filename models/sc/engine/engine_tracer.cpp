#include "models/sc/engine/engine_tracer.h"

#include <iterator>
#include <string>

#include <fmt/compile.h>

namespace tpb::sc {

EngineTracer::EngineTracer(trace::Recorder& rec, isa::Queue engine, std::size_t num_bundles,
                           const trace::TraceNames& names)
    : rec_(rec),
      engine_(engine),
      process_(names.process),
      dma_queue_(isa::is_dma_queue(engine)),
      op_names_(256),
      bundle_names_(num_bundles) {
  const std::string scope = names.scope + "." + isa::engine_name(engine);
  sig_busy_ = rec.add_signal(scope, "busy", 1);
  sig_in_flight_ = rec.add_signal(scope, "in_flight", 16);
  sig_opcode_ = rec.add_signal(scope, "opcode", 8);
  sig_pc_ = rec.add_signal(scope, "pc", 32);
  sig_index_ = rec.add_signal(scope, "inst_index", 32);
  sig_retired_ = rec.add_signal(scope, "retired_index", 32);
  sig_marker_ = rec.add_signal(scope, "marker", 1);
  sig_hint_ = rec.add_signal(scope, "marker_hint", 8);
  lanes_.push_back(Lane{rec.add_track(process_, isa::engine_name(engine))});
}

unsigned EngineTracer::take_lane(std::uint64_t t, std::uint64_t end, std::uint64_t index) {
  // A lane whose instruction has completed by t is free, its slice ended
  // here if its retire has not come yet (a compute engine issues ahead of
  // the simulated time; its bundles were all told).
  for (Lane& l : lanes_)
    if (l.open && l.free_at != 0 && l.free_at <= t) {
      if (rec_.slices_enabled()) rec_.end(l.track, l.free_at);
      l.open = false;
    }
  unsigned k = 0;
  while (k < lanes_.size() && (lanes_[k].open || lanes_[k].free_at > t)) ++k;
  if (k == lanes_.size()) {
    const std::string name = fmt::format("{} lane {}", isa::engine_name(engine_), k);
    lanes_.push_back(
        Lane{rec_.add_track(process_, name, isa::engine_name(engine_), lanes_[0].track)});
  }
  Lane& l = lanes_[k];
  l.open = true;
  l.free_at = end;
  l.index = index;
  return k;
}

void EngineTracer::count_down_until(std::uint64_t t) {
  while (!pending_done_.empty() && pending_done_.front() <= t) {
    const std::uint64_t done = pending_done_.front();
    pending_done_.pop_front();
    --in_flight_;
    rec_.set(sig_in_flight_, done, in_flight_);
    if (in_flight_ == 0) rec_.set(sig_busy_, done, 0);
  }
}

void EngineTracer::on_issue(const IssueEvent& e) {
  const trace::Picos t = e.t_ps;
  // A compute engine knows each completion at issue, and its issues come in
  // order: the counts at every time are told in time order.
  if (!dma_queue_) count_down_until(t);
  if (in_flight_++ == 0) rec_.set(sig_busy_, t, 1);
  rec_.set(sig_in_flight_, t, in_flight_);
  if (!dma_queue_ && e.end_ps != 0) pending_done_.push_back(e.end_ps);
  // A repeat of the last opcode would change nothing in the waves: not
  // recorded (a million times for a loop).
  if (e.opcode != last_opcode_) {
    rec_.set(sig_opcode_, t, e.opcode);
    last_opcode_ = e.opcode;
  }
  rec_.set(sig_index_, t, e.index);
  lane_ = take_lane(t, e.end_ps, e.index);
  if (rec_.slices_enabled()) {
    trace::NameId& n = op_names_[e.opcode];
    if (n.v == UINT32_MAX) {
      const std::string_view m = isa::opcode_mnemonic(e.opcode);
      n = rec_.intern(m.empty() ? fmt::format("op_0x{:02x}", e.opcode) : std::string(m));
    }
    rec_.begin_instruction(lanes_[lane_].track, t, n, e.index, e.opcode);
  }
  const isa::Header h = isa::header_of(*e.raw);
  if (h.debug_cmd == 1) {  // SPEC §2: trace marker carrying debug_hint
    marker_level_ = !marker_level_;
    rec_.set(sig_marker_, t, marker_level_);
    rec_.set(sig_hint_, t, h.debug_hint);
    if (rec_.slices_enabled())
      rec_.instant(lanes_[lane_].track, t, "marker", fmt::format(R"({{"hint":{}}})", h.debug_hint));
  }
}

void EngineTracer::on_bundle(const fw::Bundle& b, std::uint64_t t, std::uint64_t trips,
                             std::uint32_t cycles) {
  if (!rec_.bundles_enabled()) return;
  rec_.set(sig_pc_, t, b.va);
  if (!rec_.slices_enabled()) return;
  trace::NameId& n = bundle_names_[b.id];
  if (n.v == UINT32_MAX) n = rec_.intern(b.name);
  args_.clear();
  fmt::format_to(std::back_inserter(args_),
                 FMT_COMPILE(R"({{"va":"0x{:08x}","trips":{},"cycles":{}}})"), b.va, trips, cycles);
  rec_.begin(lanes_[lane_].track, t, n, std::string_view(args_.data(), args_.size()));
  bundle_open_ = true;
}

void EngineTracer::on_bundle_end(const fw::Bundle&, std::uint64_t t) {
  if (!bundle_open_) return;
  rec_.end(lanes_[lane_].track, t);
  bundle_open_ = false;
}

void EngineTracer::on_retire(const RetireRecord& r) {
  for (Lane& l : lanes_) {
    if (!l.open || l.index != r.index) continue;
    if (rec_.slices_enabled()) rec_.end(l.track, r.end_ps);
    l.open = false;
    l.free_at = r.end_ps;
    break;
  }
  rec_.set(sig_retired_, r.end_ps, r.index);
  // Issues and completions of a DMA queue come at the simulated time; a
  // compute engine's retire is told at its issue, its count comes down at
  // the next issue after it (count_down_until) or at the end.
  if (dma_queue_) {
    if (in_flight_ > 0 && --in_flight_ == 0) rec_.set(sig_busy_, r.end_ps, 0);
    rec_.set(sig_in_flight_, r.end_ps, in_flight_);
  }
}

void EngineTracer::end_open_slices(std::uint64_t t) {
  if (rec_.slices_enabled()) {
    if (bundle_open_) rec_.end(lanes_[lane_].track, t);
    for (Lane& l : lanes_)
      if (l.open) rec_.end(l.track, std::min(t, l.free_at == 0 ? t : l.free_at));
  }
  for (Lane& l : lanes_) l.open = false;
  bundle_open_ = false;
  if (in_flight_ != 0) {
    in_flight_ = 0;
    pending_done_.clear();
    rec_.set(sig_in_flight_, t, 0);
    rec_.set(sig_busy_, t, 0);
  }
}

}  // namespace tpb::sc
