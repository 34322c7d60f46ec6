// The Verilated QuantizeMX-block DUT of one build variant
// (platform/cosim/qmx_dut.h): compiled against that variant's generated
// header, whose class is always Vqmx (verilator --prefix Vqmx), and linked
// into the program as an object file so its registration runs.
#include "platform/cosim/rtl_trace.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vqmx.h"
#pragma GCC diagnostic pop

#include <memory>
#include <string>

#include "platform/cosim/qmx_dut.h"

#ifndef TPBSIM_QMX_DUT_NAME
#error "TPBSIM_QMX_DUT_NAME (the RTL top module and variant) must be defined by the build"
#endif

namespace tpb::cosim {
namespace {

class VerilatedQmxDut : public QmxDutLibrary {
 public:
  std::string name() const override { return TPBSIM_QMX_DUT_NAME; }
  void enable_trace() override {
    Verilated::traceEverOn(true);
    trace_ = true;
  }
  std::unique_ptr<sc_core::sc_module> create(const char* name, QmxPins& p) override {
    auto m = std::make_unique<Vqmx>(name);
    m->clk(p.clk);
    m->rst_n(p.rst_n);
    m->in_dtype(p.in_dtype);
    m->out_dtype(p.out_dtype);
    m->emax_alt(p.emax_alt);
    m->in_valid(p.in_valid);
    m->in_ready(p.in_ready);
    m->in_data(p.in_data);
    m->out_valid(p.out_valid);
    m->out_ready(p.out_ready);
    m->out_scale(p.out_scale);
    m->out_data(p.out_data);
    if (trace_) rtl_vcd().add([d = m.get()](VerilatedVcdC* vcd) { d->trace(vcd, 99); });
    return m;
  }
  void open_trace(const std::string& path) override { rtl_vcd().open(path); }
  void close_trace() override { rtl_vcd().close(); }
  std::string trace_error() const override { return rtl_vcd().error(); }

 private:
  bool trace_ = false;
};

const bool registered = [] {
  static VerilatedQmxDut lib;
  register_qmx_dut(&lib);
  return true;
}();

}  // namespace
}  // namespace tpb::cosim
