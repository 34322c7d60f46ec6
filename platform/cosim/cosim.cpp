#include "platform/cosim/cosim.h"

#include <fmt/format.h>

namespace tpb::cosim {

Cosim::Cosim(sc_core::sc_module_name name, platform::TpbCore& core, const CosimOptions& opts)
    : sc_core::sc_module(name), opts_(opts) {
  if (DutLibrary* lib = linked_dut()) {
    DequantCosimConfig cc;
    cc.clock_mhz = core.config().timing.clock(isa::Engine::Pool);
    cc.vcd = opts.vcd;
    dequant_ = new DequantCosim("dequant", *lib, core.sequencer(isa::Engine::Pool), cc);
  }
  if (QmxDutLibrary* lib = linked_qmx_dut()) {
    QuantizeMxCosimConfig qc;
    qc.clock_mhz = core.config().timing.clock(isa::Engine::Dve);
    qc.trace = !opts.vcd.empty();
    qmx_ = new QuantizeMxCosim("quantize_mx", *lib, core.sequencer(isa::Engine::Dve), qc);
  }
}

void Cosim::start_of_simulation() {
  // One VCD for every lane of every block kind (rtl_trace.h).
  if (opts_.vcd.empty()) return;
  if (DutLibrary* lib = linked_dut())
    lib->open_trace(opts_.vcd);
  else if (QmxDutLibrary* q = linked_qmx_dut())
    q->open_trace(opts_.vcd);
}

trace::CosimStats Cosim::stats() const {
  trace::CosimStats s;
  s.enabled = true;
  if (dequant_) s.blocks.push_back(dequant_->stats());
  if (qmx_) s.blocks.push_back(qmx_->stats());
  return s;
}

std::string Cosim::close_trace() {
  std::string error;
  if (dequant_) error = dequant_->close_trace();
  if (QmxDutLibrary* q = linked_qmx_dut()) {
    q->close_trace();
    if (error.empty()) error = q->trace_error();
  }
  return error;
}

std::vector<std::string> summary(const trace::CosimStats& s) {
  std::vector<std::string> lines;
  std::string duts;
  for (const trace::CosimBlockStats& b : s.blocks) {
    duts += (duts.empty() ? "" : ", ") + b.dut;
    if (b.instructions == 0) continue;
    const std::string what =
        b.kind == "quantize_mx"
            ? fmt::format("{} blocks ({} words) compared", b.blocks_compared, b.words_compared)
            : fmt::format("{} words compared", b.words_compared);
    lines.push_back(fmt::format("cosim {} at {:.0f} MHz: {}, {} mismatches", b.dut, b.clock_mhz,
                                what, b.mismatches));
  }
  if (lines.empty()) lines.push_back("cosim: no co-simulated instruction ran (" + duts + ")");
  return lines;
}

bool any_dut_linked() { return linked_dut() || linked_qmx_dut(); }

Cosim* attach(platform::TpbCore& core, const CosimOptions& opts) {
  return new Cosim("cosim", core, opts);
}

}  // namespace tpb::cosim
