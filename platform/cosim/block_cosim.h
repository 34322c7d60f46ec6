// One co-simulated RTL block (SPEC §9 --cosim; docs/COSIM.md), as lowRISC
// Ibex's `Cosim` is one interface over its reference model: the model's
// engine hands each instruction's stream to a block driver through its
// firmware stub's observer seam, the driver feeds the RTL lanes pin by pin
// on the engine's clock and compares every output with the model's, and
// the engine's retire gate waits for the RTL, so an instruction retires at
// max(model end, RTL end) and faults (exit 2) on the first mismatch, a
// stalled DUT or an output the model did not produce.
//
// What is common to every block lives here: the handshake pins of a lane,
// the RTL library that makes a lane's DUT, the transactor (a thread on the
// RTL's own gated clock: reset, then per rising edge the handshakes taken,
// per falling edge the next inputs driven), the stall and extra-output
// checks, the retire gate and the stats. A block's driver
// (dequant_cosim.h, quantize_mx_cosim.h) adds what its lanes are fed and
// how an output is compared; linking its RTL (rtl_dut.cpp) puts it on the
// list of blocks that `cosim::attach` (cosim.h) attaches to a core.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "models/isa/address_map.h"
#include "models/sc/engine/sequencer.h"
#include "models/trace/stats.h"

namespace tpb::cosim {

// The handshake pins of one lane (platform/cosim/rtl/README.md): clk,
// rst_n (synchronous, active low), in_valid / in_ready, out_valid /
// out_ready. A block's pins add its configuration and data.
struct LanePins {
  explicit LanePins(std::string prefix) : prefix_(std::move(prefix)) {}
  virtual ~LanePins() = default;
  // A port's signal name: PREFIX_PORT ("lane41_out_data").
  std::string pin(const char* port) const { return prefix_ + "_" + port; }

 private:
  std::string prefix_;  // before the signals, which it names

 public:
  sc_core::sc_signal<bool> clk{pin("clk").c_str()}, rst_n{pin("rst_n").c_str()};
  sc_core::sc_signal<bool> in_valid{pin("in_valid").c_str()}, in_ready{pin("in_ready").c_str()};
  sc_core::sc_signal<bool> out_valid{pin("out_valid").c_str()}, out_ready{pin("out_ready").c_str()};
};

// A block's RTL linked into the program: a Verilated build (rtl_dut.cpp,
// compiled once per block and RTL variant: ours, a mutant, or a user's
// sources named in CMake's cache) or a behavioural SystemC model in a test.
class RtlLibrary {
 public:
  virtual ~RtlLibrary() = default;
  // The RTL's top module (and variant, for a test mutant).
  virtual std::string name() const = 0;
  // Before the first create(): every lane made after this is traced.
  virtual void enable_trace() = 0;
  // A new DUT module named `name`, its ports bound to `pins` (elaboration);
  // `pins` are the block's own (a LanePins of the block's type).
  virtual std::unique_ptr<sc_core::sc_module> create(const char* name, LanePins& pins) = 0;
  // After elaboration: the waves of every traced lane of every block into
  // one VCD (rtl_trace.h); closed by close_trace() (or at exit).
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  // After close_trace(): "" or the first write error of the waves ("No
  // space left on device"); the run then reports the file not written.
  virtual std::string trace_error() const { return ""; }
};

// An RtlLibrary of the block whose pins are `Pins`.
template <class Pins>
class DutLibrary : public RtlLibrary {
 public:
  virtual std::unique_ptr<sc_core::sc_module> make(const char* name, Pins& pins) = 0;
  std::unique_ptr<sc_core::sc_module> create(const char* name, LanePins& pins) final {
    return make(name, static_cast<Pins&>(pins));
  }
};

struct BlockConfig {
  std::uint32_t clock_mhz = 1200;  // the RTL clock (tpbsim run: its engine's clock)
  bool trace = false;              // the lanes' waves go into the RTL's VCD
  // Cycles without any handshake on any lane after which the DUT is
  // declared stalled (a fault naming the lane and its progress).
  std::uint64_t stall_cycles = 4096;
};

class BlockCosim : public sc_core::sc_module {
 public:
  ~BlockCosim() override;
  // This block's stats so far (its entry of the stats' "cosim" section).
  trace::CosimBlockStats stats() const { return stats_; }
  RtlLibrary& rtl() { return rtl_; }

 protected:
  // `kind` names the block in the stats ("dequant").
  BlockCosim(sc_core::sc_module_name name, RtlLibrary& rtl, const char* kind, BlockConfig cfg);

