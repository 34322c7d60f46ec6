#include "platform/core/device.h"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tpb::platform {

namespace {

// How bad a status is, for the device's: the worst of its cores'.
int severity(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return 0;
    case RunStatus::Interrupted:
      return 1;
    case RunStatus::Watchdog:
      return 2;
    case RunStatus::Deadlock:
      return 3;
    case RunStatus::Fault:
      return 4;
  }
  return 0;
}

}  // namespace

RunStatus worse(RunStatus a, RunStatus b) { return severity(b) > severity(a) ? b : a; }

void Device::validate(unsigned cores, const CoreConfig& cfg) {
  if (cores < 1 || cores > kMaxCores)
    throw std::invalid_argument(
        fmt::format("a device of {} cores: the model has 1 to {} cores", cores, kMaxCores));
  TpbCore::validate(cfg);
  if (cfg.timing.hbm.bytes > isa::kHbmWindow / cores)
    throw std::invalid_argument(
        fmt::format("a device of {} cores x hbm.bytes {} is past the 2^40 bytes of the HBM window",
                    cores, cfg.timing.hbm.bytes));
}

CoreConfig Device::core_config(unsigned cores, const CoreConfig& cfg) {
  CoreConfig c = cfg;
  c.timing.hbm.bytes = cfg.timing.hbm.bytes * cores;  // every core sees the device's HBM
  return c;
}

Device::Device(unsigned cores, CoreConfig cfg) : cfg_((validate(cores, cfg), std::move(cfg))) {
  for (unsigned i = 0; i < cores; ++i) {
    const std::string name = i == 0 ? "tpb" : fmt::format("tpb_core{}", i);
    cores_.push_back(std::make_unique<TpbCore>(name.c_str(), core_config(cores, cfg_)));
    if (cores > 1) cores_.back()->set_device_role(i, trace::TraceNames::of_core(i));
  }
  connect();
}

Device::~Device() = default;

std::uint64_t Device::hbm_bytes_per_s() const {
  return std::uint64_t{cfg_.timing.hbm.mbytes_per_s} * 1000000 * cores();
}

void Device::connect() {
  if (cores() == 1) return;  // today's core: its own HBM, bandwidth and semaphores
  TpbCore& owner = *cores_[0];
  owner.hbm.bandwidth.reset(hbm_bytes_per_s());
  sems_.clear();
  for (auto& c : cores_) sems_.push_back(&c->semaphores());
  for (auto& c : cores_) {
    c->share_hbm(owner);
    for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
      c->sequencer(isa::dma_queue(q)).set_device_semaphores(&sems_);
  }
}

void Device::reset(CoreConfig cfg) {
  validate(cores(), cfg);
  cfg_ = std::move(cfg);
  for (auto& c : cores_) c->reset(core_config(cores(), cfg_));
  connect();
}

nlohmann::json Device::effective_timing() const {
  nlohmann::json j = cores_[0]->effective_timing();
  if (cores() > 1 && j.contains("hbm") && j["hbm"].is_object())
    j["hbm"]["bytes"] = cfg_.timing.hbm.bytes;
  return j;
}

Device::Result Device::run(const std::vector<bool>& active, const CoreRunSetup& setup) {
  Result out;
  out.per.resize(cores());
  if (cores() == 1) {
    out.total = cores_[0]->run(setup);
    out.per[0] = out.total;
    return out;
  }
  if (sc_core::sc_get_status() == sc_core::SC_RUNNING)
    throw std::logic_error("Device::run drives the simulation: call it from sc_main");
  for (auto& c : cores_) c->ensure_elaborated();
  // One recorder for every core's traces, one order for every retire.
  recorder_ = std::make_unique<trace::Recorder>();
  trace::Recorder& rec = *recorder_;
  rec.enable_signals(setup.trace.signals);
  rec.enable_slices(setup.trace.slices);
  rec.enable_bundles(setup.trace.bundles);
  for (isa::Queue e : setup.trace.hidden_engines) rec.hide(isa::engine_name(e));
  TpbCore& first = *cores_[0];
  rec.set_watermark([&first] { return first.now_ps(); });  // the cores share their origin
  RetireMerge merge(cores(), setup.retire_sink
                                 ? RetireMerge::Sink([&setup](unsigned, const sc::RetireRecord& r) {
                                     setup.retire_sink(r);
                                   })
                                 : RetireMerge::Sink());
  CoreRunSetup each = setup;
  each.device_recorder = &rec;
  each.device_retires = &merge;
  // An interrupt stops every core: once the caller's says so it stays so (a
  // Python handler answers true once).
  bool interrupted = false;
  if (setup.interrupt)
    each.interrupt = [&interrupted, &setup] {
      if (!interrupted && setup.interrupt()) interrupted = true;
      return interrupted;
    };
  std::vector<TpbCore*> running;
  try {
    for (unsigned i = 0; i < cores(); ++i) {
      if (i >= active.size() || !active[i]) continue;
      cores_[i]->start(each);
      cores_[i]->control_.set_pause_when_done(true);
      running.push_back(cores_[i].get());
    }
    rec.attach(setup.trace.vcd, setup.trace.perfetto);
    drive(running);
  } catch (...) {
    rec.detach();
    throw;
  }
  // Each core's retires up to its own stop, then each core's end.
  std::vector<std::uint64_t> stops(cores(), trace::kForever);
  std::uint64_t trace_end = 0;
  for (TpbCore* c : running) {
    stops[c->core_id()] = c->stop_ps();
    trace_end = std::max(trace_end, stops[c->core_id()]);
  }
  merge.commit_at_stop(stops);
  finish_cores(running, out);
  if (running.empty()) out.total.simulated_ps = first.now_ps();
  rec.finish(running.empty() ? trace::kForever : trace_end);
  return out;
}

void Device::drive(const std::vector<TpbCore*>& running) {
  const auto any_running = [&] {
    for (TpbCore* c : running)
      if (c->control_.running()) return true;
    return false;
  };
  // Each core pauses the simulation when it ends; the others go on. A
  // simulation that starves with cores still running is a deadlock of
  // those: their waiting engines are released, as a core's run does.
  while (any_running()) {
    sc_core::sc_start();
    if (!any_running()) break;
    if (sc_core::sc_pending_activity()) continue;
    for (TpbCore* c : running)
      if (c->control_.running()) c->control_.abort();
    while (any_running()) sc_core::sc_start();
  }
  for (TpbCore* c : running) c->control_.set_pause_when_done(false);
}

void Device::finish_cores(const std::vector<TpbCore*>& running, Result& out) {
  out.total.start_ps = cores_[0]->now_ps();
  bool first_result = true;
  for (TpbCore* c : running) {
    CoreRunResult r = c->finish();
    if (first_result) out.total.start_ps = r.start_ps;
    first_result = false;
    out.total.status = worse(out.total.status, r.status);
    out.total.simulated_ps = std::max(out.total.simulated_ps, r.simulated_ps);
    out.total.instructions += r.instructions;
    out.total.wall_seconds = std::max(out.total.wall_seconds, r.wall_seconds);
    if (r.status != RunStatus::Ok) {
      out.total.message +=
          fmt::format("{}core{}: {}", out.total.message.empty() ? "" : "; ", c->core_id(),
                      r.message.empty() ? status_name(r.status) : r.message);
      if (r.fault && !out.total.fault) out.total.fault = r.fault;
    }
    out.per[c->core_id()] = std::move(r);
  }
}

}  // namespace tpb::platform
