#include "platform/cosim/cosim.h"

#include <fmt/format.h>

namespace tpb::cosim {

Cosim::Cosim(sc_core::sc_module_name name, platform::TpbCore& core, const CosimOptions& opts)
    : sc_core::sc_module(name), opts_(opts) {
  for (const LinkedBlock& b : linked_blocks()) {
    BlockConfig cfg;
    cfg.clock_mhz = core.config().timing.clock(b.engine);
    cfg.trace = !opts.vcd.empty();
    blocks_.push_back(b.attach(*b.rtl, core.sequencer(b.engine), cfg));
  }
}

void Cosim::start_of_simulation() {
  // One VCD for every lane of every block (rtl_trace.h).
  if (!opts_.vcd.empty() && !blocks_.empty()) blocks_.front()->rtl().open_trace(opts_.vcd);
}

trace::CosimStats Cosim::stats() const {
  trace::CosimStats s;
  s.enabled = true;
  for (const BlockCosim* b : blocks_) s.blocks.push_back(b->stats());
  return s;
}

std::string Cosim::close_trace() {
  std::string error;
  for (BlockCosim* b : blocks_) {
    b->rtl().close_trace();
    if (error.empty()) error = b->rtl().trace_error();
  }
  return error;
}

std::vector<std::string> summary(const trace::CosimStats& s) {
  std::vector<std::string> lines;
  std::string duts;
  for (const trace::CosimBlockStats& b : s.blocks) {
    duts += (duts.empty() ? "" : ", ") + b.dut;
    if (b.instructions == 0) continue;
    const std::string what = b.counts_blocks ? fmt::format("{} blocks ({} words) compared",
                                                           b.blocks_compared, b.words_compared)
                                             : fmt::format("{} words compared", b.words_compared);
    lines.push_back(fmt::format("cosim {} at {:.0f} MHz: {}, {} mismatches", b.dut, b.clock_mhz,
                                what, b.mismatches));
  }
  if (lines.empty()) lines.push_back("cosim: no co-simulated instruction ran (" + duts + ")");
  return lines;
}

bool any_block_linked() { return !linked_blocks().empty(); }

Cosim* attach(platform::TpbCore& core, const CosimOptions& opts) {
  return new Cosim("cosim", core, opts);
}

}  // namespace tpb::cosim