  // Elaboration, in the driver's constructor: `count` lanes named
  // PREFIX0, PREFIX1 ... with pins of the block's type, then the transactor
  // and `engine`'s retire gate.
  template <class Pins>
  void make_lanes(unsigned count, const char* prefix) {
    for (unsigned l = 0; l < count; ++l) {
      const std::string n = prefix + std::to_string(l);
      auto pins = std::make_unique<Pins>(n);
      add_lane(std::move(pins), n);
    }
  }
  void attach(sc::Sequencer& engine);
  template <class Pins>
  Pins& pins(unsigned lane) {
    return static_cast<Pins&>(*lanes_[lane].pins);
  }
  template <class Pins>
  const Pins& pins(unsigned lane) const {
    return static_cast<const Pins&>(*lanes_[lane].pins);
  }

  // The model's side (the engine's thread): a stream begins (`any`: it has
  // lanes to run; `start_ps`: the model's time of the step the RTL mirrors),
  // its lanes are handed their inputs and outputs (activate), then it is
  // handed over to the transactor.
  void begin_stream(bool any, std::uint64_t start_ps);
  void activate(unsigned lane, std::size_t inputs, std::size_t outputs);
  void hand_over();

  // What the driver adds, per lane of the stream:
  // while the lane is in reset: its configuration pins (and source count)
  virtual void configure(unsigned lane) = 0;
  // at a falling edge: the next input's data (`more`: one is left)
  virtual void drive(unsigned lane, std::size_t index, bool more) = 0;
  // an output taken at a rising edge, against the model's output `index`
  virtual void compare(unsigned lane, std::size_t index, std::uint64_t now_ps) = 0;
  // in messages, the words of the block: the lane ("partition 50", "block
  // row 3"), its progress after `in` inputs taken and `out` outputs given
  // ("3 of 40 source words and gave 5 of 80 output words"), an output offered
  // past the model's, number `out` ("the RTL offers block 4 but the model
  // quantized only 4")
  enum class LaneText { Where, Progress, ExtraOutput };
  using Count = std::size_t;
  virtual std::string lane_text(unsigned lane, LaneText what, Count in, Count out) const = 0;
  // After the RTL finished an instruction: throws fw::KernelFault when an
  // output differed.
  virtual void check_outputs() = 0;

  trace::CosimBlockStats stats_;
  BlockConfig cfg_;

 private:
  struct Lane {
    std::unique_ptr<LanePins> pins;
    std::unique_ptr<sc_core::sc_module> dut;
    std::size_t inputs = 0, outputs = 0;  // of the current stream
    std::size_t in_idx = 0, out_idx = 0;
    std::uint64_t first_in = 0, first_out = 0;  // cycle numbers, 0: not yet
    bool finished() const { return in_idx >= inputs && out_idx >= outputs; }
  };

  void add_lane(std::unique_ptr<LanePins> pins, const std::string& name);
  void transactor();  // SC_THREAD
  void run_stream();
  void reset_lanes();
  bool rising_edge(std::uint64_t k, bool& finished);
  void take(Lane& l, unsigned lane, std::uint64_t k, std::uint64_t now, bool& progress);
  void find_stall(std::uint64_t idle, std::uint64_t now);
  void falling_edge();
  void end_stream(std::uint64_t k);
  void retire_gate();
  sc_core::sc_time edge(std::uint64_t half_cycles) const;
  std::string lane_error(unsigned lane, std::uint64_t now, const std::string& what) const;

  RtlLibrary& rtl_;
  std::vector<Lane> lanes_;
  std::vector<unsigned> active_;  // lane indices of the current stream
  bool busy_ = false;             // a stream begun and not yet finished by the RTL
  bool pending_ = false;          // a stream handed over, not yet started
  bool has_stream_ = false;       // the current instruction began a stream
  sc_core::sc_time start_at_;
  sc_core::sc_event start_ev_, done_ev_;
  sc_core::sc_time t0_;                      // the current stream's first clock edge
  std::optional<std::string> stream_error_;  // a stall or an extra output
};

// A block whose RTL is linked into this program: what `cosim::attach`
// attaches to a core. Registered by the block's RTL build (rtl_dut.cpp) at
// static initialisation.
struct LinkedBlock {
  const char* kind;   // "dequant", "quantize_mx"
  isa::Queue engine;  // the engine whose instructions it co-simulates
  RtlLibrary* rtl;
  // A new driver of the block, attached to `engine`'s sequencer.
  BlockCosim* (*attach)(RtlLibrary& rtl, sc::Sequencer& engine, const BlockConfig& cfg);
};
void link_block(const LinkedBlock& b);
// Every linked block, in engine order.
const std::vector<LinkedBlock>& linked_blocks();
// The linked block of that kind, or null.
const LinkedBlock* linked_block(const std::string& kind);

}  // namespace tpb::cosim
