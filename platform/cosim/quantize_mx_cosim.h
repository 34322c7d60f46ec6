// Co-simulation of the DVE QuantizeMX block datapath with RTL (SPEC §9
// --cosim; docs/COSIM.md), as DequantCosim does for the POOL's lanes. One DUT
// per block lane (a block row: 8 partitions), driven pin by pin by a
// transactor thread on the RTL's own gated clock (the DVE clock of the
// timing profile): the model's observer seam (fw::QuantizeMxTap) hands it
// every 8 x 4 block's elements and the model's scale and x4 words; the
// transactor feeds each lane its row's blocks in column order, one a clock
// as in_ready allows, takes every output (out_ready held high) and compares
// the scale and the eight words with the model's. The DVE sequencer's
// retire gate waits for the RTL, so an instruction retires at max(model end,
// RTL end), and faults (exit 2) on the first mismatch, a stalled DUT or an
// extra block.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "firmware_stubs/dve/quantize_mx.h"
#include "models/sc/engine/sequencer.h"
#include "models/trace/stats.h"
#include "platform/cosim/qmx_dut.h"

namespace tpb::cosim {

struct QuantizeMxCosimConfig {
  std::uint32_t clock_mhz = 1200;  // the RTL clock (tpbsim run: the DVE clock)
  bool trace = false;              // the lanes' waves go into the RTL's VCD
  // Cycles without any handshake on any lane after which the DUT is declared
  // stalled (a fault naming the lane and its progress).
  std::uint64_t stall_cycles = 4096;
};

// The first block whose scale or words differ.
struct BlockMismatch {
  std::uint64_t time_ps = 0;
  unsigned block_row = 0, first_partition = 0;
  std::uint32_t column = 0;
  std::uint8_t expected_scale = 0, actual_scale = 0;
  std::array<std::uint32_t, 8> expected{}, actual{};
  // "at T ps, block row B (partitions P..P+7), column J: expected scale 0x.. and
  // x4 words [..], got scale 0x.. and [..]; first difference ..."
  std::string describe() const;
};

class QuantizeMxCosim : public sc_core::sc_module, public fw::QuantizeMxObserver {
 public:
  static constexpr unsigned kLanes = 16;  // 128 partitions / 8

  // Builds the 16 lanes (elaboration: before the run) and attaches to the
  // DVE sequencer: its engine state's QuantizeMxTap and its retire gate.
  QuantizeMxCosim(sc_core::sc_module_name name, QmxDutLibrary& dut, sc::Sequencer& dve,
                  QuantizeMxCosimConfig cfg);
  ~QuantizeMxCosim() override;

  // fw::QuantizeMxObserver (called in the DVE sequencer's thread).
  void begin(const fw::QuantizeMxStream& s) override;
  void block(unsigned b, std::uint32_t j, const std::uint32_t raw[32], std::uint8_t scale,
             const std::uint32_t words[8]) override;

  const std::optional<BlockMismatch>& first_mismatch() const { return first_; }
  // The stats of this block kind so far ("quantize_mx").
  trace::CosimBlockStats stats() const { return stats_; }

 private:
  struct Block {
    std::array<std::uint32_t, 32> raw;
    std::uint8_t scale;
    std::array<std::uint32_t, 8> words;
  };
  struct Lane {
    std::unique_ptr<QmxPins> pins;
    std::unique_ptr<sc_core::sc_module> dut;
    std::vector<Block> blocks;  // column order
    std::size_t in_idx = 0, out_idx = 0;
    std::uint64_t first_in = 0, first_out = 0;  // cycle numbers, 0: not yet
  };

  void transactor();  // SC_THREAD
  void run_stream();
  void compare(std::uint64_t now_ps, unsigned b, Lane& l);
  void retire_gate();  // the DVE sequencer's retire gate
  sc_core::sc_time edge(std::uint64_t half_cycles) const;

  QmxDutLibrary& dut_;
  QuantizeMxCosimConfig cfg_;
  std::vector<Lane> lanes_;
  fw::QuantizeMxStream stream_;
  std::uint64_t blocks_seen_ = 0;
  bool busy_ = false;        // a stream begun and not yet finished by the RTL
  bool pending_ = false;     // a stream handed over, not yet started
  bool has_stream_ = false;  // the current instruction began a stream
  sc_core::sc_time start_at_;
  sc_core::sc_event start_ev_, done_ev_;
  sc_core::sc_time t0_;  // the current stream's first clock edge
  std::uint64_t stream_bad_blocks_ = 0;
  std::optional<std::string> stream_error_;  // a stall or an extra block
  std::optional<BlockMismatch> first_, stream_first_;
  trace::CosimBlockStats stats_;
};

}  // namespace tpb::cosim
