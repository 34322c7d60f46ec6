// One engine's instruction sequencer (SPEC §7, §8): an SC_THREAD with a
// quantum keeper (riscv-vp style) that runs each instruction through named
// steps — fetch (64 bytes from the engine's queue through its MemPort),
// wait (the semaphore condition), check (the generation's validity
// predicates), dispatch (the engine's kernel_info table to a firmware stub,
// or a DMA queue's descriptor to the DMA engines), execute (the kernel's
// bundles) and issue (its place in the engine's pipeline) — and completes
// it later: retire and semaphore update.
//
// Pipelined (SPEC §8, TIMING.md "Public cost model"): an instruction holds
// its engine's issue for its initiation interval (II) and completes at its
// latency; the engine issues the next one after the II. The sequencer runs
// the kernel from the instruction's start (the whole latency, so its memory
// accesses happen at their times), then moves the thread back to the start
// for the next fetch; timing::IssuePipeline decides the start (units,
// interlock) and the in-order completion. A completion is delivered at its
// time by an SC_METHOD (retire to the observers, then the semaphore
// update), whatever the thread is doing by then. A DMA queue issues a
// descriptor to the core's DmaEngines and goes on; the engines complete it.
//
// The sequencer dispatches; what watches it attaches as a SequencerObserver
// (the stats collector, the tracer, the core's retire ordering). Its roles
// have files of their own: the instruction fetch that refills its queue
// (InstructionFetch, instruction_fetch.h), the kernels' view of the engine
// (Context, sequencer_context.h), a DMA queue's dispatch and completions
// (DmaQueue, dma_queue.h) and the engine's time (EngineClock,
// engine_clock.h); step() runs an instruction through them. It runs program after program: each run
// starts at RunControl::start() and ends when its queue is drained and every instruction completed,
// at a fault or a watchdog's stop, or when the run is aborted while it waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/kernel/kernel.h"
#include "models/sc/engine/dma_engines.h"
#include "models/sc/engine/engine_clock.h"
#include "models/sc/engine/instruction_fetch.h"
#include "models/sc/engine/kernel_info_table.h"
#include "models/sc/engine/run_control.h"
#include "models/sc/engine/sequencer_observer.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/mem_port.h"
#include "models/sc/memory/semaphore_bank.h"
#include "models/sc/memory/zeroed_storage.h"
#include "models/timing/access_pattern.h"
#include "models/timing/issue_pipeline.h"

namespace tpb::race {
class Detector;
}

namespace tpb::sc {

// What a sequencer uses that the core owns (fixed for its life).
struct SequencerEnv {
  const fw::KernelRegistry* kernels = nullptr;
  SemaphoreBank* sems = nullptr;
  EngineRegisterFile* regs = nullptr;
  InstructionQueue* queue = nullptr;  // the engine's ring; the fetch refills it
  RunControl* control = nullptr;
  // A DMA queue's engines (the core's); unused by the compute engines.
  DmaEngines* dma = nullptr;
};

// What a core configuration sets (SequencerEnv's pointers stay valid until
// the next configure()).
struct SequencerConfig {
  isa::Arch arch = isa::Arch::Mariana;
  const timing::TimingConfig* timing = nullptr;
  const fw::BundleCosts* costs = nullptr;  // kernels->resolve_costs(*timing)
  // The HBM bytes this core reaches: its device's (SPEC §15), the cores x
  // the profile's per-core hbm.bytes.
  std::uint64_t hbm_capacity = 0;
  KernelInfoTable table;
};

class Sequencer : public sc_core::sc_module {
 public:
  MemPort port;  // bind port.socket to the router's target_socket

  Sequencer(sc_core::sc_module_name name, isa::Queue engine, SequencerEnv env, SequencerConfig cfg);
  ~Sequencer() override;

  // A new configuration (between runs): generation, timing, kernel_info.
  void configure(SequencerConfig cfg);
  isa::Queue engine() const { return engine_; }
  const KernelInfoTable& kernel_info() const { return cfg_.table; }
  // State the engine's kernels keep across instructions (fw::EngineState);
  // the platform sets per-engine options here before the run.
  fw::EngineState& engine_state() { return state_; }
  // The queue's DMA client (the DMA engines call back through it).
  DmaEngines::Client* dma_client();

  // Timing-only runs (SPEC §13, fw::KernelContext::timing_only): set
  // between runs; the port moves no bytes through DMI while it is on.
  void set_timing_only(bool on) {
    timing_only_ = on;
    port.set_timing_only(on);
  }
  bool timing_only() const { return timing_only_; }

