// One NeuronCore (SPEC §2, §7): the top module in the style of the Accellera
// lt example. It owns the four SBUF quadrants, the PSUM, the ONE address
// router, the semaphores, the engine registers, the instruction queues and the
// four engine sequencers, and binds them in its constructor. A C++ API for
// tests and the CLI: construct, load a program, load/dump memory (backdoor
// transport_dbg through the router), run, read stats and traces.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

// After <systemc>: the tlm_utils headers need its declarations.
#include <tlm_utils/simple_initiator_socket.h>

#include "firmware_stubs/sfu/tile_file.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program.h"
#include "models/isa/program_spool.h"
#include "models/numerics/dequant_stream.h"
#include "models/sc/engine/sequencer.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/partitioned_memory.h"
#include "models/sc/memory/semaphore_bank.h"
#include "models/sc/memory/tile_target.h"
#include "models/trace/recorder.h"
#include "models/trace/stats.h"

namespace tpb::platform {

struct CoreConfig {
  isa::Arch arch = isa::Arch::Mariana;
  sc::TimingConfig timing = sc::default_timing(isa::Arch::Mariana);
  // DVE QuantizeMX emax offsets (SPEC §4); the core puts it in the DVE's
  // engine state (fw::QuantizeMxOptions).
  num::MxEmax mx_emax = num::MxEmax::Ocp;
  bool trace_signals = false;  // VCD value changes
  bool trace_slices = false;   // Perfetto slices
  // --trace-level: bundle slices and the pc signal (false: instructions only).
  bool trace_bundles = true;
  // --trace-engines: engines whose signals and tracks are not recorded.
  std::vector<isa::Engine> trace_hidden_engines;
  // Replacement kernel_info tables (8-byte records, seed 000 §1) by engine;
  // empty = the default table of the engine.
  std::array<std::vector<std::uint8_t>, isa::kNumEngines> kernel_info;
  // Watchdogs (0: off). No instruction is recorded or retired after
  // max_sim_ps; past max_wall_seconds of host time every engine stops at the
  // latest simulated time already recorded. Either ends the run with
  // RunStatus::Watchdog.
  std::uint64_t max_sim_ps = 0;
  double max_wall_seconds = 0;
};
// The defaults of a generation (timing from sc::default_timing).
CoreConfig default_core_config(isa::Arch arch);

enum class RunStatus { Ok, Fault, Deadlock, Watchdog };
const char* status_name(RunStatus s);  // "ok", "fault", "deadlock", "watchdog"

struct RunResult {
  RunStatus status = RunStatus::Ok;
  std::string message;  // fault / deadlock / watchdog description
  std::uint64_t simulated_ps = 0;
  std::uint64_t instructions = 0;  // retired, all engines
  double wall_seconds = 0;
};

class TpbCore : public sc_core::sc_module {
 public:
  // Memories with byte counters: SBUF quadrants q0..q3 and the PSUM
  // (MemPort::kCountSbufQ0 .. kCountPsum).
  static constexpr unsigned kNumMems = sc::MemPort::kCountPsum + 1;

  // Throws std::invalid_argument for an impossible configuration and
  // timing::TimingError for a bundle override that names no bundle (before
  // any child module is built).
  TpbCore(sc_core::sc_module_name name, CoreConfig cfg);

  // Loads every engine's queue and the register settings. A program of any
  // length: each queue is a ring the engine's instruction fetch refills.
  void load_program(const isa::Program& p);
  // The same from a program read into spools (isa::SpooledProgram): the
  // words stay on disk and stream in as the engines run.
  void load_program(isa::SpooledProgram& p);
  void load_queue(isa::Engine e, const std::vector<isa::RawInst>& words);
  void load_queue(isa::Engine e, std::unique_ptr<isa::InstructionSource> src);
  void set_reg(isa::Engine e, unsigned r, std::uint32_t v);
  std::uint32_t reg(isa::Engine e, unsigned r) const;

  // Backdoor (transport_dbg through the router, untimed). Throws
  // std::runtime_error naming the address when any byte is not backed, or
  // when an SBUF / PSUM access would run past the end of its partition.
  void load_memory(std::uint64_t addr, const void* data, std::size_t len);
  void dump_memory(std::uint64_t addr, void* data, std::size_t len);
  std::vector<std::uint8_t> dump_memory(std::uint64_t addr, std::size_t len);

  // Streams the traces to these sinks as the run goes (nullptr: none);
  // without, the recorder keeps every event in memory. Before run().
  void attach_traces(trace::ChangeSink* vcd, trace::SliceSink* perfetto) {
    recorder_.attach(vcd, perfetto);
  }

