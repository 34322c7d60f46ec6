// The POOL's TensorDequantize datapath as a co-simulated block
// (block_cosim.h; docs/COSIM.md): one dequant lane per partition, each fed
// one channel's source words and checked word by word against the model's
// output words (WordScoreboard). The model's seam is the POOL stub's
// fw::DequantStreamTap; the RTL clock is the POOL's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "firmware_stubs/pool/tensor_dequantize.h"
#include "models/isa/address_map.h"
#include "platform/cosim/block_cosim.h"
#include "platform/cosim/scoreboard.h"

namespace tpb::cosim {

// The ports of one dequant lane (tpb_dequant): the handshakes, fmt[2:0],
// group[3:0], in_data[31:0], out_data[31:0].
struct DequantPins : LanePins {
  using LanePins::LanePins;
  sc_core::sc_signal<std::uint32_t> fmt{pin("fmt").c_str()}, group{pin("group").c_str()};
  sc_core::sc_signal<std::uint32_t> in_data{pin("in_data").c_str()},
      out_data{pin("out_data").c_str()};
  template <class Dut>
  void bind(Dut& m) {
    m.clk(clk);
    m.rst_n(rst_n);
    m.fmt(fmt);
    m.group(group);
    m.in_valid(in_valid);
    m.in_ready(in_ready);
    m.in_data(in_data);
    m.out_valid(out_valid);
    m.out_ready(out_ready);
    m.out_data(out_data);
  }
};

class DequantCosim : public BlockCosim, public fw::DequantStreamObserver {
 public:
  using Pins = DequantPins;
  static constexpr const char* kKind = "dequant";
  static constexpr isa::Queue kEngine = isa::Queue::Pool;
  static constexpr unsigned kLanes = isa::kNumPartitions;

  // Builds the 128 lanes (elaboration: before the run) and attaches to the
  // POOL sequencer: its engine state's DequantStreamTap and its retire gate.
  DequantCosim(sc_core::sc_module_name name, RtlLibrary& rtl, sc::Sequencer& pool,
               const BlockConfig& cfg);

  // fw::DequantStreamObserver (called in the POOL sequencer's thread).
  void begin(const fw::DequantStream& s) override;
  void channel(unsigned c, const std::uint32_t* src, const std::uint32_t* expected) override;

  const WordScoreboard& scoreboard() const { return sb_; }

 private:
  void configure(unsigned lane) override;
  void drive(unsigned lane, std::size_t index, bool more) override;
  void compare(unsigned lane, std::size_t index, std::uint64_t now_ps) override;
  std::string lane_text(unsigned lane, LaneText what, Count in, Count out) const override;
  void check_outputs() override;

  struct Words {
    std::vector<std::uint32_t> src, expected;
  };
  std::vector<Words> words_;  // per lane (its output partition)
  WordScoreboard sb_;
  fw::DequantStream stream_;
  unsigned channels_seen_ = 0;
  std::uint64_t stream_mismatches_ = 0;
};

}  // namespace tpb::cosim
