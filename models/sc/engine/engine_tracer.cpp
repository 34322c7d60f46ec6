#include "models/sc/engine/engine_tracer.h"

#include <iterator>
#include <string>

#include <fmt/compile.h>

namespace tpb::sc {

EngineTracer::EngineTracer(trace::Recorder& rec, isa::Engine engine, std::size_t num_bundles)
    : rec_(rec), op_names_(256), bundle_names_(num_bundles) {
  const std::string scope = std::string("tpb.") + isa::engine_name(engine);
  sig_busy_ = rec.add_signal(scope, "busy", 1);
  sig_opcode_ = rec.add_signal(scope, "opcode", 8);
  sig_pc_ = rec.add_signal(scope, "pc", 32);
  sig_index_ = rec.add_signal(scope, "inst_index", 32);
  sig_marker_ = rec.add_signal(scope, "marker", 1);
  sig_hint_ = rec.add_signal(scope, "marker_hint", 8);
  track_ = rec.add_track("tpb core", isa::engine_name(engine));
}

void EngineTracer::on_issue(const IssueEvent& e) {
  const trace::Picos t = e.t_ps;
  rec_.set(sig_busy_, t, 1);
  // An engine issues in time order, so a repeat of the last opcode would
  // change nothing in the waves: not recorded (a million times for a loop).
  if (e.opcode != last_opcode_) {
    rec_.set(sig_opcode_, t, e.opcode);
    last_opcode_ = e.opcode;
  }
  rec_.set(sig_index_, t, e.index);
  if (rec_.slices_enabled()) {
    trace::NameId& n = op_names_[e.opcode];
    if (n.v == UINT32_MAX) {
      const std::string_view m = isa::opcode_mnemonic(e.opcode);
      n = rec_.intern(m.empty() ? fmt::format("op_0x{:02x}", e.opcode) : std::string(m));
    }
    rec_.begin_instruction(track_, t, n, e.index, e.opcode);
    ++open_slices_;
  }
  const isa::Header h = isa::header_of(*e.raw);
  if (h.debug_cmd == 1) {  // SPEC §2: trace marker carrying debug_hint
    marker_level_ = !marker_level_;
    rec_.set(sig_marker_, t, marker_level_);
    rec_.set(sig_hint_, t, h.debug_hint);
    if (rec_.slices_enabled())
      rec_.instant(track_, t, "marker", fmt::format(R"({{"hint":{}}})", h.debug_hint));
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
  rec_.begin(track_, t, n, std::string_view(args_.data(), args_.size()));
  ++open_slices_;
  bundle_open_ = true;
}

void EngineTracer::on_bundle_end(const fw::Bundle&, std::uint64_t t) {
  if (!bundle_open_) return;
  rec_.end(track_, t);
  --open_slices_;
  bundle_open_ = false;
}

void EngineTracer::on_retire(const RetireRecord& r) {
  if (rec_.slices_enabled() && open_slices_ > 0) {
    rec_.end(track_, r.end_ps);
    --open_slices_;
  }
  rec_.set(sig_busy_, r.end_ps, 0);
}

void EngineTracer::end_open_slices(std::uint64_t t) {
  for (; open_slices_ > 0; --open_slices_) rec_.end(track_, t);
  bundle_open_ = false;
  rec_.set(sig_busy_, t, 0);
}

}  // namespace tpb::sc
