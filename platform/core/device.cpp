// A device of 1..N cores (device.h) and DeviceRun, the one way cores run: a
// device's run, and a core alone's run(), execute() and start() / finish().
#include "platform/core/device.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tpb::platform {

Profile Device::validate(unsigned cores, const Profile& profile) {
  if (cores < 1 || cores > kMaxCores)
    throw std::invalid_argument(
        fmt::format("a device of {} cores: the model has 1 to {} cores", cores, kMaxCores));
  return profile.in_device(cores);
}

Device::Device(unsigned cores, const Profile& profile)
    : profile_(validate(cores, profile)), recorder_(std::make_shared<trace::Recorder>()) {
  for (unsigned i = 0; i < cores; ++i) {
    const std::string name = i == 0 ? "tpb" : fmt::format("tpb_core{}", i);
    cores_.push_back(std::make_unique<TpbCore>(name.c_str(), profile_));
    // A device of one core is named as a core alone.
    cores_.back()->set_device_role(i,
                                   cores > 1 ? trace::TraceNames::of_core(i) : trace::TraceNames{});
  }
  connect();
}

Device::~Device() = default;

std::uint64_t Device::hbm_bytes_per_s() const {
  return std::uint64_t{config().timing.hbm.mbytes_per_s} * 1000000 * cores();
}

void Device::connect() {
  TpbCore& owner = *cores_[0];
  owner.hbm.bandwidth.reset(hbm_bytes_per_s());
  sems_.clear();
  for (auto& c : cores_) sems_.push_back(&c->semaphores());
  for (auto& c : cores_) c->share_hbm(owner);
  connect_semaphores();
}

void Device::connect_semaphores() {
  for (unsigned i = 0; i < cores(); ++i)
    for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
      cores_[i]->sequencer(isa::dma_queue(q)).set_device_semaphores(&sems_, update_targets(i));
}

void Device::set_logical_cores(unsigned lnc) {
  if (lnc == 0 || cores() % lnc != 0)
    throw std::invalid_argument(
        fmt::format("logical cores of {} on a device of {} cores", lnc, cores()));
  lnc_ = lnc;
}

std::vector<unsigned> Device::update_targets(unsigned core) const {
  std::vector<unsigned> t;
  if (lnc_ == 1) return t;
  for (unsigned k = 0; k < cores() / lnc_; ++k) t.push_back(lnc_ * k + core % lnc_);
  return t;
}

void Device::reset(const Profile& profile) {
  profile_ = validate(cores(), profile);
  for (auto& c : cores_) c->reset(profile_);
  recorder_ = std::make_shared<trace::Recorder>();
  connect();
}

namespace {

// A run from sc_main drives sc_start itself; an embedding's waits in its
// own process.
void check_driven_from_sc_main() {
  if (sc_core::sc_get_status() == sc_core::SC_RUNNING)
    throw std::logic_error(
        "run() drives the simulation: call it from sc_main (execute() from a process)");
}

}  // namespace

DeviceRunResult Device::run(const std::vector<bool>& active, const CoreRunSetup& setup) {
  check_driven_from_sc_main();
  // A run's logical cores are its own: the next run names physical ones
  // unless it says so again.
  struct Logical {
    Device& d;
    ~Logical() {
      d.lnc_ = 1;
      d.connect_semaphores();
    }
  } logical{*this};
  connect_semaphores();
  std::vector<TpbCore*> cores;
  for (auto& c : cores_) cores.push_back(c.get());
  DeviceRun run(cores, active, setup);
  recorder_ = run.recorder();
  run.drive();
  return run.finish();
}

// ------------------------------------------------------------ a device's run

DeviceRun::DeviceRun(const std::vector<TpbCore*>& cores, const std::vector<bool>& active,
                     const CoreRunSetup& setup) {
  try {
    start(cores, active, setup);
  } catch (...) {
    // The caller's trace sinks may go with the exception: the recorder's
    // writer thread must not outlive them.
    if (rec_) rec_->detach();
    throw;
  }
}

DeviceRun::~DeviceRun() {
  if (!finished_ && rec_) rec_->detach();
}

void DeviceRun::start(const std::vector<TpbCore*>& cores, const std::vector<bool>& active,
                      const CoreRunSetup& setup) {
  all_ = cores;
  for (TpbCore* c : cores) {
    slots_ = std::max(slots_, c->core_id() + 1);
    c->ensure_elaborated();
  }
  // One recorder for every core's traces, one order for every retire.
  rec_ = std::make_shared<trace::Recorder>();
  trace::Recorder& rec = *rec_;
  rec.enable_signals(setup.trace.signals);
  rec.enable_slices(setup.trace.slices);
  rec.enable_bundles(setup.trace.bundles);
  for (isa::Queue e : setup.trace.hidden_queues) rec.hide(isa::engine_name(e));
  // No event can still be recorded before the global time (the cores share
  // their origin).
  const TpbCore& first = *cores.front();
  rec.set_watermark([&first] { return first.now_ps(); });
  RetireMerge::Sink sink;
  if (setup.retire_sink)
    sink = [f = setup.retire_sink](unsigned, const sc::RetireRecord& r) { f(r); };
  retires_ = std::make_unique<RetireMerge>(slots_, std::move(sink));
  CoreRunSetup each = setup;
  // An interrupt stops every core: once the caller's says so it stays so (a
  // Python handler answers true once).
  if (setup.interrupt)
    each.interrupt = [this, f = setup.interrupt] {
      if (!interrupted_ && f()) interrupted_ = true;
      return interrupted_;
    };
  for (std::size_t i = 0; i < cores.size(); ++i) {
    if (!active.empty() && (i >= active.size() || !active[i])) continue;
    cores[i]->start_in(each, rec_, *retires_);
    running_.push_back(cores[i]);
  }
  rec.attach(setup.trace.vcd, setup.trace.perfetto);
}

