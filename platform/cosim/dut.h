// The device under test of the TensorDequantize co-simulation, seen only
// through its pins (platform/cosim/rtl/README.md, docs/COSIM.md): the
// transactor owns one DutPins per partition lane and a DutLibrary makes the
// module that binds them. A DutLibrary comes from a Verilated build
// (rtl_dut.cpp, compiled once per RTL variant: ours, a mutant, or a user's
// sources named by the CMake cache variable TPBSIM_COSIM_RTL) and registers
// itself when its object file is linked into the program.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

namespace tpb::cosim {

// The documented ports of one lane, as SystemC signals.
struct DutPins {
  explicit DutPins(const std::string& prefix);
  sc_core::sc_signal<bool> clk, rst_n;
  sc_core::sc_signal<std::uint32_t> fmt, group;  // fmt[2:0], group[3:0]
  sc_core::sc_signal<bool> in_valid, in_ready;
  sc_core::sc_signal<std::uint32_t> in_data;
  sc_core::sc_signal<bool> out_valid, out_ready;
  sc_core::sc_signal<std::uint32_t> out_data;
};

class DutLibrary {
 public:
  virtual ~DutLibrary() = default;
  // The RTL's top module (and variant, for a test mutant).
  virtual std::string name() const = 0;
  // Before the first create(): every lane made after this is traced.
  virtual void enable_trace() = 0;
  // A new DUT module named `name`, its ports bound to `pins` (elaboration).
  virtual std::unique_ptr<sc_core::sc_module> create(const char* name, DutPins& pins) = 0;
  // After elaboration: the waves of every traced lane into one VCD; closed
  // by close_trace() (or at exit).
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  // After close_trace(): "" or the first write error of the waves ("No
  // space left on device"); the run then reports the file not written.
  virtual std::string trace_error() const { return ""; }
};

// The DUT linked into this program, or nullptr (built without Verilator).
DutLibrary* linked_dut();
// Called once by the DUT's object file at static initialisation.
void register_dut(DutLibrary* lib);

}  // namespace tpb::cosim
