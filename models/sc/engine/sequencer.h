// One engine's instruction sequencer (SPEC §7): an SC_THREAD with a quantum
// keeper (riscv-vp style) that fetches 64-byte words from the engine's queue
// through its MemPort, waits on the semaphore condition, runs the
// generation's validity predicates, dispatches the opcode through the
// engine's kernel_info table to a firmware stub, retires and updates the
// semaphores. Timing: overhead + bundle cycles x trips at the engine clock,
// plus the memory delays the accesses annotate.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <systemc>
#include <tlm>

// After <systemc>: the tlm_utils headers need its declarations.
#include <tlm_utils/tlm_quantumkeeper.h>

#include "firmware_stubs/kernel.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/sc/engine/kernel_info_table.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/mem_port.h"
#include "models/sc/memory/semaphore_bank.h"
#include "models/trace/recorder.h"
#include "models/trace/stats.h"

namespace tpb::sc {

// Shared run state of one core: the start event the sequencers wait for and
// the first fault (a fault stops the simulation).
class RunControl {
 public:
  const sc_core::sc_event& start_event() const { return start_; }
  void start() { start_.notify(sc_core::SC_ZERO_TIME); }
  // Records the first fault (with the faulting engine's time) and calls
  // sc_stop(); later faults are ignored.
  void fault(const std::string& message, std::uint64_t time_ps);
  bool faulted() const { return faulted_; }
  const std::string& message() const { return message_; }
  std::uint64_t fault_time_ps() const { return fault_ps_; }

  // Watchdogs (`tpbsim run --max-sim-time / --max-wall-time`). The sequencers
  // ask proceed(t) before they record anything at simulated time t (an
  // instruction's start, a bundle, a retire); false means stop there, with
  // nothing recorded after stop_ps(). A sim limit stops every engine at that
  // time; a wall deadline, once past, lowers the stop time to the latest time
  // already recorded, so every engine stops at a common time and each trace
  // is complete up to it.
  enum class Watchdog { None, SimTime, WallTime };
  void set_sim_limit(std::uint64_t ps) { limit_ps_ = ps; }
  void set_wall_deadline(std::chrono::steady_clock::time_point t) {
    wall_deadline_ = t;
    has_wall_ = true;
  }
  bool proceed(std::uint64_t ps);
  Watchdog watchdog() const { return watchdog_; }
  std::uint64_t stop_ps() const { return limit_ps_; }

 private:
  sc_core::sc_event start_;
  bool faulted_ = false;
  std::string message_;
  std::uint64_t fault_ps_ = 0;
  std::uint64_t limit_ps_ = UINT64_MAX;
  std::uint64_t latest_ps_ = 0;  // latest time a sequencer recorded anything at
  bool has_wall_ = false;
  std::chrono::steady_clock::time_point wall_deadline_{};
  Watchdog watchdog_ = Watchdog::None;
};

// One bundle of a retired instruction, in execution order.
struct BundleRecord {
  const fw::Bundle* bundle;  // name, VA (owned by the kernel registry)
  std::uint64_t start_ps;    // when it issued
  std::uint64_t trips;
  std::uint32_t cycles;  // issue cycles per trip (the resolved profile cost)
};

// What the retire sink receives for every retired instruction (structured:
// a scoreboard or a co-simulation harness reads fields, not text).
struct RetireRecord {
  isa::Engine engine;
  std::size_t index;  // in the engine's instruction stream
  std::uint8_t opcode;
  std::uint64_t start_ps;       // issue: after fetch and the semaphore wait
  std::uint64_t end_ps;         // retire
  const BundleRecord* bundles;  // num_bundles records, valid during the call
  std::size_t num_bundles;
};

// Everything a sequencer uses that the core owns.
struct SequencerEnv {
  isa::Arch arch = isa::Arch::Mariana;
  const TimingConfig* timing = nullptr;
  const fw::KernelRegistry* kernels = nullptr;
  const fw::BundleCosts* costs = nullptr;  // kernels->resolve_costs(*timing)
  SemaphoreBank* sems = nullptr;
  EngineRegisterFile* regs = nullptr;
  InstructionQueue* queue = nullptr;  // the engine's ring; the sequencer refills it
  RunControl* control = nullptr;
  trace::Recorder* recorder = nullptr;  // may be null
  std::function<void(const RetireRecord&)> on_retire;
};

class Sequencer : public sc_core::sc_module {
 public:
  MemPort port;  // bind port.socket to the router's target_socket

  Sequencer(sc_core::sc_module_name name, isa::Engine engine, SequencerEnv env,
            KernelInfoTable table);

