// One engine's traces (SPEC §9 --vcd / --perfetto): a SequencerObserver that
// records the engine's signals and its Perfetto tracks into the run's
// trace::Recorder. Made per run; what it registers, and in which order, is
// what the VCD header and the track list show.
//
// Instructions overlap (SPEC §8: an engine issues the next one after the
// initiation interval, not the latency), so the timelines show them
// stacked: an instruction's slice (from its issue to its completion, its
// bundles nested) goes on the engine's first track that is free at its
// issue — the engine's own track ("pe"), or a lane added below it when
// needed ("pe lane 1", ...). VCD: `busy` (an instruction in flight),
// `in_flight` (how many), `opcode` and `inst_index` of the instruction last
// issued, `pc` the VA of the bundle last begun (of whichever instruction),
// `retired_index` of the instruction last completed, and the trace markers.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "models/sc/engine/sequencer_observer.h"
#include "models/trace/recorder.h"

namespace tpb::sc {

class EngineTracer : public SequencerObserver {
 public:
  // Registers the engine's signals and track in `rec`; `num_bundles` is the
  // kernel registry's bundle count (names are interned by Bundle::id).
  EngineTracer(trace::Recorder& rec, isa::Queue engine, std::size_t num_bundles,
               const trace::TraceNames& names = {});

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
  // The run ended at `end` (trace::kForever: every instruction completed):
  // the in_flight signal counts down to it.
  void finish(std::uint64_t end) { count_down_until(end); }

 private:
  struct Lane {
    trace::TrackId track;
    std::uint64_t free_at = 0;  // the completion of its last instruction (0: open-ended)
    bool open = false;          // an instruction's slice is open on it
    std::uint64_t index = 0;    // that instruction
  };
  // The lane for an instruction issued at t that completes at `end` (0:
  // unknown, a DMA transfer: the lane stays taken until it retires).
  unsigned take_lane(std::uint64_t t, std::uint64_t end, std::uint64_t index);
  // The in_flight signal: the completions (in time order) not yet counted down.
  void count_down_until(std::uint64_t t);
  void end_open_slices(std::uint64_t t_ps);

  trace::Recorder& rec_;
  isa::Queue engine_;
  std::string process_;  // its Perfetto process (TraceNames::process)
  bool dma_queue_;
  trace::SignalId sig_busy_, sig_in_flight_, sig_opcode_, sig_pc_, sig_index_, sig_retired_,
      sig_marker_, sig_hint_;
  int last_opcode_ = -1;  // the opcode signal's last recorded value (-1: none yet)
  std::vector<Lane> lanes_;
  unsigned lane_ = 0;                        // the lane of the instruction whose bundles come now
  std::vector<trace::NameId> op_names_;      // by opcode, interned on first use
  std::vector<trace::NameId> bundle_names_;  // by fw::Bundle::id
  fmt::memory_buffer args_;                  // args text of the slice being recorded
  bool bundle_open_ = false;
  bool marker_level_ = false;
  unsigned in_flight_ = 0;
  std::deque<std::uint64_t> pending_done_;  // compute engines: completions not yet counted
};

}  // namespace tpb::sc
