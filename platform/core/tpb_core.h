// One NeuronCore (SPEC §2, §7, §12): the top module in the style of the
// Accellera lt example. It owns the four SBUF quadrants, the PSUM, the HBM, the ONE
// address router, the semaphores, the engine registers, the instruction
// queues and the sequencers (five compute engines, 16 DMA queues), and binds them in its
// constructor.
//
// A core runs program after program, as a device does: load a program, run
// until every queue is drained, read and change memories, load another,
// run again; SBUF, PSUM, the tile file, PE weights, semaphores and simulated
// time carry over. reset() turns it into a fresh core of another
// configuration without a new elaboration (SystemC elaborates once per
// process). Every run is a run of a device (platform::DeviceRun, device.h):
// a core alone is a device of one, and its run(), execute() and the
// start() / finish() halves are that run, defined with it (device.cpp).
// Two ways to drive it:
//  - standalone (the run API, tests, the CLI): run() from sc_main drives
//    sc_start itself until the run ends;
//  - embedded in a user's platform (docs/EMBEDDING.md): a host binds its
//    initiator to host_socket, and from one of its SC_THREADs calls
//    execute() (or start() + wait(done_event()) + finish()).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

// After <systemc>: the tlm_utils headers need its declarations.
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program.h"
#include "models/isa/program_spool.h"
#include "models/numerics/mx_quantize.h"
#include "models/race/detector.h"
#include "models/sc/engine/dma_engine_tracer.h"
#include "models/sc/engine/dma_engines.h"
#include "models/sc/engine/engine_stats.h"
#include "models/sc/engine/engine_tracer.h"
#include "models/sc/engine/run_control.h"
#include "models/sc/engine/sequencer.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/hbm_memory.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/partitioned_memory.h"
#include "models/sc/memory/semaphore_bank.h"
#include "models/sc/memory/tile_target.h"
#include "models/state/sfu_tile_file.h"
#include "models/trace/recorder.h"
#include "models/trace/stats.h"
#include "platform/core/core_tracer.h"
#include "platform/core/profile.h"
#include "platform/core/retire_merge.h"

namespace tpb::platform {

// What one run records (SPEC §9 --vcd, --perfetto, --trace-*).
struct TraceSetup {
  bool signals = false;  // VCD value changes
  bool slices = false;   // Perfetto slices
  // --trace-level: bundle slices and the pc signal (false: instructions only).
  bool bundles = true;
  // --trace-engines: the queues (compute engines, DMA queues) whose signals
  // and tracks are not recorded.
  std::vector<isa::Queue> hidden_queues;
  // Streaming sinks (nullptr: the recorder keeps the events in memory).
  trace::ChangeSink* vcd = nullptr;
  trace::SliceSink* perfetto = nullptr;
};

// One run's set-up.
struct CoreRunSetup {
  TraceSetup trace;
  // Watchdogs (0: off). No instruction is recorded or retired after
  // max_sim_ps (from the run's start); past max_wall_seconds of host time
  // every engine stops at the latest simulated time already recorded.
  // Either ends the run with RunStatus::Watchdog.
  std::uint64_t max_sim_ps = 0;
  double max_wall_seconds = 0;
  // Called on every retired instruction, in time order (end, engine, index).
  std::function<void(const sc::RetireRecord&)> retire_sink;
  // Asked now and then during the run; true stops it as a watchdog would,
  // with RunStatus::Interrupted (Ctrl-C, a signal).
  std::function<bool()> interrupt;
  // The race check (SPEC §14): the detector every engine and the host
  // socket report to during the run (nullptr: none, nothing recorded). The
  // caller makes it for the loaded program (race::Detector) and reads its
  // report after the run.
  race::Detector* race = nullptr;
  // SPEC §13: no arithmetic and no bytes moved through memory; every cycle,
  // retire, stat and trace as the full run's. Memory the run writes keeps
  // what it held, and the PE's stationary values are zeros (so a later run's
  // values are unspecified). The SFU's TQUANT still computes in its small
  // tile file, so its flags, traces and data-dependent faults (a NaN source,
  // an undefined tile element) are the full run's.
  bool timing_only = false;
};

enum class RunStatus { Ok, Fault, Deadlock, Watchdog, Interrupted };
// "ok", "fault", "deadlock", "watchdog", "interrupted"
const char* status_name(RunStatus s);
// The worse of two statuses (fault, deadlock, watchdog, interrupted, ok): a
// device's is the worst of its cores'.
RunStatus worse(RunStatus a, RunStatus b);

struct CoreRunResult {
  RunStatus status = RunStatus::Ok;
  std::string message;                 // fault / deadlock / watchdog description
  std::optional<sc::FaultInfo> fault;  // a fault's engine, instruction, predicates
  std::uint64_t start_ps = 0;          // the core's time when the run started
  std::uint64_t simulated_ps = 0;      // ... and when it ended
  std::uint64_t instructions = 0;      // retired, all engines
  double wall_seconds = 0;
};

class DeviceRun;

class TpbCore : public sc_core::sc_module {
 public:
  // Memories with byte counters: SBUF quadrants q0..q3 and the PSUM
  // (MemPort::kCountSbufQ0 .. kCountPsum).
  static constexpr unsigned kNumMems = sc::MemPort::kCountPsum + 1;
  // Engine i of the core's sequencers (compute engines, then the DMA queues).
  static constexpr isa::Queue engine_at(std::size_t i) { return static_cast<isa::Queue>(i); }

