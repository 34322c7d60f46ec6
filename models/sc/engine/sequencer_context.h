// The kernels' view of one engine (fw::KernelContext, SPEC §7): what a
// kernel running on a Sequencer reads and writes (its instruction, the
// engine's registers and state, memory through the engine's MemPort, with
// the race check's record and the interlock's footprint) and how its
// bundles move the engine's clock (a streaming bundle opens the engine's
// pipeline; a bundle past a watchdog's stop throws WatchdogStop). Private to
// the Sequencer (sequencer.cpp and sequencer_context.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/kernel/kernel.h"
#include "models/sc/engine/sequencer.h"

namespace tpb::sc {

// Thrown by a bundle that would begin after the watchdog's stop time; caught
// by Sequencer::execute (not a fault).
struct WatchdogStop {};

class Sequencer::Context : public fw::KernelContext {
 public:
  explicit Context(Sequencer& s) : s_(s) {}
  // A new instruction: no streaming bundle open, no scratch set (its
  // storage kept: KernelContext::set_scratch).
  void begin_instruction() {
    deferred_ = 0;
    new_instruction();
  }
  const isa::RawInst& inst() const override { return s_.raw_; }
  isa::Arch arch() const override { return s_.cfg_.arch; }
  isa::Queue engine() const override { return s_.engine_; }
  std::uint32_t reg(unsigned r) const override { return s_.env_.regs->get(s_.engine_, r); }
  const timing::TimingConfig& timing() const override { return *s_.cfg_.timing; }
  fw::EngineState& engine_state() override { return s_.state_; }
  // Absolute simulated time: a co-simulation harness compares it with
  // sc_time_stamp().
  std::uint64_t now_ps() const override { return to_ps(s_.env_.control->origin()) + s_.now_ps(); }
  void count(const char* name, std::uint64_t n) override {
    s_.notify([&](SequencerObserver& o) { o.on_count(name, n); });
  }
  bool timing_only() const override { return s_.timing_only_; }

  void read(std::uint64_t addr, void* dst, std::size_t len) override {
    access(addr, dst, len, false);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) override {
    access(addr, const_cast<void*>(src), len, true);
  }
  std::uint8_t* direct(std::uint64_t addr, std::size_t len, bool for_write) override;
  void touch(std::uint64_t addr, std::size_t len, bool write) override { note(addr, len, write); }
  void register_addressed() const override { s_.dynamic_ = true; }

  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t cycles) override;
  void end_bundle(const fw::Bundle&) override;

 private:
  // An access of the instruction: the race check's record (SPEC §14) and its
  // footprint, for the engine's interlock (SPEC §8).
  void note(std::uint64_t addr, std::size_t len, bool is_write);
  void access(std::uint64_t addr, void* data, std::size_t len, bool is_write);

  Sequencer& s_;
  std::uint64_t deferred_ = 0;  // compute cycles of the open streaming bundle
};

}  // namespace tpb::sc
