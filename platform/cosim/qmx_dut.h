// The device under test of the QuantizeMX co-simulation, seen only through
// its pins (platform/cosim/rtl/README.md, docs/COSIM.md): the transactor owns
// one QmxPins per block lane (a block row of 8 partitions) and a
// QmxDutLibrary makes the module that binds them. As for the dequant lane
// (dut.h), a QmxDutLibrary comes from a Verilated build (rtl_qmx_dut.cpp: ours,
// a mutant, or a user's sources named by TPBSIM_COSIM_QMX_RTL) and registers
// itself when its object file is linked into the program.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

namespace tpb::cosim {

// The documented ports of one block lane, as SystemC signals.
struct QmxPins {
  explicit QmxPins(const std::string& prefix);
  sc_core::sc_signal<bool> clk, rst_n;
  sc_core::sc_signal<std::uint32_t> in_dtype, out_dtype;  // [3:0]: DTYPE ordinals
  sc_core::sc_signal<bool> emax_alt;
  sc_core::sc_signal<bool> in_valid, in_ready;
  sc_core::sc_signal<sc_dt::sc_bv<1024>> in_data;  // element 4r+k at [32*(4r+k) +: 32]
  sc_core::sc_signal<bool> out_valid, out_ready;
  sc_core::sc_signal<std::uint32_t> out_scale;     // [7:0]
  sc_core::sc_signal<sc_dt::sc_bv<256>> out_data;  // word r at [32r +: 32]
};

class QmxDutLibrary {
 public:
  virtual ~QmxDutLibrary() = default;
  // The RTL's top module (and variant, for a test mutant).
  virtual std::string name() const = 0;
  // Before the first create(): every lane made after this is traced.
  virtual void enable_trace() = 0;
  // A new DUT module named `name`, its ports bound to `pins` (elaboration).
  virtual std::unique_ptr<sc_core::sc_module> create(const char* name, QmxPins& pins) = 0;
  // After elaboration: the waves of every traced lane (of every co-simulated
  // block kind) into one VCD; closed by close_trace() (or at exit).
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  // After close_trace(): "" or the first write error of the waves.
  virtual std::string trace_error() const { return ""; }
};

// The QuantizeMX DUT linked into this program, or nullptr.
QmxDutLibrary* linked_qmx_dut();
// Called once by the DUT's object file at static initialisation.
void register_qmx_dut(QmxDutLibrary* lib);

}  // namespace tpb::cosim
