// A device of NeuronCores sharing one HBM (SPEC §15), in ONE elaboration: N
// TpbCores, each with its own SBUF, PSUM, engines, 16 DMA engines and
// queues, semaphores and tile file, built in the current SystemC context;
// and the one way cores run, DeviceRun.
//
// The HBM is the device's: core 0's HbmMemory owns the storage, of N x the
// profile's per-core `hbm.bytes` (sparse and lazy: HbmStorage), and every
// core's HBM target serves it, so every core sees the whole device memory at
// isa::kHbmBase. The bandwidth is the device's too: core 0's BandwidthShare,
// of N x the per-core `hbm.mbytes_per_s`, through which every core's DMA
// engines move their HBM bytes as the group of their core (max-min fair among
// the cores moving HBM data at each moment, each capped by its own engines).
//
// A device of one core is N = 1: the same module ("tpb"), the same profile,
// its trace and retire names those of a core alone.
//
// A DMA descriptor of one core may update another core's semaphore
// (`update=inc(coreK:semN)`, DmaDescriptor::update_core): every DMA queue
// holds the cores' semaphore banks.
//
// A run: every core with a program starts together; each runs to its own
// end (done, fault, deadlock, watchdog) — a fault on one core does not stop
// the others, which may then wait forever (a deadlock); the simulation goes
// on until every core has ended. Traces go into one recorder (each core's
// under its TraceNames: tpb.coreK, process coreK, on a device of several)
// and retires into one order (RetireMerge: end, core, engine, index).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/core/retire_merge.h"
#include "platform/core/tpb_core.h"

namespace tpb::platform {

// The result of a run of a device (of 1..N cores).
struct DeviceRunResult {
  CoreRunResult total;                            // worst status, the latest end, every retire
  std::vector<std::optional<CoreRunResult>> per;  // per core; none for an idle core
};

class Device {
 public:
  // At most this many cores (a trn2 / trn3 device has 8; 32 leaves room for
  // studies while every core's elaboration stays affordable).
  static constexpr unsigned kMaxCores = isa::kMaxDeviceCores;

  // Throws std::invalid_argument for a core count outside [1, kMaxCores], or
  // a device HBM (cores x hbm.bytes) past the 2^40 window.
  Device(unsigned cores, const Profile& profile);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  // The checks of the constructor without building anything: the profile
  // every core of the device would run with (its HBM the device's).
  static Profile validate(unsigned cores, const Profile& profile);

  unsigned cores() const { return static_cast<unsigned>(cores_.size()); }
  TpbCore& core(unsigned i) { return *cores_.at(i); }
  const TpbCore& core(unsigned i) const { return *cores_.at(i); }
  // Every core's configuration: the profile's per-core figures, the HBM the
  // device's (config().hbm_capacity()).
  const CoreConfig& config() const { return profile_.config(); }
  std::uint64_t hbm_bytes() const { return config().hbm_capacity(); }
  std::uint64_t hbm_bytes_per_s() const;

  // Every core a fresh core of `profile` (between runs), the HBM emptied.
  void reset(const Profile& profile);

  // The profile the device runs with (SPEC §15: per core, as every core's).
  nlohmann::json effective_timing() const { return cores_[0]->effective_timing(); }

  // Runs the programs loaded on the cores with `active[i]` (the others stay
  // idle) until every one has ended, from sc_main (a DeviceRun of them).
  // `setup` as TpbCore::run's; its retire sink sees every core's retires in
  // one time order (RetireRecord::core), its traces hold every core.
  DeviceRunResult run(const std::vector<bool>& active, const CoreRunSetup& setup);

  // Logical cores of `lnc` physical cores (SPEC §15, `--lnc 2`) for the next
  // run: a descriptor's `coreK:` names logical core K, i.e. the physical
  // core at the updating core's place in K's pair (lnc K + place). Reset to 1
  // by every run. std::invalid_argument when lnc does not divide the cores.
  void set_logical_cores(unsigned lnc);
  // The physical core of each `coreK:` for core `core` (empty: core K).
  std::vector<unsigned> update_targets(unsigned core) const;

  // The last run's recorder.
  trace::Recorder& recorder() { return *recorder_; }

 private:
  // The device's wiring after every reset: the HBM shared, every DMA queue
  // given the cores' semaphore banks (remote updates, SPEC §15).
  void connect();
  // Every DMA queue given the banks and its core's update targets.
  void connect_semaphores();
  Profile profile_;  // in_device(cores)
  std::vector<std::unique_ptr<TpbCore>> cores_;
  std::shared_ptr<trace::Recorder> recorder_;
  std::vector<sc::SemaphoreBank*> sems_;  // by core
  unsigned lnc_ = 1;                      // set_logical_cores
};

// One run of 1..N cores (SPEC §12, §15): the only way cores run. A device's
// run, a core's run() and an embedding's execute() (a core alone is a device
// of one) are each a DeviceRun: it makes the run's one recorder (the trace
// set-up), its one retire order (RetireMerge) and its interrupt, starts
// every running core into them, and at the end commits each core's retires
// up to its stop, ends each core and then the traces. Between the two the
// caller drives: drive() from sc_main, or wait(done) from a process.
class DeviceRun {
 public:
  // Starts the cores of `cores` with `active[i]` (an empty `active`: all).
  // A core's number in the run is its core_id(); the first core's clock is
  // the run's (the cores share their origin).
  DeviceRun(const std::vector<TpbCore*>& cores, const std::vector<bool>& active,
            const CoreRunSetup& setup);
  ~DeviceRun();
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;

  // From sc_main: sc_start until every running core has ended; a simulation
  // that starves with cores still running is their deadlock (their waiting
  // engines are released).
  void drive();
  // Each core's retires up to its own stop, each core's end, then the
  // traces' (the latest stop).
  DeviceRunResult finish();
  const std::shared_ptr<trace::Recorder>& recorder() const { return rec_; }

 private:
  void start(const std::vector<TpbCore*>& cores, const std::vector<bool>& active,
             const CoreRunSetup& setup);
  void combine(const TpbCore& core, CoreRunResult r, DeviceRunResult& out) const;
  std::vector<TpbCore*> all_, running_;
  unsigned slots_ = 0;  // 1 + the highest core_id()
  std::shared_ptr<trace::Recorder> rec_;
  std::unique_ptr<RetireMerge> retires_;
  bool interrupted_ = false;  // once the caller's interrupt says so, it stays so
  bool finished_ = false;
};

}  // namespace tpb::platform