  // Runs to completion, fault, deadlock or a watchdog's limit. Call once.
  // The traces end at the end of the run (a fault's time: nothing past it
  // is recorded).
  RunResult run();

  // Stats after (or during) a run; program path left empty.
  trace::RunStats stats() const;
  trace::Recorder& recorder() { return recorder_; }
  const trace::Recorder& recorder() const { return recorder_; }
  const CoreConfig& config() const { return cfg_; }
  // The effective timing profile, every bundle's issue cycles included.
  nlohmann::json effective_timing() const;
  // Called on every retired instruction with its structured record.
  void set_retire_sink(std::function<void(const sc::RetireRecord&)> f) {
    retire_sink_ = std::move(f);
  }
  // The retire line of a record (no newline): `tpbsim run --retire`.
  static std::string format_retire(const sc::RetireRecord& r);

  const sc::AddressRouter& router() const { return router_; }
  sc::SemaphoreBank& semaphores() { return sems_; }
  sc::Sequencer& sequencer(isa::Engine e) { return seqs_[static_cast<unsigned>(e)]; }
  // The SFU tile file (SPEC §6), in the SFU sequencer's engine state: the
  // backdoor for `--load / --dump tile:N` and tests.
  fw::sfu::TileFile& tile_file() {
    return sequencer(isa::Engine::Sfu).engine_state().get<fw::sfu::TileFile>();
  }

 private:
  void ensure_elaborated();
  void backdoor(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::size_t len);
  void on_retire(const sc::RetireRecord& r);
  // Each engine that has not finished: its pending instruction, its wait
  // condition and the semaphore's value.
  std::string pending_report() const;

  CoreConfig cfg_;
  fw::BundleCosts costs_;  // every bundle's cost under cfg_.timing, resolved once
  trace::Recorder recorder_;
  sc::RunControl control_;

 public:
  // The children, owned by value and bound in the constructor.
  sc_core::sc_vector<sc::PartitionedMemory> sbuf;  // quadrants q0..q3
  sc::PartitionedMemory psum;
  sc::AddressRouter router_;
  sc::SemaphoreBank sems_;
  sc::EngineRegisterFile regs_;
  sc_core::sc_vector<sc::InstructionQueue> queues;
  sc_core::sc_vector<sc::Sequencer> seqs_;
  tlm_utils::simple_initiator_socket<TpbCore> dbg_socket;
  std::unique_ptr<sc::TileFileTarget> tiles;  // region 2, over tile_file()

 private:
  bool elaborated_ = false;
  bool ran_ = false;
  std::function<void(const sc::RetireRecord&)> retire_sink_;
  std::uint64_t retired_ = 0;
  // Retires held until the global time has passed them (a fault on another
  // engine may still come before them: then they are dropped) and delivered
  // in time order (end, engine, index): no engine can retire before the
  // global time, so the sink sees every record in that order whatever the
  // quantum or the order the engine threads ran in. Their bundles are kept
  // only when a retire sink wants them.
  struct PendingRetire {
    sc::RetireRecord r;
    std::vector<sc::BundleRecord> bundles;
    bool operator>(const PendingRetire& o) const {
      return std::tie(r.end_ps, r.engine, r.index) > std::tie(o.r.end_ps, o.r.engine, o.r.index);
    }
  };
  std::priority_queue<PendingRetire, std::vector<PendingRetire>, std::greater<PendingRetire>>
      pending_;
  void deliver(const PendingRetire& p);
  // Delivers the held retires that end before `before` (all with kForever),
  // or, with `drop_after`, every one ending at or before it and drops the rest.
  void commit_retires(std::uint64_t before);
  void commit_retires_at_stop(std::uint64_t stop_ps);
  RunResult last_;
  std::vector<trace::SignalId> sem_sigs_;
  std::vector<trace::NameId> sem_names_;
  trace::TrackId sem_track_;
  // Bytes moved to and from each memory (SBUF quadrants, PSUM), over every
  // engine's MemPort counters.
  void memory_bytes(std::uint64_t rd[kNumMems], std::uint64_t wr[kNumMems]) const;
  trace::SignalId mem_read_sig_[kNumMems], mem_write_sig_[kNumMems];
  std::uint64_t mem_read_last_[kNumMems] = {}, mem_write_last_[kNumMems] = {};
  // SFU sticky flags (inexact, saturated, wrapped) and fault in the traces.
  void trace_sfu_flags(std::uint64_t ps);
  trace::SignalId sfu_flag_sig_[3], sfu_fault_sig_;
  trace::TrackId sfu_flag_track_;
  std::uint32_t sfu_flags_last_ = 0;
  fw::sfu::TileFile* tile_file_ = nullptr;  // in the SFU sequencer's engine state
};

}  // namespace tpb::platform