  // A CoreConfig loads into its Profile first (throwing as Profile's
  // constructor, before any child module is built).
  TpbCore(sc_core::sc_module_name name, Profile profile);
  ~TpbCore() override;

  // A fresh core of `profile` between runs: every memory, register,
  // semaphore, queue, tile and engine state cleared, time counted from now
  // (0). std::logic_error during a run.
  void reset(Profile profile);

  // Loads every engine's queue and the register settings. A program of any
  // length: each queue is a ring the engine's instruction fetch refills.
  // An engine the program gives no words runs nothing. Between runs.
  void load_program(const isa::Program& p);
  // The same from a program read into spools (isa::SpooledProgram): the
  // words stay on disk and stream in as the engines run.
  void load_program(isa::SpooledProgram& p);
  void load_queue(isa::Queue e, const std::vector<isa::RawInst>& words);
  void load_queue(isa::Queue e, std::unique_ptr<isa::InstructionSource> src);
  void set_reg(isa::Queue e, unsigned r, std::uint32_t v);
  std::uint32_t reg(isa::Queue e, unsigned r) const;

  // Backdoor (transport_dbg through the router, untimed). Throws
  // std::runtime_error naming the address when any byte is not backed, or
  // when an SBUF / PSUM access would run past the end of its partition.
  void load_memory(std::uint64_t addr, const void* data, std::size_t len);
  void dump_memory(std::uint64_t addr, void* data, std::size_t len);
  std::vector<std::uint8_t> dump_memory(std::uint64_t addr, std::size_t len);

  // Standalone: runs the loaded program to completion, a fault, a deadlock
  // or a watchdog's limit, driving sc_start itself (call from sc_main, not
  // from a process): a DeviceRun of this core alone. Runs any number of
  // times. The traces end at the end of the run (a fault's time: nothing
  // past it is recorded).
  CoreRunResult run(const CoreRunSetup& setup);
  CoreRunResult run();  // with the default set-up (set_retire_sink; no traces, no watchdogs)
  // The retire sink of the default set-up.
  void set_retire_sink(std::function<void(const sc::RetireRecord&)> f) {
    default_setup_.retire_sink = std::move(f);
  }

  // Embedded: from an SC_THREAD of the user's platform. execute() starts the
  // loaded program and returns when every engine has finished (a deadlock
  // is not detected here: it waits, up to max_sim_ps when that is set).
  // start() / finish() are its two halves around wait(done_event()).
  CoreRunResult execute(const CoreRunSetup& setup);
  void start(const CoreRunSetup& setup);
  const sc_core::sc_event& done_event() const { return control_.done_event(); }
  bool running() const { return running_; }
  CoreRunResult finish();

  // Stats of the last run; program path left empty.
  trace::RunStats stats() const;
  // The recorder of the last run this core took part in (its events,
  // without streaming sinks; a device's run: the device's, every core's).
  trace::Recorder& recorder() { return *rec_; }
  const trace::Recorder& recorder() const { return *rec_; }
  const CoreConfig& config() const { return profile_.config(); }
  // The effective timing profile, every bundle's issue cycles included, with
  // the source of every number ("sources").
  nlohmann::json effective_timing() const;
  // The retire line of a record (no newline): `tpbsim run --retire`.
  static std::string format_retire(const sc::RetireRecord& r);
  // With `with_core` (a device of several cores, SPEC §15) the engine is
  // named coreK.ENGINE.
  static std::string format_retire(const sc::RetireRecord& r, bool with_core);
  // The core's time now (from its origin).
  std::uint64_t now_ps() const { return control_.rel_ps(sc_core::sc_time_stamp()); }

  // This core in a device of several (SPEC §15): its number (the race
  // check's core index, the retire order) and the names its traces go
  // under. A core alone: 0 and the default names. Between runs.
  void set_device_role(unsigned core_id, trace::TraceNames names) {
    core_id_ = core_id;
    trace_names_ = std::move(names);
  }
  unsigned core_id() const { return core_id_; }
  // A device's HBM: this core's HBM target serves `owner`'s storage and its
  // DMA engines move their bytes through `owner`'s bandwidth share (as
  // group core_id()). Between runs, after every reset.
  void share_hbm(TpbCore& owner);

  const sc::AddressRouter& router() const { return router_; }
  sc::SemaphoreBank& semaphores() { return sems_; }
  sc::Sequencer& sequencer(isa::Queue e) { return seqs_[static_cast<unsigned>(e)]; }
  // The SFU tile file (SPEC §6), in the SFU sequencer's engine state: the
  // backdoor for `--load / --dump tile:N` and tests.
  sfu::TileFile& tile_file() {
    return sequencer(isa::Queue::Sfu).engine_state().get<sfu::TileFile>();
  }

