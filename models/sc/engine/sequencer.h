// One engine's instruction sequencer (SPEC §7): an SC_THREAD with a quantum
// keeper (riscv-vp style) that fetches 64-byte words from the engine's queue
// through its MemPort, waits on the semaphore condition, runs the
// generation's validity predicates, dispatches the opcode through the
// engine's kernel_info table to a firmware stub, retires and updates the
// semaphores. Timing: overhead + bundle cycles x trips at the engine clock,
// plus the memory delays the accesses annotate.
//
// The sequencer dispatches; what watches it attaches as a SequencerObserver
// (the stats collector, the tracer, the core's retire ordering), and the
// instruction fetch that refills its queue is a piece of its own
// (InstructionFetch). It runs program after program: each run starts at
// RunControl::start() and ends when its queue is drained, at a fault or a
// watchdog's stop, or when the run is aborted while it waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

// After <systemc>: the tlm_utils headers need its declarations.
#include <tlm_utils/tlm_quantumkeeper.h>

#include <memory>

#include "firmware_stubs/kernel.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/sc/engine/dma_executor.h"
#include "models/sc/engine/instruction_fetch.h"
#include "models/sc/engine/kernel_info_table.h"
#include "models/sc/engine/run_control.h"
#include "models/sc/engine/sequencer_observer.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/mem_port.h"
#include "models/sc/memory/semaphore_bank.h"

namespace tpb::sc {

// What a sequencer uses that the core owns (fixed for its life).
struct SequencerEnv {
  const fw::KernelRegistry* kernels = nullptr;
  SemaphoreBank* sems = nullptr;
  EngineRegisterFile* regs = nullptr;
  InstructionQueue* queue = nullptr;  // the engine's ring; the fetch refills it
  RunControl* control = nullptr;
  // A DMA queue's HBM bandwidth (the core's HBM BandwidthShare); unused by
  // the compute engines.
  BandwidthShare* hbm = nullptr;
};

// What a core configuration sets (SequencerEnv's pointers stay valid until
// the next configure()).
struct SequencerConfig {
  isa::Arch arch = isa::Arch::Mariana;
  const TimingConfig* timing = nullptr;
  const fw::BundleCosts* costs = nullptr;  // kernels->resolve_costs(*timing)
  KernelInfoTable table;
};

class Sequencer : public sc_core::sc_module {
 public:
  MemPort port;  // bind port.socket to the router's target_socket

  Sequencer(sc_core::sc_module_name name, isa::Engine engine, SequencerEnv env,
            SequencerConfig cfg);
  ~Sequencer() override;

  // A new configuration (between runs): generation, timing, kernel_info.
  void configure(SequencerConfig cfg);
  isa::Engine engine() const { return engine_; }
  const KernelInfoTable& kernel_info() const { return cfg_.table; }
  // State the engine's kernels keep across instructions (fw::EngineState);
  // the platform sets per-engine options here before the run.
  fw::EngineState& engine_state() { return state_; }

  // Timing-only runs (SPEC §13, fw::KernelContext::timing_only): set
  // between runs; the port moves no bytes through DMI while it is on.
  void set_timing_only(bool on) {
    timing_only_ = on;
    port.set_timing_only(on);
  }
  bool timing_only() const { return timing_only_; }

  // Observers, called in attachment order. Attach between runs.
  void add_observer(SequencerObserver* o);
  void remove_observer(SequencerObserver* o);

  // Co-simulation (SPEC §9 --cosim): called in this engine's thread after
  // each instruction's kernel ran, with the engine's time synced to the
  // kernel's clock (quantum keeper), before the instruction retires. It may
  // wait(): the time it waits is the instruction's (a slower RTL stretches
  // it). A fw::KernelFault it throws faults the instruction. Set before the
  // run; unset, nothing is synced.
  void set_retire_gate(std::function<void()> gate) { retire_gate_ = std::move(gate); }