  // A DMA queue of a core of a device (SPEC §15): the device's semaphore
  // banks by core, which a descriptor's remote update (update_core) changes.
  // Null: a core outside a platform::Device. Between runs.
  // `targets`: the core a descriptor's `coreK:` names, by K (logical cores,
  // `--lnc 2`: K's core at this core's place in its pair); empty: core K.
  void set_device_semaphores(const std::vector<SemaphoreBank*>* banks,
                             std::vector<unsigned> targets = {});
  // The race check (SPEC §14): the detector this engine tells its
  // instructions, memory accesses and semaphore operations, as core
  // `core`'s (nullptr: none, nothing recorded). Set between runs.
  void set_race(race::Detector* d, unsigned core) {
    race_ = d;
    race_core_ = core;
  }

  // Observers, called in attachment order. Attach between runs.
  void add_observer(SequencerObserver* o);
  void remove_observer(SequencerObserver* o);

  // Co-simulation (SPEC §9 --cosim): called in this engine's thread after
  // each instruction's kernel ran, with the engine's time synced to the
  // kernel's end (quantum keeper), before the instruction completes. It may
  // wait(): the time it waits is the instruction's (a slower RTL stretches
  // it). A fw::KernelFault it throws faults the instruction. With a gate the
  // engine issues one instruction at a time (the II is the whole latency):
  // the RTL block is not pipelined across instructions. Unset, nothing is
  // synced.
  void set_retire_gate(std::function<void()> gate) { retire_gate_ = std::move(gate); }

  // State of the current (or last) run, for deadlock reports.
  bool done() const { return done_; }  // its queue drained, every instruction completed
  bool blocked() const { return blocked_; }
  // Stopped by a watchdog (RunControl::proceed) before retiring index().
  bool stopped() const { return stopped_; }
  // The opcode of the pending instruction index() (0 before its fetch).
  std::uint8_t opcode() const { return opcode_; }
  std::size_t index() const { return index_; }
  const isa::Events& blocked_on() const { return events_; }
  // A DMA queue's transfers submitted and not retired: indices [first, end).
  std::uint64_t dma_unretired_first() const;
  std::uint64_t dma_unretired_end() const;
  // Completions still to deliver (semaphore updates; DMA: transfers in flight).
  std::size_t in_flight() const;

 private:
  class Context;   // sequencer_context.h
  class DmaQueue;  // dma_queue.h
  // What happens at an instruction's completion: its semaphore update (a
  // compute engine's retire is told at its issue, stamped with the
  // completion) or, for a DMA transfer, its retire and update.
  struct Completion {
    std::uint64_t index = 0;
    std::uint8_t opcode = 0;
    isa::Events events{};
    std::uint64_t fetch_ps = 0, fetched_ps = 0, start_ps = 0, end_ps = 0;
    bool retired = false;      // told already (a compute engine's)
    unsigned update_core = 0;  // a DMA descriptor's: 1 + the core whose semaphore it updates
  };

  // The semaphore bank a completion updates: its own core's, or another's.
  SemaphoreBank& update_bank(unsigned update_core) const;
  void thread();       // SC_THREAD: one run per RunControl::start()
  void run_program();  // the queue, to its end (throws RunControl::Abort)
  bool step();         // instruction index_; false: the run ends here (fault or watchdog)
  // The named steps of step(); each false ends the run (it faulted or stopped).
  bool fetch();
  void wait_semaphore();
  bool check(std::optional<KernelInfoRecord>& record, bool& unknown_only);
  const fw::Kernel* dispatch(const std::optional<KernelInfoRecord>& record, bool unknown_only);
  bool execute(const fw::Kernel& worker);
  bool issue();
  // issue()'s steps: the co-simulation's retire gate at `at` (it may wait;
  // the latency and interval become the gated ones; false: it faulted), and
  // the issue and bundle observers told of [start, end) (bundles moved by
  // the interlock's shift).
  bool pass_retire_gate(std::uint64_t at, std::uint64_t start, std::uint64_t& latency,
                        std::uint64_t& ii);
  void tell_issue(std::uint64_t start, std::uint64_t end, std::uint64_t shift);
  // Completions (SC_METHOD on complete_ev_): delivers every one due now.
  void complete_due();
  void deliver(const Completion& c);
  // Waits until every issued instruction completed.
  void drain();