void DeviceRun::drive() {
  const auto any_running = [&] {
    for (TpbCore* c : running_)
      if (c->control_.running()) return true;
    return false;
  };
  try {
    for (TpbCore* c : running_) c->control_.set_pause_when_done(true);
    // Each core pauses the simulation when it ends; the others go on. A
    // simulation that starves with cores still running is a deadlock of
    // those: their waiting engines are released (the report is taken
    // before that, at their end).
    while (any_running()) {
      sc::host_sc_start();
      if (!any_running()) break;
      if (sc_core::sc_pending_activity()) continue;
      // A core that a watchdog stopped stops the device there: the cores
      // still waiting end as that watchdog's stop, as the engines of one
      // core do when one waits for ever and another reaches the limit.
      const sc::RunControl* stopped = nullptr;
      for (TpbCore* c : running_)
        if (!stopped && c->control_.watchdog() != sc::RunControl::Watchdog::None)
          stopped = &c->control_;
      for (TpbCore* c : running_)
        if (c->control_.running()) {
          if (stopped)
            c->control_.expire(stopped->watchdog(), stopped->stop_ps());
          else
            c->control_.abort();
        }
      while (any_running()) sc::host_sc_start();
    }
    for (TpbCore* c : running_) c->control_.set_pause_when_done(false);
  } catch (...) {
    rec_->detach();
    finished_ = true;
    throw;
  }
}

DeviceRunResult DeviceRun::finish() {
  finished_ = true;
  // Each core's retires up to its own stop, then each core's end.
  std::vector<std::uint64_t> stops(slots_, trace::kForever);
  std::uint64_t trace_end = 0;
  for (TpbCore* c : running_) {
    stops[c->core_id()] = c->stop_ps();
    trace_end = std::max(trace_end, stops[c->core_id()]);
  }
  retires_->commit_at_stop(stops);
  DeviceRunResult out;
  out.per.resize(slots_);
  out.total.start_ps = all_.front()->now_ps();
  for (std::size_t i = 0; i < running_.size(); ++i) {
    CoreRunResult r = running_[i]->end_in(*retires_);
    if (i == 0) out.total.start_ps = r.start_ps;
    combine(*running_[i], std::move(r), out);
  }
  if (running_.empty()) out.total.simulated_ps = all_.front()->now_ps();
  rec_->finish(running_.empty() ? trace::kForever : trace_end);
  return out;
}

// A core's result into the run's: the worst status, the latest end, every
// retire, each message named by its core on a device of several.
void DeviceRun::combine(const TpbCore& core, CoreRunResult r, DeviceRunResult& out) const {
  CoreRunResult& t = out.total;
  t.status = worse(t.status, r.status);
  t.simulated_ps = std::max(t.simulated_ps, r.simulated_ps);
  t.instructions += r.instructions;
  t.wall_seconds = std::max(t.wall_seconds, r.wall_seconds);
  if (r.status != RunStatus::Ok) {
    const std::string who = all_.size() > 1 ? fmt::format("core{}: ", core.core_id()) : "";
    t.message += fmt::format("{}{}{}", t.message.empty() ? "" : "; ", who,
                             r.message.empty() ? status_name(r.status) : r.message);
    if (r.fault && !t.fault) t.fault = r.fault;
  }
  out.per[core.core_id()] = std::move(r);
}

// ------------------------------------------------- a core alone: a device of one

CoreRunResult TpbCore::run() { return run(default_setup_); }

CoreRunResult TpbCore::run(const CoreRunSetup& setup) {
  check_driven_from_sc_main();
  DeviceRun run({this}, {}, setup);
  run.drive();
  return run.finish().total;
}

void TpbCore::start(const CoreRunSetup& setup) {
  alone_ = std::make_shared<DeviceRun>(std::vector<TpbCore*>{this}, std::vector<bool>{}, setup);
}

CoreRunResult TpbCore::finish() {
  if (!alone_) throw std::logic_error("TpbCore::finish: no run in progress");
  const std::shared_ptr<DeviceRun> run = std::move(alone_);
  return run->finish().total;
}

CoreRunResult TpbCore::execute(const CoreRunSetup& setup) {
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING ||
      !sc_core::sc_get_current_process_handle().valid())
    throw std::logic_error(
        "TpbCore::execute waits: call it from an SC_THREAD (run() from sc_main)");
  start(setup);
  try {
    if (setup.max_sim_ps != 0 && setup.max_sim_ps < timing::TimingConfig::kMaxPs)
      limit_ev_.notify(sc::ps_time(setup.max_sim_ps));
    wait(control_.done_event());
    limit_ev_.cancel();
  } catch (...) {
    alone_.reset();  // its recorder lets go of the caller's sinks
    throw;
  }
  return finish();
}

}  // namespace tpb::platform
