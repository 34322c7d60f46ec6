// The run state one core's engines share (SPEC §7, §12): the start of a run,
// the first fault, the watchdogs, and the end of a run. A core runs program
// after program: each run starts every engine with start(), and ends when the
// last engine has finished (its queue drained, a fault, a watchdog's stop) or
// when a fault or the driver aborts the engines still waiting. The driver
// either pauses the simulation at the end of a run (the run API drives
// sc_start itself) or waits for done_event() (a core embedded in a user's
// platform, whose simulation goes on).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "models/isa/address_map.h"

namespace tpb::sc {

// sc_start from the host's thread (the run API, an elaboration). SystemC
// tells AddressSanitizer of every switch between its coroutines, and its
// main coroutine has no stack of its own to name: back on the host's stack
// the sanitizer believes it has none, and an exception thrown there later
// (a bad argument, a write error) is misread as a stack-buffer overflow.
// This gives the sanitizer the thread's stack back after each sc_start.
void host_sc_start();
void host_sc_start(const sc_core::sc_time& duration);

// What a fault names (SPEC §9 exit 2): the engine, the instruction, the
// opcode and, for an invalid instruction, every failed predicate.
struct FaultInfo {
  isa::Queue engine = isa::Queue::Pool;
  std::uint64_t index = 0;
  std::uint8_t opcode = 0;
  // "invalid", "address", "kernel", "fetch", "dispatch", "time", "host" (the host
  // had no memory left for what the run touched: an error, not the program's).
  std::string kind;
  std::vector<std::string> predicates;  // kind "invalid": the failed predicates
  std::string message;                  // the whole message, engine and index first
};

class RunControl {
 public:
  // Thrown out of an engine's waits when the run is aborted (caught by the
  // engine's thread, which then waits for the next run).
  struct Abort {};

  // The core's time origin: run times are reported from here (a core reset
  // in a process whose simulation already advanced starts again at 0).
  void set_origin(sc_core::sc_time t) { origin_ = t; }
  sc_core::sc_time origin() const { return origin_; }
  // Picoseconds since the origin of an absolute simulated time.
  std::uint64_t rel_ps(const sc_core::sc_time& t) const { return (t - origin_).value(); }

  // Starts a run of `engines` engines (each calls engine_finished() once).
  void start(unsigned engines);
  const sc_core::sc_event& start_event() const { return start_; }
  bool running() const { return active_ > 0; }
  unsigned active() const { return active_; }
  // Called by every engine when its run ends, whatever the reason.
  void engine_finished();
  // Notified when the last engine of a run finished.
  const sc_core::sc_event& done_event() const { return done_; }
  // With this set, the end of a run also calls sc_pause() (the driver's
  // sc_start returns).
  void set_pause_when_done(bool on) { pause_when_done_ = on; }

  // Makes every engine still in a wait leave it (RunControl::Abort); their
  // runs end. Called at a fault, and by the driver after a deadlock.
  void abort();
  bool aborted() const { return aborted_; }
  const sc_core::sc_event& abort_event() const { return abort_ev_; }

  // Records the first fault (time relative to the origin) and aborts the
  // run; later faults are ignored.
  void fault(FaultInfo info, std::uint64_t time_ps);
  bool faulted() const { return fault_.has_value(); }
  const std::string& message() const;
  const std::optional<FaultInfo>& fault_info() const { return fault_; }
  std::uint64_t fault_time_ps() const { return fault_ps_; }

  // Watchdogs (`tpbsim run --max-sim-time / --max-wall-time`). The engines
  // ask proceed(t) before they record anything at time t (an instruction's
  // start, a bundle, a retire); false means stop there, with nothing
  // recorded after stop_ps(). A sim limit stops every engine at that time; a
  // wall deadline, once past, lowers the stop time to the latest time
  // already recorded, so every engine stops at a common time and each trace
  // is complete up to it. Both are per run (cleared by start()).
  enum class Watchdog { None, SimTime, WallTime, Interrupt };
  void set_sim_limit(std::uint64_t ps) { limit_ps_ = ps; }
  void set_wall_deadline(std::chrono::steady_clock::time_point t) {
    wall_deadline_ = t;
    has_wall_ = true;
  }
  // An interrupt (Ctrl-C, a signal, a binding's cancel) works as the wall
  // deadline does: `f` is asked now and then (every 64th proceed), and once
  // it says true every engine stops at the latest time already recorded.
  void set_interrupt(std::function<bool()> f) { interrupt_ = std::move(f); }
  bool proceed(std::uint64_t ps) {
    // Inline: every bundle asks twice. The host clock and the interrupt
    // are asked in proceed_slow (the interrupt every 64th call).
    const bool ask = interrupt_ && (++interrupt_tick_ & 63u) == 0;
    if (ask || has_wall_ || ps > limit_ps_) return proceed_slow(ps, ask);
    if (ps > latest_ps_) latest_ps_ = ps;
    return true;
  }
  // The sim limit reached while engines wait (a semaphore nobody sets, in a
  // platform where the simulation does not starve): every waiting engine is
  // released and the run ends as a watchdog stop at stop_ps().
  void expire_sim_limit();
  // The same for watchdog `w` at `stop_ps` (the stop is lowered to it): a
  // core of a device whose engines wait while another core's watchdog
  // stopped it ends as that core did (platform::Device).
  void expire(Watchdog w, std::uint64_t stop_ps);
  Watchdog watchdog() const { return watchdog_; }
  std::uint64_t stop_ps() const { return limit_ps_; }

 private:
  sc_core::sc_time origin_;
  sc_core::sc_event start_, done_, abort_ev_;
  unsigned active_ = 0;
  bool pause_when_done_ = false;
  bool aborted_ = false;
  std::optional<FaultInfo> fault_;
  std::uint64_t fault_ps_ = 0;
  std::uint64_t limit_ps_ = UINT64_MAX;
  std::uint64_t latest_ps_ = 0;  // latest time an engine recorded anything at
  bool has_wall_ = false;
  std::chrono::steady_clock::time_point wall_deadline_{};
  Watchdog watchdog_ = Watchdog::None;
  std::function<bool()> interrupt_;
  unsigned interrupt_tick_ = 0;
  bool proceed_slow(std::uint64_t ps, bool ask_interrupt);
};

}  // namespace tpb::sc
