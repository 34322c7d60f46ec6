// A device of several NeuronCores sharing one HBM (SPEC §15), in ONE
// elaboration: N TpbCores, each with its own SBUF, PSUM, engines, 16 DMA
// engines and queues, semaphores and tile file, built in the current SystemC
// context.
//
// The HBM is the device's: core 0's HbmMemory owns the storage, of N x the
// profile's per-core `hbm.bytes` (sparse and lazy: HbmStorage), and every
// core's HBM target serves it, so every core sees the whole device memory at
// isa::kHbmBase. The bandwidth is the device's too: core 0's BandwidthShare,
// of N x the per-core `hbm.mbytes_per_s`, through which every core's DMA
// engines move their HBM bytes as the group of their core (max-min fair among
// the cores moving HBM data at each moment, each capped by its own engines).
//
// A device of one core is exactly today's core: the same module ("tpb"), the
// same profile, and run() is TpbCore::run.
//
// A DMA descriptor of one core may update another core's semaphore
// (`update=inc(coreK:semN)`, DmaDescriptor::update_core): every DMA queue
// holds the cores' semaphore banks.
//
// A run of several: every core with a program starts together; each runs to
// its own end (done, fault, deadlock, watchdog) — a fault on one core does
// not stop the others, which may then wait forever (a deadlock); the
// simulation goes on until every core has ended. Traces go into one recorder
// (each core's under its TraceNames: tpb.coreK, process coreK) and retires
// into one order (RetireMerge: end, core, engine, index).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/core/retire_merge.h"
#include "platform/core/tpb_core.h"

namespace tpb::platform {

class Device {
 public:
  // At most this many cores (a trn2 / trn3 device has 8; 32 leaves room for
  // studies while every core's elaboration stays affordable).
  static constexpr unsigned kMaxCores = isa::kMaxDeviceCores;

  // Throws std::invalid_argument for a core count outside [1, kMaxCores], or
  // a device HBM (cores x hbm.bytes) past the 2^40 window, and as TpbCore's
  // constructor for a bad profile.
  Device(unsigned cores, CoreConfig cfg);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  // The checks of the constructor without building anything.
  static void validate(unsigned cores, const CoreConfig& cfg);

  unsigned cores() const { return static_cast<unsigned>(cores_.size()); }
  TpbCore& core(unsigned i) { return *cores_.at(i); }
  const TpbCore& core(unsigned i) const { return *cores_.at(i); }
  // The per-core profile (the cores run with its HBM capacity made the
  // device's).
  const CoreConfig& config() const { return cfg_; }
  std::uint64_t hbm_bytes() const { return cfg_.timing.hbm.bytes * cores(); }
  std::uint64_t hbm_bytes_per_s() const;

  // Every core a fresh core of `cfg` (between runs), the HBM emptied.
  void reset(CoreConfig cfg);

  // The profile the device runs with: core 0's, with the per-core HBM
  // figures (SPEC §15: the profile keeps them).
  nlohmann::json effective_timing() const;

  struct Result {
    CoreRunResult total;                            // worst status, the latest end, every retire
    std::vector<std::optional<CoreRunResult>> per;  // per core; none for an idle core
  };
  // Runs the programs loaded on the cores with `active[i]` (the others stay
  // idle) until every one has ended. `setup` as TpbCore::run's; its retire
  // sink sees every core's retires in one time order (RetireRecord::core),
  // its traces hold every core. A device of one core: TpbCore::run.
  Result run(const std::vector<bool>& active, const CoreRunSetup& setup);

  // Logical cores of `lnc` physical cores (SPEC §15, `--lnc 2`) for the next
  // run: a descriptor's `coreK:` names logical core K, i.e. the physical
  // core at the updating core's place in K's pair (lnc K + place). Reset to 1
  // by every run. std::invalid_argument when lnc does not divide the cores.
  void set_logical_cores(unsigned lnc);
  // The physical core of each `coreK:` for core `core` (empty: core K).
  std::vector<unsigned> update_targets(unsigned core) const;

  // The last run's recorder (a device of one core: the core's).
  trace::Recorder& recorder() { return cores() == 1 ? cores_[0]->recorder() : *recorder_; }

 private:
  static CoreConfig core_config(unsigned cores, const CoreConfig& cfg);
  // The device's wiring after every reset: the HBM shared, every DMA queue
  // given the cores' semaphore banks (remote updates, SPEC §15).
  void connect();
  // Every DMA queue given the banks and its core's update targets.
  void connect_semaphores();
  // run(): sc_start until every running core has ended (a starved rest is
  // aborted as deadlocked), then each core's result into `out`.
  static void drive(const std::vector<TpbCore*>& running);
  void finish_cores(const std::vector<TpbCore*>& running, Result& out);
  CoreConfig cfg_;
  std::vector<std::unique_ptr<TpbCore>> cores_;
  std::unique_ptr<trace::Recorder> recorder_;
  std::vector<sc::SemaphoreBank*> sems_;  // by core
  unsigned lnc_ = 1;                      // set_logical_cores
};

// The status of a device run: the worst of its cores' (fault, deadlock,
// watchdog, interrupted, ok).
RunStatus worse(RunStatus a, RunStatus b);

}  // namespace tpb::platform
