// Firmware-kernel stubs (SPEC §7): every kernel is a named worker at a VA made
// of VLIW bundles {name, VA, issue cycles, functional step}. The sequencer
// enters a trampoline by the kernel_info funcVA, then runs bundles in order;
// a bundle issues `trips` times (a loop bundle: trip count derived from the
// operand shapes) and its step performs the bundle's functional effect once
// (a loop's step transforms the whole stream). A step may call another worker
// by returning its VA (the trampoline's callx8, decode's dispatch).
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/sc/engine/timing_config.h"

namespace tpb::fw {

// A kernel-level fault (address error, runtime shape check, unsupported
// operand). The message says what is wrong; the sequencer prefixes engine,
// instruction index and opcode.
class KernelFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Bundle;

// What a kernel sees of its engine: the instruction, registers, timing, and
// memory. Implemented by the sequencer (and by test doubles).
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const isa::RawInst& inst() const = 0;
  virtual isa::Arch arch() const = 0;
  virtual isa::Engine engine() const = 0;
  virtual std::uint32_t reg(unsigned r) const = 0;
  virtual const sc::TimingConfig& timing() const = 0;
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
  // Per-instruction scratch shared by the bundles of one instruction.
  std::any& scratch() { return scratch_; }

  // Observer hooks: the sequencer advances time and traces here.
  virtual void begin_bundle(const Bundle& b, std::uint64_t trips, std::uint32_t cycles) = 0;
  virtual void end_bundle(const Bundle& b) = 0;

 private:
  std::any scratch_;
};

struct Bundle {
  std::string name;  // unique, "pool.<worker>.<bundle>"; timing overrides use it
  std::uint32_t va = 0;
  std::uint32_t issue_cycles = 1;  // per trip
  // Trip count (null: 1). Evaluated before the step runs.
  std::function<std::uint64_t(KernelContext&)> trips;
  // Functional effect (null: none). Returns the VA of a worker to call next
  // (0: none); the call returns to the next bundle.
  std::function<std::uint32_t(KernelContext&)> step;
};

struct Kernel {
  std::string name;  // e.g. "decode_tensor_dequantize"
  std::uint32_t va = 0;
  std::vector<Bundle> bundles;
};

class KernelRegistry {
 public:
  // Throws std::invalid_argument on a duplicate VA.
  void add(Kernel k);
  const Kernel* find(std::uint32_t va) const;
  const std::map<std::uint32_t, Kernel>& kernels() const { return kernels_; }

  // Every bundle name with its stub issue cycles (for the effective profile).
  std::map<std::string, std::uint32_t> bundle_cycles() const;

  // Runs the worker at `va` and every worker it calls. Throws KernelFault
  // for a VA with no worker ("not modelled") or a call depth past 8.
  void execute(std::uint32_t va, KernelContext& ctx, unsigned depth = 0) const;

 private:
  std::map<std::uint32_t, Kernel> kernels_;
};

// The registry of every firmware stub this model implements.
const KernelRegistry& builtin_kernels();

}  // namespace tpb::fw