 private:
  friend class DeviceRun;  // every run: start_in / end_in, the drive
  // The core's own observer on each sequencer: retires into the time-ordered
  // hold (and the core-level traces).
  class EngineHook : public sc::SequencerObserver {
   public:
    explicit EngineHook(TpbCore& core) : core_(core) {}
    void on_retire(const sc::RetireRecord& r) override { core_.on_retire(r); }
    bool wants_bundle_starts() const override { return false; }
    bool wants_bundle_ends() const override { return false; }

   private:
    TpbCore& core_;
  };
  void ensure_elaborated();
  // This core's part in a run (DeviceRun): its engines started with
  // `setup`, tracing into `rec`, retiring into `retires`; and its end, its
  // retires committed by the run first.
  void start_in(const CoreRunSetup& setup, std::shared_ptr<trace::Recorder> rec,
                RetireMerge& retires);
  CoreRunResult end_in(const RetireMerge& retires);
  // Where the current run stops recording: a fault's time, a watchdog's
  // stop, or trace::kForever.
  std::uint64_t stop_ps() const;
  void backdoor(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::size_t len);
  void on_retire(const sc::RetireRecord& r);
  // Each engine that has not finished: its pending instruction, its wait
  // condition and the semaphore's value.
  std::string pending_report() const;
  void map_and_bind();  // the constructor's address map and socket bindings
  void apply_config();
  // A host socket access during a run with the race check (core_race.cpp).
  void race_host(const tlm::tlm_generic_payload& t);
  // Host socket: forwarded to the router.
  void host_b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& d);
  unsigned host_transport_dbg(tlm::tlm_generic_payload& t);
  bool host_get_dmi(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi);
  void host_invalidate(sc_dt::uint64 start, sc_dt::uint64 end);
  // execute(): the sim limit as an event, so a run whose engines all wait
  // still ends at it (SC_METHOD on limit_ev_).
  void on_sim_limit();
  sc_core::sc_event limit_ev_;

  Profile profile_;
  std::shared_ptr<trace::Recorder> rec_;  // the last run's (every core's of it)
  RetireMerge* retires_ = nullptr;        // the current run's retire order
  std::shared_ptr<DeviceRun> alone_;      // start() .. finish(): this core alone
  trace::TraceNames trace_names_;
  sc::RunControl control_;

 public:
  // The children, owned by value and bound in the constructor.
  sc_core::sc_vector<sc::PartitionedMemory> sbuf;  // quadrants q0..q3
  sc::PartitionedMemory psum;
  sc::AddressRouter router_;
  // The core's device memory at isa::kHbmBase (SPEC §10), the DMA queues'
  // shared bandwidth in hbm.bandwidth.
  sc::HbmMemory hbm;
  sc::SemaphoreBank sems_;
  sc::EngineRegisterFile regs_;
  sc_core::sc_vector<sc::InstructionQueue> queues;
  // The DMA engines every DMA queue's transfers run on (SPEC §10).
  sc::DmaEngines dma_engines;
  sc_core::sc_vector<sc::Sequencer> seqs_;
  tlm_utils::simple_initiator_socket<TpbCore> dbg_socket;
  // Hosts reach SBUF, PSUM, the tile file and the control region here (the
  // TLM address map of SPEC §2), timed as the engines' accesses are.
  tlm_utils::simple_target_socket_optional<TpbCore> host_socket;
  std::unique_ptr<sc::TileFileTarget> tiles;  // region 2, over tile_file()

 private:
  tlm_utils::simple_initiator_socket<TpbCore> host_fwd_;
  bool elaborated_ = false;
  bool running_ = false;
  // This core's number in a device (its agents' in the race check).
  unsigned core_id_ = 0;
  CoreRunSetup setup_;
  CoreRunSetup default_setup_;
  std::chrono::steady_clock::time_point wall0_;
  std::uint64_t run_start_ps_ = 0;
  std::vector<std::unique_ptr<sc::EngineStatsCollector>> stats_;
  std::vector<std::unique_ptr<sc::EngineTracer>> tracers_;  // by engine, null when not traced
  std::unique_ptr<sc::DmaEngineTracer> dma_tracer_;         // when a traced run has DMA
  bool dma_active_ = false;                                 // a DMA queue has descriptors
  // Engines of the current (or last) run that appear in its outputs: every
  // compute engine, and the DMA queues that had descriptors.
  std::array<bool, isa::kNumQueues> active_{};
  // What every queue's port has moved, summed as it goes (the traces' byte
  // counters read it on every retire).
  sc::MemPort::Totals port_totals_;
  std::vector<std::unique_ptr<EngineHook>> hooks_;
  std::unique_ptr<CoreTracer> core_tracer_;
  CoreRunResult last_;
  std::uint64_t stop_ps_ = trace::kForever;  // the last run's stop (a fault or a watchdog)
  // Bytes moved to and from each memory (SBUF quadrants, PSUM), over every
  // engine's MemPort counters.
  void memory_bytes(std::uint64_t (&rd)[kNumMems], std::uint64_t (&wr)[kNumMems]) const;
  sfu::TileFile* tile_file_ = nullptr;  // in the SFU sequencer's engine state
};

}  // namespace tpb::platform
