// The kernel interface (SPEC §7): what an engine runs. Every kernel is a
// named worker at a VA made of VLIW bundles {name, VA, issue cycles,
// functional step}. The sequencer
// enters a trampoline by the kernel_info funcVA, then runs bundles in order;
// a bundle issues `trips` times (a loop bundle: trip count derived from the
// operand shapes) and its step performs the bundle's functional effect once
// (a loop's step transforms the whole stream). A step may call another worker
// by returning its VA (the trampoline's callx8, decode's dispatch).
//
// Pure C++: no SystemC. The sequencer (models/sc) implements KernelContext
// and runs a KernelRegistry's workers; the kernels themselves are the
// firmware's (firmware_stubs/, fw::builtin_kernels()), above the sequencer,
// which knows only this interface. A test double implements KernelContext
// too, so kernels are unit-tested without a simulator.
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/timing/timing_profile.h"

namespace tpb::fw {

// A kernel-level fault (address error, runtime shape check, unsupported
// operand). The message says what is wrong; the sequencer prefixes engine,
// instruction index and opcode.
class KernelFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Bundle;

// State that lives as long as its engine, not one instruction: the PE's
// stationary weights, the SFU's tile file and rename map, per-engine options
// such as the DVE's MX emax mode. One object per type; a kernel defines its
// own state type and reaches it with ctx.engine_state().get<T>(). The
// platform may set an option before the run the same way.
class EngineState {
 public:
  // The engine's T, value-initialised on first use.
  template <typename T>
  T& get() {
    std::shared_ptr<void>& slot = slots_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>();
    return *static_cast<T*>(slot.get());
  }
  // The engine's T if it exists, else nullptr.
  template <typename T>
  const T* find() const {
    const auto it = slots_.find(std::type_index(typeid(T)));
    return it == slots_.end() ? nullptr : static_cast<const T*>(it->second.get());
  }
  void clear() { slots_.clear(); }

 private:
  std::unordered_map<std::type_index, std::shared_ptr<void>> slots_;
};

// What a kernel sees of its engine: the instruction, registers, timing, and
// memory. Implemented by the sequencer (and by test doubles).
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const isa::RawInst& inst() const = 0;
  virtual isa::Arch arch() const = 0;
  virtual isa::Queue engine() const = 0;
  virtual std::uint32_t reg(unsigned r) const = 0;
  virtual const timing::TimingConfig& timing() const = 0;
  // State kept for the lifetime of this engine (see EngineState).
  virtual EngineState& engine_state() = 0;
  // Timed accesses of [addr, addr+len) within one partition; throw KernelFault
  // on any TLM error. Use DMI when the platform grants it.
  virtual void read(std::uint64_t addr, void* dst, std::size_t len) = 0;
  virtual void write(std::uint64_t addr, const void* src, std::size_t len) = 0;
  // A pointer to [addr, addr+len) of one partition when the platform grants
  // DMI for it, charged and counted exactly as read()/write() of the same
  // bytes would be; nullptr when it does not (use read()/write()).
  virtual std::uint8_t* direct(std::uint64_t /*addr*/, std::size_t /*len*/, bool /*for_write*/) {
    return nullptr;
  }
  // An access a kernel makes without read() / write(): the SFU's tile file,
  // which TQUANT reads and writes in its engine state. Only reported (the
  // race check, SPEC §14, records it at its TLM address in region 2); it
  // moves nothing and costs nothing.
  virtual void touch(std::uint64_t /*addr*/, std::size_t /*len*/, bool /*write*/) {}
  // The engine's simulated time now in ps, local time ahead of the kernel's
  // clock included (a co-simulation observer starts its stream there).
  virtual std::uint64_t now_ps() const { return 0; }
  // Per-instruction scratch shared by the bundles of one instruction: the
  // decode bundle sets it, the later bundles find it (nullptr: not set in
  // this instruction, or another type). Every instruction starts with none
  // (new_instruction()); the storage is kept, so setting the same type again
  // allocates nothing.
  template <typename T>
  T& set_scratch(T value) {
    scratch_live_ = true;
    if (T* p = std::any_cast<T>(&scratch_)) {
      *p = std::move(value);
      return *p;
    }
    return scratch_.emplace<T>(std::move(value));
  }
  template <typename T>
  T* scratch() {
    return scratch_live_ ? std::any_cast<T>(&scratch_) : nullptr;
  }
  // An operand's address came from a register (ADDR_REG: a dynamic source
  // or destination, resolve_pattern / resolve_addr4 say so): the sequencer
  // holds the issue for the engine's MIN_II_DYNAMIC (TIMING.md [O]).
  virtual void register_addressed() const {}
  // Adds n to the engine's named counter in the stats ("macs" ...).
  virtual void count(const char* /*name*/, std::uint64_t /*n*/) {}
  // A timing-only run (SPEC §13): read() and write() move no bytes (they
  // are charged and counted as usual), and a kernel computes no values: it
  // makes the same accesses, in the same order, as in a full run, keeps the
  // state that decides later timing and faults (PE weights loaded and their
  // shape). TQUANT, whose data is the SFU's small tile file and whose flags
  // are traced, computes anyway.
  virtual bool timing_only() const { return false; }

