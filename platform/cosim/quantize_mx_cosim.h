// The DVE's QuantizeMX block datapath as a co-simulated block
// (block_cosim.h; docs/COSIM.md): one block lane per block row (8
// partitions), fed that row's 8 x 4 blocks in column order and checked
// block by block (the E8M0 scale and the eight x4 words) against the
// model's. The model's seam is the DVE stub's fw::QuantizeMxTap; the RTL
// clock is the DVE's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "firmware_stubs/dve/quantize_mx.h"
#include "platform/cosim/block_cosim.h"

namespace tpb::cosim {

// The ports of one block lane (tpb_quantize_mx): the handshakes,
// in_dtype[3:0] and out_dtype[3:0] (DTYPE ordinals), emax_alt,
// in_data[1023:0] (element 4r+k at [32*(4r+k) +: 32]), out_scale[7:0],
// out_data[255:0] (word r at [32r +: 32]).
struct QuantizeMxPins : LanePins {
  using LanePins::LanePins;
  sc_core::sc_signal<std::uint32_t> in_dtype{pin("in_dtype").c_str()},
      out_dtype{pin("out_dtype").c_str()};
  sc_core::sc_signal<bool> emax_alt{pin("emax_alt").c_str()};
  sc_core::sc_signal<sc_dt::sc_bv<1024>> in_data{pin("in_data").c_str()};
  sc_core::sc_signal<std::uint32_t> out_scale{pin("out_scale").c_str()};
  sc_core::sc_signal<sc_dt::sc_bv<256>> out_data{pin("out_data").c_str()};
  template <class Dut>
  void bind(Dut& m) {
    m.clk(clk);
    m.rst_n(rst_n);
    m.in_dtype(in_dtype);
    m.out_dtype(out_dtype);
    m.emax_alt(emax_alt);
    m.in_valid(in_valid);
    m.in_ready(in_ready);
    m.in_data(in_data);
    m.out_valid(out_valid);
    m.out_ready(out_ready);
    m.out_scale(out_scale);
    m.out_data(out_data);
  }
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

class QuantizeMxCosim : public BlockCosim, public fw::QuantizeMxObserver {
 public:
  using Pins = QuantizeMxPins;
  static constexpr const char* kKind = "quantize_mx";
  static constexpr isa::Queue kEngine = isa::Queue::Dve;
  static constexpr unsigned kLanes = 16;  // 128 partitions / 8

  // Builds the 16 lanes (elaboration: before the run) and attaches to the
  // DVE sequencer: its engine state's QuantizeMxTap and its retire gate.
  QuantizeMxCosim(sc_core::sc_module_name name, RtlLibrary& rtl, sc::Sequencer& dve,
                  const BlockConfig& cfg);

  // fw::QuantizeMxObserver (called in the DVE sequencer's thread).
  void begin(const fw::QuantizeMxStream& s) override;
  void block(unsigned b, std::uint32_t j, const std::uint32_t raw[32], std::uint8_t scale,
             const std::uint32_t words[8]) override;

  const std::optional<BlockMismatch>& first_mismatch() const { return first_; }

 private:
  struct Block {
    std::array<std::uint32_t, 32> raw;
    std::uint8_t scale;
    std::array<std::uint32_t, 8> words;
  };

  void configure(unsigned lane) override;
  void drive(unsigned lane, std::size_t index, bool more) override;
  void compare(unsigned lane, std::size_t index, std::uint64_t now_ps) override;
  std::string lane_text(unsigned lane, LaneText what, Count in, Count out) const override;
  void check_outputs() override;

  std::vector<std::vector<Block>> blocks_;  // per lane, column order
  fw::QuantizeMxStream stream_;
  std::uint64_t blocks_seen_ = 0;
  std::uint64_t stream_bad_blocks_ = 0;
  std::optional<BlockMismatch> first_, stream_first_;
};

}  // namespace tpb::cosim
