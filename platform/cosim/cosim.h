// Every co-simulated block of a core (SPEC §9 --cosim; docs/COSIM.md): one
// driver per block whose RTL is linked into the program (block_cosim.h's
// list of blocks), each attached to its engine. What the run API calls to
// co-simulate a core; it knows no block by name.
#pragma once

#include <string>
#include <vector>

#include <systemc>

#include "models/trace/stats.h"
#include "platform/core/tpb_core.h"
#include "platform/cosim/block_cosim.h"

namespace tpb::cosim {

struct CosimOptions {
  std::string vcd;  // the RTL's waves, every lane of every block (--cosim-vcd), empty: none
};

class Cosim : public sc_core::sc_module {
 public:
  // Attaches every linked block to `core` (elaboration: before its first
  // run); each runs at its engine's clock of the core's profile.
  Cosim(sc_core::sc_module_name name, platform::TpbCore& core, const CosimOptions& opts);
  // The stats JSON's "cosim" section: one entry per block.
  trace::CosimStats stats() const;
  // Ends the RTL's VCD (after the run): "" or its first write error.
  std::string close_trace();
  const std::vector<BlockCosim*>& blocks() const { return blocks_; }

 private:
  void start_of_simulation() override;
  CosimOptions opts_;
  std::vector<BlockCosim*> blocks_;  // engine order
};

// One line per block that ran an instruction ("cosim tpb_dequant at 1200
// MHz: 512 words compared, 0 mismatches"), or one saying none ran.
std::vector<std::string> summary(const trace::CosimStats& s);

// Whether any co-simulated block's RTL is linked into this program.
bool any_block_linked();
// A new Cosim on `core`, living as long as the process (as the core's
// SystemC objects do).
Cosim* attach(platform::TpbCore& core, const CosimOptions& opts);

}  // namespace tpb::cosim