  // State of the current (or last) run, for deadlock reports.
  bool done() const { return done_; }  // its queue drained
  bool blocked() const { return blocked_; }
  // Stopped by a watchdog (RunControl::proceed) before retiring index().
  bool stopped() const { return stopped_; }
  // The opcode of the pending instruction index() (0 before its fetch).
  std::uint8_t opcode() const { return opcode_; }
  std::size_t index() const { return index_; }
  const isa::Events& blocked_on() const { return events_; }

 private:
  class Context;
  void thread();       // SC_THREAD: one run per RunControl::start()
  void run_program();  // the queue, to its end (throws RunControl::Abort)
  bool execute_one();  // false: the run ends here (fault or watchdog)
  // A DMA queue's dispatch (SPEC §10): the descriptor straight to the DMA
  // executor, no kernel_info. false: it faulted.
  bool execute_dma();
  // Syncs the quantum keeper; leaves (RunControl::Abort) when the run is aborted.
  void sync();
  void fault(std::string kind, std::string what, std::vector<std::string> predicates = {});
  std::string where() const;  // "pool instruction 3 (opcode 0x7b tensor_dequantize)"
  // The engine's time from the core's origin: the simulation's time at the
  // thread's last wait, the quantum keeper's local time and pending_ps_.
  std::uint64_t now_ps() const;
  void refresh_stamp();  // after every wait of the engine's thread
  // The compute time add_cycles() kept as an integer, onto the quantum
  // keeper: called before anything reads or passes on its local time.
  void flush_time() {
    if (pending_ps_ != 0) {
      qk_.inc(ps_time(pending_ps_));
      pending_ps_ = 0;
    }
  }
  // Compute cycles of the current instruction: advances local time by the
  // rounded difference so the instruction total is round(cycles / clock).
  void add_cycles(std::uint64_t cycles);
  // Pipelined streams (SPEC §8): a run of consecutive Bundle::stream bundles
  // is one pipeline; its memory accesses go to partition lanes (MemPort
  // streams) and, when it closes, it costs fill + max(compute, slowest read
  // lane, slowest write lane) in all, its compute having been charged as its
  // bundles issued.
  void open_pipeline();
  void close_pipeline();
  // A watchdog stop at RunControl::stop_ps(): the instruction is not retired.
  void watchdog_stop();

  template <typename F>
  void notify(F&& f) {
    for (SequencerObserver* o : observers_) f(*o);
  }

  isa::Engine engine_;
  SequencerEnv env_;
  SequencerConfig cfg_;
  fw::EngineState state_;
  std::vector<SequencerObserver*> observers_;
  // Those of observers_ that want on_bundle / on_bundle_end, in its order.
  std::vector<SequencerObserver*> bundle_observers_, bundle_end_observers_;
  InstructionFetch fetch_;
  std::unique_ptr<DmaExecutor> dma_;  // a DMA queue's executor (configure())
  std::function<void()> retire_gate_;
  tlm_utils::tlm_quantumkeeper qk_;
  std::vector<BundleRecord> bundles_;  // of the current instruction
  StreamLanes lanes_;
  bool timing_only_ = false;
  bool pipeline_open_ = false;
  std::uint64_t pipeline_compute_ = 0;  // engine cycles issued inside the pipeline
  sc_core::sc_time fill_credit_;        // overhead the first pipeline's fill hides under
  sc_core::sc_time overhead_time_;      // the engine's fixed per-instruction overhead

  bool done_ = false, blocked_ = false, stopped_ = false;
  std::size_t index_ = 0;
  isa::RawInst raw_{};
  isa::Events events_{};
  std::uint8_t opcode_ = 0;
  std::uint64_t inst_cycles_ = 0;  // compute cycles of the current instruction
  timing::ClockDivider clock_;     // this engine's clock (configure()), for cycles_to_ps
  std::uint64_t inst_ps_ = 0;      // their duration, rounded once (cycles_to_ps)
  // Compute time not yet on the quantum keeper (flush_time()): a bundle's
  // cycles are an integer add, not an sc_time built per bundle.
  std::uint64_t pending_ps_ = 0;
  std::uint64_t stamp_ps_ = 0;    // sc_time_stamp() from the origin, at the last wait
  std::unique_ptr<Context> ctx_;  // the kernels' view, one for the module's life
};

}  // namespace tpb::sc
