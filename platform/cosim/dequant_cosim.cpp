#include "platform/cosim/dequant_cosim.h"

#include <fmt/format.h>

namespace tpb::cosim {

DequantCosim::DequantCosim(sc_core::sc_module_name name, RtlLibrary& rtl, sc::Sequencer& pool,
                           const BlockConfig& cfg)
    : BlockCosim(name, rtl, kKind, cfg), words_(kLanes) {
  make_lanes<Pins>(kLanes, "lane");
  pool.engine_state().get<fw::DequantStreamTap>().observer = this;
  attach(pool);
}

void DequantCosim::begin(const fw::DequantStream& s) {
  stream_ = s;
  channels_seen_ = 0;
  stream_mismatches_ = sb_.mismatches();
  begin_stream(s.channels > 0, s.start_ps);
}

void DequantCosim::channel(unsigned c, const std::uint32_t* src, const std::uint32_t* expected) {
  // The kernel checked dst partition + channels <= 128: lane = output partition.
  const unsigned lane = stream_.dst_partition + c;
  words_[lane].src.assign(src, src + stream_.src_words);
  words_[lane].expected.assign(expected, expected + stream_.dst_words);
  activate(lane, stream_.src_words, stream_.dst_words);
  if (++channels_seen_ == stream_.channels) hand_over();
}

void DequantCosim::configure(unsigned lane) {
  Pins& p = pins<Pins>(lane);
  p.fmt.write(static_cast<std::uint32_t>(stream_.fmt));
  p.group.write(stream_.group);
  p.in_data.write(0);
  stats_.source_words += words_[lane].src.size();
}

void DequantCosim::drive(unsigned lane, std::size_t index, bool more) {
  pins<Pins>(lane).in_data.write(more ? words_[lane].src[index] : 0u);
}

void DequantCosim::compare(unsigned lane, std::size_t index, std::uint64_t now_ps) {
  const bool same = sb_.compare(now_ps, lane, index, words_[lane].expected[index],
                                pins<Pins>(lane).out_data.read());
  ++stats_.words_compared;
  stats_.mismatches += same ? 0 : 1;
}

std::string DequantCosim::lane_text(unsigned lane, LaneText what, Count in, Count out) const {
  const Words& w = words_[lane];
  switch (what) {
    case LaneText::Where:
      return fmt::format("partition {}", lane);
    case LaneText::Progress:
      return fmt::format("{} of {} source words and gave {} of {} output words", in, w.src.size(),
                         out, w.expected.size());
    case LaneText::ExtraOutput:
      break;
  }
  return fmt::format("the RTL offers output word {} (0x{:08x}) but the model produced only {}", out,
                     pins<Pins>(lane).out_data.read(), w.expected.size());
}

void DequantCosim::check_outputs() {
  if (sb_.mismatches() > stream_mismatches_)
    throw fw::KernelFault(fmt::format(
        "co-simulation mismatch {} ({} {} group {}: {} of the instruction's output words differ)",
        sb_.first_mismatch()->describe(), rtl().name(), isa::dequant_fmt_name(stream_.fmt),
        stream_.group, sb_.mismatches() - stream_mismatches_));
}

}  // namespace tpb::cosim
