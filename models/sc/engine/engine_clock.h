// One engine's clock: where its thread is in simulated time (SPEC §8). The
// time is the simulation's at the thread's last wait (the stamp), plus the
// quantum keeper's local time (riscv-vp style: an engine runs ahead of
// sc_time_stamp() and syncs now and then), plus compute time kept as an
// integer of picoseconds until something reads or passes on the local time
// (a bundle's cycles are an integer add, not an sc_time built per bundle).
// An instruction's compute cycles are rounded once, in total, at the
// engine's clock (add_cycles). The Sequencer owns one; its thread is the
// only one that moves it.
#pragma once

#include <cassert>
#include <cstdint>

#include <systemc>
#include <tlm>

// After <systemc>: the tlm_utils headers need its declarations.
#include <tlm_utils/tlm_quantumkeeper.h>

#include "models/sc/engine/run_control.h"
#include "models/sc/engine/timing_config.h"
#include "models/timing/timing_profile.h"

namespace tpb::sc {

class EngineClock {
 public:
  explicit EngineClock(RunControl* control) : control_(control) {}

  // The engine's clock rate (a new configuration, between runs).
  void set_divider(timing::ClockDivider d) { divider_ = d; }
  const timing::ClockDivider& divider() const { return divider_; }

  // The engine's time from the core's origin: the stamp, the quantum
  // keeper's local time and the pending compute time.
  std::uint64_t now_ps() const {
    // The simulated time moves only while this thread waits, and every wait
    // of the engine's thread is followed by refresh_stamp().
    assert(!sc_core::sc_get_current_process_handle().valid() ||
           stamp_ps_ <= control_->rel_ps(sc_core::sc_time_stamp()));
    return stamp_ps_ + qk_.get_local_time().value() + pending_ps_;
  }
  // sc_time_stamp() from the origin, at the thread's last wait.
  std::uint64_t stamp_ps() const { return stamp_ps_; }
  // After every wait of the engine's thread.
  void refresh_stamp() { stamp_ps_ = control_->rel_ps(sc_core::sc_time_stamp()); }
  // The engine's time to `t` (>= the time at its last wait).
  void set_now(std::uint64_t t) {
    pending_ps_ = 0;
    qk_.set(ps_time(t - stamp_ps_));
  }
  // The pending compute time onto the quantum keeper: called before
  // anything reads or passes on its local time.
  void flush() {
    if (pending_ps_ != 0) {
      qk_.inc(ps_time(pending_ps_));
      pending_ps_ = 0;
    }
  }
  // Waits out the local time (flushed first); leaves (RunControl::Abort)
  // when the run is aborted.
  void sync();

  // The quantum keeper's local time, read and set around a timed call
  // (MemPort's accesses add their delay to it), moved on, or dropped after a
  // wait of the thread.
  sc_core::sc_time local_time() const { return qk_.get_local_time(); }
  void set_local_time(const sc_core::sc_time& d) { qk_.set(d); }
  void inc(const sc_core::sc_time& d) { qk_.inc(d); }
  void reset_local() { qk_.reset(); }
  bool need_sync() { return qk_.need_sync(); }
  // Picoseconds onto the pending compute time (no rounding of their own).
  void add_pending_ps(std::uint64_t ps) { pending_ps_ += ps; }
  void clear_pending() { pending_ps_ = 0; }

  // An instruction's compute: cycles since begin_instruction(), their time
  // rounded once (cycles_to_ps) so that the instruction's total is
  // round(cycles / clock); add_cycles() moves the pending time by the rounded
  // difference.
  void begin_instruction() {
    inst_cycles_ = 0;
    inst_ps_ = 0;
  }
  void add_cycles(std::uint64_t cycles) {
    inst_cycles_ = cycles > UINT64_MAX - inst_cycles_ ? UINT64_MAX : inst_cycles_ + cycles;
    const std::uint64_t after = timing::TimingConfig::cycles_to_ps(inst_cycles_, divider_);
    pending_ps_ += after - inst_ps_;
    inst_ps_ = after;
  }
  std::uint64_t instruction_ps() const { return inst_ps_; }

 private:
  RunControl* control_;  // the core's (SequencerEnv::control)
  timing::ClockDivider divider_;
  tlm_utils::tlm_quantumkeeper qk_;
  std::uint64_t stamp_ps_ = 0;
  std::uint64_t pending_ps_ = 0;
  std::uint64_t inst_cycles_ = 0;  // compute cycles of the current instruction
  std::uint64_t inst_ps_ = 0;      // their duration, rounded once (cycles_to_ps)
};

}  // namespace tpb::sc
