// Every co-simulated block of a core (SPEC §9 --cosim; docs/COSIM.md): the
// POOL's TensorDequantize lanes (DequantCosim) and the DVE's QuantizeMX
// blocks (QuantizeMxCosim), each attached when its RTL is linked into the
// program. What the run API calls to co-simulate a core.
#pragma once

#include <string>
#include <vector>

#include <systemc>

#include "models/trace/stats.h"
#include "platform/core/tpb_core.h"
#include "platform/cosim/dequant_cosim.h"
#include "platform/cosim/quantize_mx_cosim.h"

namespace tpb::cosim {

struct CosimOptions {
  std::string vcd;  // the RTL's waves, every lane of every block (--cosim-vcd), empty: none
};

class Cosim : public sc_core::sc_module {
 public:
  // Attaches every linked block kind to `core` (elaboration: before its
  // first run); each runs at its engine's clock of the core's profile.
  Cosim(sc_core::sc_module_name name, platform::TpbCore& core, const CosimOptions& opts);
  // The stats JSON's "cosim" section: one entry per block kind.
  trace::CosimStats stats() const;
  // Ends the RTL's VCD (after the run): "" or its first write error.
  std::string close_trace();
  DequantCosim* dequant() { return dequant_; }
  QuantizeMxCosim* quantize_mx() { return qmx_; }

 private:
  void start_of_simulation() override;
  CosimOptions opts_;
  DequantCosim* dequant_ = nullptr;
  QuantizeMxCosim* qmx_ = nullptr;
};

// One line per block kind that ran ("cosim tpb_dequant at 1200 MHz: 512
// words compared, 0 mismatches"), or one saying none ran.
std::vector<std::string> summary(const trace::CosimStats& s);

// Whether any co-simulated block's RTL is linked into this program.
bool any_dut_linked();
// A new Cosim on `core`, living as long as the process (as the core's
// SystemC objects do).
Cosim* attach(platform::TpbCore& core, const CosimOptions& opts);

}  // namespace tpb::cosim
