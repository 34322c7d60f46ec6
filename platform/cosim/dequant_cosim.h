// Co-simulation of the POOL TensorDequantize datapath with RTL (SPEC §9
// --cosim; docs/COSIM.md). One DUT per partition lane, driven pin by pin by a
// transactor thread on the RTL's own gated clock (the POOL clock of the
// timing profile): the model's observer seam (fw::DequantStreamTap) hands it
// each channel's source words and the model's output words; the transactor
// feeds the source words to the lane's DUT clock by clock, honouring
// in_ready, takes every output word (out_ready held high) and the
// WordScoreboard compares it with the model's. The POOL sequencer's retire
// gate waits for the RTL, so an instruction retires at max(model end, RTL
// end), and faults (exit 2) on the first mismatch, a stalled DUT or an extra
// output word.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "firmware_stubs/pool/tensor_dequantize.h"
#include "models/isa/address_map.h"
#include "models/sc/engine/sequencer.h"
#include "models/trace/stats.h"
#include "platform/cosim/dut.h"
#include "platform/cosim/scoreboard.h"

namespace tpb::cosim {

struct DequantCosimConfig {
  std::uint32_t clock_mhz = 1400;  // the RTL clock (tpbsim run: the POOL clock)
  std::string vcd;                 // the RTL's waves (--cosim-vcd), empty: none
  // Cycles without any handshake on any lane after which the DUT is declared
  // stalled (a fault naming the lane and its progress).
  std::uint64_t stall_cycles = 4096;
};

class DequantCosim : public sc_core::sc_module, public fw::DequantStreamObserver {
 public:
  static constexpr unsigned kLanes = isa::kNumPartitions;

  // Builds the 128 lanes (elaboration: before the run) and attaches to the
  // POOL sequencer: its engine state's DequantStreamTap and its retire gate.
  DequantCosim(sc_core::sc_module_name name, DutLibrary& dut, sc::Sequencer& pool,
               DequantCosimConfig cfg);
  ~DequantCosim() override;

  // fw::DequantStreamObserver (called in the POOL sequencer's thread).
  void begin(const fw::DequantStream& s) override;
  void channel(unsigned c, const std::uint32_t* src, const std::uint32_t* expected) override;

  const WordScoreboard& scoreboard() const { return sb_; }
  // The stats JSON's "cosim" section so far.
  trace::CosimStats stats() const;
  // Ends the RTL's VCD (after the run): "" or its first write error.
  std::string close_trace();

 private:
  struct Lane {
    std::unique_ptr<DutPins> pins;
    std::unique_ptr<sc_core::sc_module> dut;
    bool active = false;
    unsigned partition = 0;  // the output words' (dst) partition
    std::vector<std::uint32_t> src, expected;
    std::size_t in_idx = 0, out_idx = 0;
    std::uint64_t first_in = 0, first_out = 0;  // cycle numbers, 0: not yet
  };

  void start_of_simulation() override;
  void transactor();  // SC_THREAD
  void run_stream();
  void retire_gate();  // the POOL sequencer's retire gate
  sc_core::sc_time edge(std::uint64_t half_cycles) const;

  DutLibrary& dut_;
  DequantCosimConfig cfg_;
  std::vector<Lane> lanes_;
  std::vector<unsigned> active_;  // lane indices of the current stream
  WordScoreboard sb_;
  fw::DequantStream stream_;
  unsigned channels_seen_ = 0;
  bool busy_ = false;        // a stream begun and not yet finished by the RTL
  bool pending_ = false;     // a stream handed over, not yet started
  bool has_stream_ = false;  // the current instruction began a stream
  sc_core::sc_time start_at_;
  sc_core::sc_event start_ev_, done_ev_;
  sc_core::sc_time t0_;  // the current stream's first clock edge
  std::uint64_t stream_mismatches_ = 0;
  std::optional<std::string> stream_error_;  // a stall or an extra word
  trace::CosimStats stats_;
};

}  // namespace tpb::cosim
