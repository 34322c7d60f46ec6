#include "platform/cosim/quantize_mx_cosim.h"

#include <algorithm>

#include <fmt/format.h>

namespace tpb::cosim {

namespace {

std::string words_text(const std::array<std::uint32_t, 8>& w) {
  std::string s;
  for (std::size_t r = 0; r < w.size(); ++r) s += fmt::format("{}0x{:08x}", r ? " " : "", w[r]);
  return s;
}

const char* dtype_name(isa::Dtype d) {
  return d == isa::Dtype::Bf16 ? "bf16" : d == isa::Dtype::Fp16 ? "fp16" : "fp32";
}

}  // namespace

std::string BlockMismatch::describe() const {
  std::string first;
  if (expected_scale != actual_scale)
    first = fmt::format("scale: expected 0x{:02x}, got 0x{:02x}", expected_scale, actual_scale);
  for (unsigned r = 0; r < 8 && first.empty(); ++r)
    if (expected[r] != actual[r])
      first = fmt::format("partition {}, x4 word {}: expected 0x{:08x}, got 0x{:08x}",
                          first_partition + r, column, expected[r], actual[r]);
  return fmt::format(
      "at {} ps, block row {} (partitions {}..{}), column {}: {} (the block: expected scale "
      "0x{:02x}, words {}; got scale 0x{:02x}, words {})",
      time_ps, block_row, first_partition, first_partition + 7, column, first, expected_scale,
      words_text(expected), actual_scale, words_text(actual));
}

QuantizeMxCosim::QuantizeMxCosim(sc_core::sc_module_name name, RtlLibrary& rtl, sc::Sequencer& dve,
                                 const BlockConfig& cfg)
    : BlockCosim(name, rtl, kKind, cfg), blocks_(kLanes) {
  stats_.counts_blocks = true;
  make_lanes<Pins>(kLanes, "block");
  dve.engine_state().get<fw::QuantizeMxTap>().observer = this;
  attach(dve);
}

void QuantizeMxCosim::begin(const fw::QuantizeMxStream& s) {
  stream_ = s;
  blocks_seen_ = 0;
  stream_first_.reset();
  stream_bad_blocks_ = 0;
  for (std::vector<Block>& l : blocks_) l.clear();
  begin_stream(s.block_rows > 0 && s.cols > 0, s.start_ps);
}

void QuantizeMxCosim::block(unsigned b, std::uint32_t j, const std::uint32_t raw[32],
                            std::uint8_t scale, const std::uint32_t words[8]) {
  // The kernel hands the blocks column by column: lane b's come in column order.
  (void)j;
  Block k;
  std::copy(raw, raw + 32, k.raw.begin());
  k.scale = scale;
  std::copy(words, words + 8, k.words.begin());
  blocks_[b].push_back(k);
  if (++blocks_seen_ != std::uint64_t{stream_.block_rows} * stream_.cols) return;
  for (unsigned r = 0; r < stream_.block_rows; ++r)
    activate(r, blocks_[r].size(), blocks_[r].size());
  hand_over();
}

void QuantizeMxCosim::configure(unsigned lane) {
  Pins& p = pins<Pins>(lane);
  p.in_dtype.write(static_cast<std::uint32_t>(stream_.in_dtype));
  p.out_dtype.write(static_cast<std::uint32_t>(
      stream_.out == num::MxOut::E4M3 ? isa::Dtype::Fp8Exp4 : isa::Dtype::Fp8Exp5));
  p.emax_alt.write(stream_.emax == num::MxEmax::NeuronAlt);
  stats_.source_words += 32 * blocks_[lane].size();
}

void QuantizeMxCosim::drive(unsigned lane, std::size_t index, bool more) {
  if (!more) return;
  sc_dt::sc_bv<1024> data;
  for (int i = 0; i < 32; ++i) data.set_word(i, blocks_[lane][index].raw[i]);
  pins<Pins>(lane).in_data.write(data);
}

void QuantizeMxCosim::compare(unsigned lane, std::size_t index, std::uint64_t now_ps) {
  const Block& want = blocks_[lane][index];
  const Pins& p = pins<Pins>(lane);
  BlockMismatch m;
  m.time_ps = now_ps;
  m.block_row = lane;
  m.first_partition = stream_.dst_partition + 8 * lane;
  m.column = static_cast<std::uint32_t>(index);
  m.expected_scale = want.scale;
  m.actual_scale = static_cast<std::uint8_t>(p.out_scale.read());
  m.expected = want.words;
  const sc_dt::sc_bv<256> got = p.out_data.read();
  std::uint64_t bad = m.expected_scale != m.actual_scale ? 1 : 0;
  for (unsigned r = 0; r < 8; ++r) {
    m.actual[r] = static_cast<std::uint32_t>(got.get_word(r));
    bad += m.actual[r] != m.expected[r];
  }
  ++stats_.blocks_compared;
  stats_.words_compared += 8;
  stats_.mismatches += bad;
  if (!bad) return;
  ++stream_bad_blocks_;
  if (!stream_first_) stream_first_ = m;
  if (!first_) first_ = m;
}

std::string QuantizeMxCosim::lane_text(unsigned lane, LaneText what, Count in, Count out) const {
  const std::size_t blocks = blocks_[lane].size();
  switch (what) {
    case LaneText::Where:
      return fmt::format("block row {}", lane);
    case LaneText::Progress:
      return fmt::format("{} of {} blocks and gave {}", in, blocks, out);
    case LaneText::ExtraOutput:
      break;
  }
  return fmt::format("the RTL offers block {} but the model quantized only {}", out, blocks);
}

void QuantizeMxCosim::check_outputs() {
  if (stream_first_)
    throw fw::KernelFault(fmt::format(
        "co-simulation mismatch {} ({} {} -> {} {}: {} of the instruction's {} blocks differ)",
        stream_first_->describe(), rtl().name(), dtype_name(stream_.in_dtype),
        stream_.out == num::MxOut::E4M3 ? "fp8_e4m3" : "fp8_e5m2",
        stream_.emax == num::MxEmax::Ocp ? "ocp" : "neuron-alt", stream_bad_blocks_,
        std::uint64_t{stream_.block_rows} * stream_.cols));
}

}  // namespace tpb::cosim
