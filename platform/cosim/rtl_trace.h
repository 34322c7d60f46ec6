// The one VCD of the RTL's waves (--cosim-vcd) for every Verilated model
// linked into a program (the dequant lanes and the QuantizeMX blocks): each
// binding (rtl_dut.cpp, rtl_qmx_dut.cpp) registers its traced lanes during
// elaboration, and the first open() after it writes them all into one file.
// Header-only, so that one program has exactly one, whichever bindings it
// links.
#pragma once

#include <functional>
#include <string>
#include <vector>

// Verilator's runtime headers are not -Wextra clean (unused parameters).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <verilated.h>
#include <verilated_vcd_sc.h>
#pragma GCC diagnostic pop

namespace tpb::cosim {

class RtlVcd {
 public:
  // A traced lane: its model's trace() into the file.
  void add(std::function<void(VerilatedVcdC*)> lane) { lanes_.push_back(std::move(lane)); }
  void open(const std::string& path) {
    if (vcd_ || lanes_.empty()) return;
    // Never destroyed (as the SystemC objects): Verilator's own statics may
    // be gone by the time a static destructor would run.
    vcd_ = new VerilatedVcdSc;
    for (auto& l : lanes_) l(vcd_);
    vcd_->open(path.c_str());
  }
  void close() {
    if (vcd_ && !closed_) vcd_->close();
    closed_ = true;
  }

 private:
  std::vector<std::function<void(VerilatedVcdC*)>> lanes_;
  VerilatedVcdSc* vcd_ = nullptr;
  bool closed_ = false;
};

inline RtlVcd& rtl_vcd() {
  static RtlVcd v;
  return v;
}

}  // namespace tpb::cosim