  // Observer hooks: the sequencer advances time and traces here.
  virtual void begin_bundle(const Bundle& b, std::uint64_t trips, std::uint32_t cycles) = 0;
  virtual void end_bundle(const Bundle& b) = 0;

 protected:
  // A context that serves instruction after instruction calls this at the
  // start of each: the scratch is no longer set.
  void new_instruction() { scratch_live_ = false; }

 private:
  std::any scratch_;
  bool scratch_live_ = false;
};

struct Bundle {
  std::string name;  // unique, "pool.<worker>.<bundle>"; timing overrides use it
  std::uint32_t va = 0;
  std::uint32_t issue_cycles = 1;  // per trip
  // Trip count (null: 1). Evaluated before the step runs. Plain functions
  // (a lambda without captures converts): every bundle of every
  // instruction calls them, and a kernel's state is its context's.
  using TripsFn = std::uint64_t (*)(KernelContext&);
  using StepFn = std::uint32_t (*)(KernelContext&);
  TripsFn trips = nullptr;
  // Functional effect (null: none). Returns the VA of a worker to call next
  // (0: none); the call returns to the next bundle.
  StepFn step = nullptr;
  // A streaming loop bundle (SPEC §8): its step's memory accesses are the
  // read and write streams of a pipeline whose lanes are the partitions.
  // The sequencer charges it the slowest of compute (cycles x trips), the
  // slowest lane's reads and the slowest lane's writes, plus one memory
  // latency as the fill, instead of their sum.
  bool stream = false;
  std::uint32_t id = 0;  // index into BundleCosts, set by KernelRegistry::add
};

struct Kernel {
  std::string name;  // e.g. "decode_tensor_dequantize"
  std::uint32_t va = 0;
  std::vector<Bundle> bundles;
};

// The issue cycles of every bundle of a registry under one timing profile,
// indexed by Bundle::id: resolved once before a run, so executing a bundle
// looks nothing up by name (riscv-vp's cost table).
using BundleCosts = std::vector<std::uint32_t>;

class KernelRegistry {
 public:
  // Throws std::invalid_argument on a duplicate VA or bundle name.
  void add(Kernel k);
  const Kernel* find(std::uint32_t va) const;
  const std::map<std::uint32_t, Kernel>& kernels() const { return kernels_; }

  // The bundle with this id (Bundle::id), nullptr past the last.
  const Bundle* bundle(std::uint32_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }
  std::size_t num_bundles() const { return by_id_.size(); }

  // Every bundle name with its stub issue cycles (for the effective profile).
  std::map<std::string, std::uint32_t> bundle_cycles() const;

  // The cost of every bundle under `t`: its bundle_issue_cycles override, else
  // the stub's cycles. Throws timing::TimingError naming the key
  // "bundle_issue_cycles.NAME" when an override names no bundle.
  BundleCosts resolve_costs(const timing::TimingConfig& t) const;

  // Runs the worker at `va` and every worker it calls, each bundle costing
  // costs[bundle.id]. Throws KernelFault for a VA with no worker ("not
  // modelled") or a call depth past 8.
  void execute(std::uint32_t va, KernelContext& ctx, const BundleCosts& costs,
               unsigned depth = 0) const;
  // The same for a worker already found (find(va)).
  void execute(const Kernel& k, KernelContext& ctx, const BundleCosts& costs,
               unsigned depth = 0) const;

 private:
  std::map<std::uint32_t, Kernel> kernels_;
  std::map<std::string, std::uint32_t> ids_;  // bundle name -> id
  std::vector<std::uint32_t> stub_cycles_;    // by id
  std::vector<const Bundle*> by_id_;          // into kernels_ (stable nodes)
};

}  // namespace tpb::fw