  // Syncs the quantum keeper; leaves (RunControl::Abort) when the run is aborted.
  void sync() { clock_.sync(); }
  // A fault of the instruction in flight: its earlier instructions complete
  // first (faults are precise), then the run ends at the fault.
  void fault(std::string kind, std::string what, std::vector<std::string> predicates = {});
  std::string where() const;  // "pool instruction 3 (opcode 0x7b tensor_dequantize)"
  // The engine's time (EngineClock): from the core's origin; to `t`; after
  // every wait of the engine's thread; the pending compute time onto the
  // quantum keeper; the current instruction's compute cycles.
  std::uint64_t now_ps() const { return clock_.now_ps(); }
  void set_now(std::uint64_t t) { clock_.set_now(t); }
  void refresh_stamp() { clock_.refresh_stamp(); }
  void flush_time() { clock_.flush(); }
  void add_cycles(std::uint64_t cycles) { clock_.add_cycles(cycles); }
  // Pipelined streams (SPEC §8): a run of consecutive Bundle::stream bundles
  // is one pipeline; its memory accesses go to partition lanes (MemPort
  // streams) and, when it closes, it costs fill + max(compute, slowest read
  // lane, slowest write lane) in all, its compute having been charged as its
  // bundles issued. Its max(...) holds the engine's issue; the fill does not.
  void open_pipeline();
  void close_pipeline();
  // The host ran out of memory for the instruction (HostSpaceError,
  // std::bad_alloc): the run ends with a fault of kind "host".
  void host_fault(const std::string& what);
  // A watchdog stop at RunControl::stop_ps(): the instruction is not retired.
  void watchdog_stop();
  // The issue unit of the instruction being dispatched (timing::IssuePipeline):
  // its opcode-table row's.
  unsigned issue_unit() const;

  template <typename F>
  void notify(F&& f) {
    for (SequencerObserver* o : observers_) f(*o);
  }

  isa::Queue engine_;
  SequencerEnv env_;
  SequencerConfig cfg_;
  fw::EngineState state_;
  std::vector<SequencerObserver*> observers_;
  // Those of observers_ that want on_bundle or on_bundle_end (told through
  // on_bundles), and those that want on_bundle_end, in its order.
  std::vector<SequencerObserver*> bundle_observers_, bundle_end_observers_;
  InstructionFetch fetch_;
  std::function<void()> retire_gate_;
  EngineClock clock_;                  // the engine's time
  std::vector<BundleRecord> bundles_;  // of the current instruction
  StreamLanes lanes_;
  timing::AccessPattern pattern_;  // the open pipeline's wide-stride accesses
  bool timing_only_ = false;
  bool pipeline_open_ = false;
  std::uint64_t pipeline_compute_ = 0;  // engine cycles issued inside the pipeline
  sc_core::sc_time fill_credit_;        // overhead the first pipeline's fill hides under
  std::uint64_t issue_overhead_ps_ = 0, min_ii_ps_ = 0;  // the profile's, at that clock
  std::uint64_t min_ii_dynamic_ps_ = 0;
  bool dynamic_ = false;  // the instruction has a register-addressed operand

  // The issue pipeline (SPEC §8).
  timing::IssuePipeline pipe_;
  timing::Footprint footprint_;        // of the instruction being executed
  bool psum_reads_exempt_ = false;     // the PE: PSUM accumulates near memory
  std::uint64_t issue_ps_ = 0;         // the current instruction's issue-bound time
  std::uint64_t stream_cycles_ = 0;    // its streams' length, engine cycles
  std::uint64_t exec_start_ps_ = 0;    // where its kernel ran from
  std::uint64_t gate_overlap_ps_ = 0;  // a retire gate held the thread this long (fetch())
  unsigned unit_ = 0;

  // Completions to deliver, in order of their time (a compute engine's in
  // program order; a DMA queue's as its transfers land).
  std::deque<Completion> completions_;
  sc_core::sc_event complete_ev_, drained_ev_;

  bool done_ = false, blocked_ = false, stopped_ = false;
  std::size_t index_ = 0;
  isa::RawInst raw_{};
  isa::Events events_{};
  std::uint8_t opcode_ = 0;
  std::uint64_t fetch_ps_ = 0, fetched_ps_ = 0;
  std::unique_ptr<Context> ctx_;   // the kernels' view, one for the module's life
  std::unique_ptr<DmaQueue> dma_;  // a DMA queue's role, one for the module's life
  race::Detector* race_ = nullptr;
  unsigned race_core_ = 0;
};

}  // namespace tpb::sc
