// One engine's traces (SPEC §9 --vcd / --perfetto): a SequencerObserver that
// records the engine's signals (busy, opcode, pc = bundle VA, instruction
// index, trace markers) and its Perfetto track (an instruction slice with its
// bundles nested) into the run's trace::Recorder. Made per run; what it
// registers, and in which order, is what the VCD header and the track list
// show.
#pragma once

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "models/sc/engine/sequencer_observer.h"
#include "models/trace/recorder.h"

namespace tpb::sc {

class EngineTracer : public SequencerObserver {
 public:
  // Registers the engine's signals and track in `rec`; `num_bundles` is the
  // kernel registry's bundle count (names are interned by Bundle::id).
  EngineTracer(trace::Recorder& rec, isa::Engine engine, std::size_t num_bundles);

  void on_issue(const IssueEvent& e) override;
  void on_bundle(const fw::Bundle& b, std::uint64_t t_ps, std::uint64_t trips,
                 std::uint32_t cycles) override;
  void on_bundle_end(const fw::Bundle& b, std::uint64_t t_ps) override;
  // At the instruction level (--trace-level instruction, or `auto` on a long
  // program) the sequencer need not call on_bundle / on_bundle_end at all.
  bool wants_bundle_starts() const override { return rec_.bundles_enabled(); }
  bool wants_bundle_ends() const override { return rec_.bundles_enabled(); }
  void on_retire(const RetireRecord& r) override;
  void on_fault(std::uint64_t t_ps) override { end_open_slices(t_ps); }
  void on_stop(std::uint64_t t_ps) override { end_open_slices(t_ps); }

 private:
  void end_open_slices(std::uint64_t t_ps);

  trace::Recorder& rec_;
  trace::SignalId sig_busy_, sig_opcode_, sig_pc_, sig_index_, sig_marker_, sig_hint_;
  int last_opcode_ = -1;  // the opcode signal's last recorded value (-1: none yet)
  trace::TrackId track_;
  std::vector<trace::NameId> op_names_;      // by opcode, interned on first use
  std::vector<trace::NameId> bundle_names_;  // by fw::Bundle::id
  fmt::memory_buffer args_;                  // args text of the slice being recorded
  unsigned open_slices_ = 0;
  bool bundle_open_ = false;
  bool marker_level_ = false;
};

}  // namespace tpb::sc
