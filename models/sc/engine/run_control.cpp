#include "models/sc/engine/run_control.h"

#include "models/isa/sanitizer.h"

#if TPB_ADDRESS_SANITIZER
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace tpb::sc {

namespace {
const std::string kNoMessage;

void restore_host_stack_for_sanitizer() {
#if TPB_ADDRESS_SANITIZER
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  std::size_t size = 0;
  const int got = pthread_attr_getstack(&attr, &bottom, &size);
  pthread_attr_destroy(&attr);
  if (got != 0) return;
  // A switch from this stack to itself: the sanitizer takes its bounds.
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}
}  // namespace

void host_sc_start() {
  sc_core::sc_start();
  restore_host_stack_for_sanitizer();
}

void host_sc_start(const sc_core::sc_time& duration) {
  sc_core::sc_start(duration);
  restore_host_stack_for_sanitizer();
}

void RunControl::start(unsigned engines) {
  active_ = engines;
  aborted_ = false;
  fault_.reset();
  fault_ps_ = 0;
  limit_ps_ = UINT64_MAX;
  latest_ps_ = 0;
  has_wall_ = false;
  watchdog_ = Watchdog::None;
  interrupt_ = nullptr;
  interrupt_tick_ = 0;
  start_.notify(sc_core::SC_ZERO_TIME);
  if (engines == 0) done_.notify(sc_core::SC_ZERO_TIME);
}

void RunControl::engine_finished() {
  if (active_ == 0) return;
  if (--active_ > 0) return;
  done_.notify(sc_core::SC_ZERO_TIME);
  if (pause_when_done_) sc_core::sc_pause();
}

void RunControl::abort() {
  if (aborted_) return;
  aborted_ = true;
  abort_ev_.notify(sc_core::SC_ZERO_TIME);
}

void RunControl::fault(FaultInfo info, std::uint64_t time_ps) {
  if (fault_) return;
  fault_ = std::move(info);
  fault_ps_ = time_ps;
  abort();
}

void RunControl::expire_sim_limit() { expire(Watchdog::SimTime, limit_ps_); }

void RunControl::expire(Watchdog w, std::uint64_t stop_ps) {
  if (stop_ps < limit_ps_) limit_ps_ = stop_ps;
  if (watchdog_ == Watchdog::None) watchdog_ = w;
  abort();
}

const std::string& RunControl::message() const { return fault_ ? fault_->message : kNoMessage; }

bool RunControl::proceed_slow(std::uint64_t ps, bool ask_interrupt) {
  if (ask_interrupt && watchdog_ == Watchdog::None && interrupt_()) {
    if (latest_ps_ < limit_ps_) limit_ps_ = latest_ps_;
    watchdog_ = Watchdog::Interrupt;
    has_wall_ = false;
  }
  if (has_wall_ && watchdog_ != Watchdog::WallTime &&
      std::chrono::steady_clock::now() >= wall_deadline_) {
    if (latest_ps_ < limit_ps_) {
      limit_ps_ = latest_ps_;
      watchdog_ = Watchdog::WallTime;
    }
    has_wall_ = false;
  }
  if (ps > limit_ps_) {
    if (watchdog_ == Watchdog::None) watchdog_ = Watchdog::SimTime;
    return false;
  }
  if (ps > latest_ps_) latest_ps_ = ps;
  return true;
}

}  // namespace tpb::sc
