// What a sequencer tells the pieces attached to it (SPEC §7): the stats
// collector and the tracer observe an engine's instructions the way a memory
// target's observers see its operations, instead of living inside the
// dispatch loop. Times are picoseconds from the core's origin (RunControl).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/kernel/kernel.h"

namespace tpb::sc {

// One bundle of a retired instruction, in execution order.
struct BundleRecord {
  const fw::Bundle* bundle;  // name, VA (owned by the kernel registry)
  std::uint64_t start_ps;    // when it issued
  std::uint64_t end_ps;      // when it ended
  std::uint64_t trips;
  std::uint32_t cycles;  // issue cycles per trip (the resolved profile cost)
};

// What a retire sink receives for every retired instruction (structured:
// a scoreboard or a co-simulation harness reads fields, not text).
struct RetireRecord {
  isa::Queue engine;
  std::size_t index;  // in the engine's instruction stream
  std::uint8_t opcode;
  std::uint64_t start_ps;       // issue: after fetch, the semaphore wait and the interlock
  std::uint64_t end_ps;         // completion (retire): results in memory, semaphore updated
  const BundleRecord* bundles;  // num_bundles records, valid during the call
  std::size_t num_bundles;
  std::uint64_t fetch_ps = 0;    // when its fetch began
  std::uint64_t fetched_ps = 0;  // when its fetch ended (its semaphore wait began)
  unsigned core = 0;             // its core in a device of several (SPEC §15)
};

// An instruction as it issues (after its fetch, its semaphore wait and the
// engine's pipeline let it start).
struct IssueEvent {
  isa::Queue engine;
  std::uint64_t index;
  std::uint8_t opcode;
  const isa::RawInst* raw;  // valid during the call
  std::uint64_t t_ps;
  // When it will complete (its retire), known at issue on a compute engine;
  // 0 for a DMA transfer, whose completion the DMA engines decide.
  std::uint64_t end_ps = 0;
};

enum class StallKind : std::uint8_t {
  Fetch,      // the word had not landed in the queue's ring
  Semaphore,  // the EVENTS wait
  Memory,     // a pipeline's memory time beyond its compute
  Interlock,  // an earlier instruction of the engine still writes what it reads
};

class SequencerObserver {
 public:
  virtual ~SequencerObserver() = default;
  // A run begins on this engine (before its first fetch).
  virtual void on_run_start(std::uint64_t /*t_ps*/) {}
  // Instruction `index`'s fetch begins.
  virtual void on_fetch(std::uint64_t /*index*/, std::uint64_t /*t_ps*/) {}
  virtual void on_stall(StallKind /*kind*/, std::uint64_t /*cycles*/) {}
  virtual void on_issue(const IssueEvent& /*e*/) {}
  // Bundle `b` issues at t_ps for `trips` trips of `cycles` each; ended at
  // on_bundle_end (not called when a watchdog stops inside the bundle). An
  // instruction's bundles are told after its on_issue, in order.
  virtual void on_bundle(const fw::Bundle& /*b*/, std::uint64_t /*t_ps*/, std::uint64_t /*trips*/,
                         std::uint32_t /*cycles*/) {}
  virtual void on_bundle_end(const fw::Bundle& /*b*/, std::uint64_t /*t_ps*/) {}
  // A whole instruction's bundles at its issue (records valid during the
  // call), to an observer that wants bundle starts or ends: by default
  // on_bundle then on_bundle_end of each, in order; an observer may take
  // them in one pass.
  virtual void on_bundles(const BundleRecord* b, std::size_t n) {
    for (const BundleRecord* e = b + n; b != e; ++b) {
      on_bundle(*b->bundle, b->start_ps, b->trips, b->cycles);
      on_bundle_end(*b->bundle, b->end_ps);
    }
  }
  // Whether on_bundle / on_bundle_end are wanted at all (asked once, when
  // the observer is added): the sequencer calls only those observers that
  // do, ten bundles an instruction. An observer that overrides either hook
  // keeps the default.
  virtual bool wants_bundle_starts() const { return true; }
  virtual bool wants_bundle_ends() const { return true; }
  // A kernel's named counter (ctx.count()).
  virtual void on_count(const char* /*name*/, std::uint64_t /*n*/) {}
  // At the instruction's completion (its end_ps is the simulated time).
  virtual void on_retire(const RetireRecord& /*r*/) {}
  // The instruction in flight faulted at t_ps (the run ends).
  virtual void on_fault(std::uint64_t /*t_ps*/) {}
  // A watchdog stopped the engine at t_ps, before retiring its instruction.
  virtual void on_stop(std::uint64_t /*t_ps*/) {}
};

}  // namespace tpb::sc
