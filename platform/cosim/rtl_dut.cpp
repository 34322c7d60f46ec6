// The Verilated DUT of one co-simulated block in one RTL variant, and the
// block's place on the list of linked blocks (block_cosim.h). Compiled once
// per block and variant (platform/cosim/CMakeLists.txt, tpbsim_block_dut)
// against the variant's generated header TPBSIM_VERILATED_HEADER (class
// TPBSIM_VERILATED) and the block's driver TPBSIM_BLOCK_HEADER (class
// TPBSIM_BLOCK, whose Pins bind the model's ports), and linked into the
// program as an object file so that its registration runs.
#include "platform/cosim/rtl_trace.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include TPBSIM_VERILATED_HEADER
#pragma GCC diagnostic pop

#include <memory>
#include <string>

#include TPBSIM_BLOCK_HEADER

#if !defined(TPBSIM_DUT_NAME) || !defined(TPBSIM_BLOCK) || !defined(TPBSIM_VERILATED)
#error "TPBSIM_DUT_NAME, TPBSIM_BLOCK and TPBSIM_VERILATED must be defined by the build"
#endif

namespace tpb::cosim {
namespace {

using Block = TPBSIM_BLOCK;

class VerilatedDut : public DutLibrary<Block::Pins> {
 public:
  std::string name() const override { return TPBSIM_DUT_NAME; }
  void enable_trace() override {
    Verilated::traceEverOn(true);
    trace_ = true;
  }
  std::unique_ptr<sc_core::sc_module> make(const char* name, Block::Pins& pins) override {
    auto m = std::make_unique<TPBSIM_VERILATED>(name);
    pins.bind(*m);
    if (trace_) rtl_vcd().add([d = m.get()](VerilatedVcdC* vcd) { d->trace(vcd, 99); });
    return m;
  }
  void open_trace(const std::string& path) override { rtl_vcd().open(path); }
  void close_trace() override { rtl_vcd().close(); }
  std::string trace_error() const override { return rtl_vcd().error(); }

 private:
  bool trace_ = false;
};

BlockCosim* attach_block(RtlLibrary& rtl, sc::Sequencer& engine, const BlockConfig& cfg) {
  return new Block(Block::kKind, rtl, engine, cfg);
}

const bool registered = [] {
  static VerilatedDut lib;
  link_block({Block::kKind, Block::kEngine, &lib, &attach_block});
  return true;
}();

}  // namespace
}  // namespace tpb::cosim