  isa::Engine engine() const { return engine_; }
  const KernelInfoTable& kernel_info() const { return table_; }
  // State the engine's kernels keep across instructions (fw::EngineState);
  // the platform sets per-engine options here before the run.
  fw::EngineState& engine_state() { return state_; }
  // Co-simulation (SPEC §9 --cosim): called in this engine's thread after
  // each instruction's kernel ran, with the engine's time synced to the
  // kernel's clock (quantum keeper), before the instruction retires. It may
  // wait(): the time it waits is the instruction's (a slower RTL stretches
  // it). A fw::KernelFault it throws faults the instruction. Set before the
  // run; unset, nothing is synced.
  void set_retire_gate(std::function<void()> gate) { retire_gate_ = std::move(gate); }
  // State for deadlock reports.
  bool done() const { return done_; }
  bool blocked() const { return blocked_; }
  // Stopped by a watchdog (RunControl::proceed) before retiring index().
  bool stopped() const { return stopped_; }
  // The opcode of the pending instruction index() (0 before its fetch).
  std::uint8_t opcode() const { return opcode_; }
  std::size_t index() const { return index_; }
  const isa::Events& blocked_on() const { return events_; }
  // Stats so far (bytes from the port's counters).
  trace::EngineStats stats() const;
  // After the run stopped at a fault at t_ps on any engine: takes back from
  // the stats (and the port's byte counters) what this engine retired after
  // t_ps, decoupled ahead of the fault, and counts its instruction in flight
  // as busy up to t_ps, so stats agree with the traces and retire lines,
  // which end at t_ps too.
  void stop_at(std::uint64_t t_ps);

 private:
  class Context;
  void run();
  bool execute_one();  // false: faulted
  void fault(const std::string& what);
  std::string where() const;  // "pool instruction 3 (opcode 0x7b tensor_dequantize)"
  sc_core::sc_time now() const;
  trace::Picos now_ps() const;
  // Compute cycles of the current instruction: advances local time by the
  // rounded difference so the instruction total is round(cycles / clock).
  void add_cycles(std::uint64_t cycles);
  void trace_begin();
  // Pipelined streams (SPEC §8): a run of consecutive Bundle::stream bundles
  // is one pipeline; its memory accesses go to partition lanes (MemPort
  // streams) and, when it closes, it costs fill + max(compute, slowest read
  // lane, slowest write lane) in all, its compute having been charged as its
  // bundles issued.
  void open_pipeline();
  void close_pipeline();
  void trace_end_open_slices();
  // Instruction fetch (SPEC §7, §9): waits until instruction index_ has
  // arrived in the ring, and after its fetch issues the refill of the slots
  // it freed (TimingConfig::fetch).
  void await_fetch();
  void issue_refill();
  void trace_end_open_slices(trace::Picos t);
  // A watchdog stop at RunControl::stop_ps(): open slices end there, the
  // instruction is not retired.
  void watchdog_stop();

  isa::Engine engine_;
  SequencerEnv env_;
  KernelInfoTable table_;
  fw::EngineState state_;
  std::function<void()> retire_gate_;
  tlm_utils::tlm_quantumkeeper qk_;
  std::vector<BundleRecord> bundles_;        // of the current instruction
  std::vector<std::uint64_t> bundle_trips_;  // by fw::Bundle::id, for stats
  StreamLanes lanes_;
  bool pipeline_open_ = false;
  std::uint64_t pipeline_compute_ = 0;    // engine cycles issued inside the pipeline
  sc_core::sc_time fill_credit_;          // overhead the first pipeline's fill hides under
  const sc_core::sc_time overhead_time_;  // the engine's fixed per-instruction overhead

  // The stats an instruction's retire added, kept until the global time has
  // passed its end (stop_at() may take them back until then).
  struct Totals {
    std::uint64_t instructions, busy, stall, memory_stall, fetch_stall;
    std::array<std::uint64_t, MemPort::kNumCounters> rd, wr;
  };
  struct Retired {
    std::uint64_t start_ps, end_ps;
    Totals before;
    std::size_t bundles;  // its (bundle id, trips) entries in retired_trips_
    std::vector<std::pair<std::string, std::uint64_t>> counts;
  };
  Totals totals() const;
  void record_retired(std::uint64_t start_ps, std::uint64_t end_ps);
  std::deque<Retired> retired_;
  std::deque<std::pair<std::uint32_t, std::uint64_t>> retired_trips_;
  Totals before_{};  // at the start of the current instruction
  std::vector<std::pair<std::string, std::uint64_t>> inst_counts_;  // ctx.count() of it
  std::uint64_t inst_fetch_ps_ = 0;  // when the current instruction's fetch began
  bool in_flight_ = false;           // an instruction is between fetch and retire

  // Refill batches in flight: words [start, end), and when the last is in the ring.
  struct Batch {
    std::uint64_t start, end;
    std::uint64_t ready_ps;
  };
  std::deque<Batch> batches_;
  std::uint64_t fetch_free_ps_ = 0;  // when the fetch DMA can start the next batch

  bool done_ = false, blocked_ = false, stopped_ = false;
  std::size_t index_ = 0;
  isa::RawInst raw_{};
  isa::Events events_{};
  std::uint8_t opcode_ = 0;
  std::uint64_t inst_cycles_ = 0;  // compute cycles of the current instruction
  unsigned open_slices_ = 0;
  trace::EngineStats stats_;

  // Trace handles.
  trace::SignalId sig_busy_, sig_opcode_, sig_pc_, sig_index_, sig_marker_, sig_hint_;
  trace::TrackId track_;
  std::vector<trace::NameId> op_names_;      // by opcode, interned on first use
  std::vector<trace::NameId> bundle_names_;  // by fw::Bundle::id
  fmt::memory_buffer args_;                  // args text of the slice being recorded
  bool marker_level_ = false;
};

}  // namespace tpb::sc
