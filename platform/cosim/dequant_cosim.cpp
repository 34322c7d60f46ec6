#include "platform/cosim/dequant_cosim.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/sc/engine/timing_config.h"

namespace tpb::cosim {

DutPins::DutPins(const std::string& p)
    : clk((p + "_clk").c_str()),
      rst_n((p + "_rst_n").c_str()),
      fmt((p + "_fmt").c_str()),
      group((p + "_group").c_str()),
      in_valid((p + "_in_valid").c_str()),
      in_ready((p + "_in_ready").c_str()),
      in_data((p + "_in_data").c_str()),
      out_valid((p + "_out_valid").c_str()),
      out_ready((p + "_out_ready").c_str()),
      out_data((p + "_out_data").c_str()) {}

namespace {
DutLibrary*& dut_slot() {
  static DutLibrary* lib = nullptr;
  return lib;
}
}  // namespace

DutLibrary* linked_dut() { return dut_slot(); }
void register_dut(DutLibrary* lib) { dut_slot() = lib; }

DequantCosim::DequantCosim(sc_core::sc_module_name name, DutLibrary& dut, sc::Sequencer& pool,
                           DequantCosimConfig cfg)
    : sc_core::sc_module(name), dut_(dut), cfg_(std::move(cfg)), lanes_(kLanes) {
  if (cfg_.clock_mhz == 0) throw std::invalid_argument("co-simulation: RTL clock of 0 MHz");
  if (!cfg_.vcd.empty()) dut_.enable_trace();
  for (unsigned l = 0; l < kLanes; ++l) {
    const std::string n = fmt::format("lane{}", l);
    lanes_[l].pins = std::make_unique<DutPins>(n);
    lanes_[l].dut = dut_.create(n.c_str(), *lanes_[l].pins);
    lanes_[l].partition = l;
  }
  stats_.enabled = true;
  stats_.dut = dut_.name();
  stats_.clock_mhz = cfg_.clock_mhz;
  pool.engine_state().get<fw::DequantStreamTap>().observer = this;
  pool.set_retire_gate([this] { retire_gate(); });
  SC_HAS_PROCESS(DequantCosim);
  SC_THREAD(transactor);
}

DequantCosim::~DequantCosim() = default;

void DequantCosim::start_of_simulation() {
  if (!cfg_.vcd.empty()) dut_.open_trace(cfg_.vcd);
}

std::string DequantCosim::close_trace() {
  dut_.close_trace();
  return dut_.trace_error();
}

trace::CosimStats DequantCosim::stats() const {
  trace::CosimStats s = stats_;
  s.words_compared = sb_.words_compared();
  s.mismatches = sb_.mismatches();
  return s;
}

void DequantCosim::begin(const fw::DequantStream& s) {
  stream_ = s;
  channels_seen_ = 0;
  active_.clear();
  stream_error_.reset();
  stream_mismatches_ = sb_.mismatches();
  busy_ = has_stream_ = s.channels > 0;
  start_at_ = sc_core::sc_time(static_cast<double>(s.start_ps), sc_core::SC_PS);
}

void DequantCosim::channel(unsigned c, const std::uint32_t* src, const std::uint32_t* expected) {
  // The kernel checked dst partition + channels <= 128.
  Lane& l = lanes_[stream_.dst_partition + c];
  l.src.assign(src, src + stream_.src_words);
  l.expected.assign(expected, expected + stream_.dst_words);
  active_.push_back(stream_.dst_partition + c);
  if (++channels_seen_ == stream_.channels) {
    pending_ = true;
    start_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

sc_core::sc_time DequantCosim::edge(std::uint64_t half_cycles) const {
  return t0_ + sc_core::sc_time(static_cast<double>(sc::TimingConfig::cycles_to_ps(
                                    half_cycles, 2 * cfg_.clock_mhz)),
                                sc_core::SC_PS);
}

void DequantCosim::transactor() {
  for (;;) {
    while (!pending_) wait(start_ev_);
    pending_ = false;
    // The stream starts at the model's time of the dequant loop.
    if (sc_core::sc_time_stamp() < start_at_) wait(start_at_ - sc_core::sc_time_stamp());
    run_stream();
  }
}

// Clock by clock: at each rising edge the handshakes of that edge are taken
// (in_valid && in_ready: the lane's next source word was consumed; out_valid
// && out_ready: an output word, compared with the model's), then the clock
// rises; at the falling edge the lane's inputs for the next edge are driven.
// Cycle 1 holds the DUT in reset with the format and group applied. The
// stream ends at the falling edge after its last handshake.
void DequantCosim::run_stream() {
  t0_ = sc_core::sc_time_stamp();
  for (unsigned li : active_) {
    Lane& l = lanes_[li];
    DutPins& p = *l.pins;
    l.in_idx = l.out_idx = 0;
    l.first_in = l.first_out = 0;
    p.clk.write(false);
    p.rst_n.write(false);
    p.fmt.write(static_cast<std::uint32_t>(stream_.fmt));
    p.group.write(stream_.group);
    p.in_valid.write(false);
    p.in_data.write(0);
    p.out_ready.write(false);
    stats_.source_words += l.src.size();
  }
  ++stats_.instructions;
  std::uint64_t idle = 0, k = 1;
  bool done = false;
  for (;; ++k) {
    wait(edge(2 * k) - sc_core::sc_time_stamp());
    const std::uint64_t now = sc::to_ps(sc_core::sc_time_stamp());
    bool progress = false;
    done = true;
    for (unsigned li : active_) {
      Lane& l = lanes_[li];
      DutPins& p = *l.pins;
      if (k > 1) {
        if (p.in_valid.read() && p.in_ready.read()) {
          ++l.in_idx;
          if (l.first_in == 0) l.first_in = k;
          progress = true;
        }
        if (p.out_valid.read()) {
          if (l.out_idx < l.expected.size()) {
            if (p.out_ready.read()) {
              sb_.compare(now, l.partition, l.out_idx, l.expected[l.out_idx], p.out_data.read());
              ++l.out_idx;
              if (l.first_out == 0) l.first_out = k;
              progress = true;
            }
          } else if (!stream_error_) {
            stream_error_ = fmt::format(
                "at {} ps, partition {}: the RTL offers output word {} (0x{:08x}) but the model "
                "produced only {}",
                now, l.partition, l.out_idx, p.out_data.read(), l.expected.size());
          }
        }
      }
      if (l.in_idx < l.src.size() || l.out_idx < l.expected.size()) done = false;
    }
    for (unsigned li : active_) lanes_[li].pins->clk.write(true);
    idle = progress || k == 1 ? 0 : idle + 1;
    if (!done && idle > cfg_.stall_cycles) {
      for (unsigned li : active_) {
        const Lane& l = lanes_[li];
        if (l.in_idx < l.src.size() || l.out_idx < l.expected.size()) {
          stream_error_ = fmt::format(
              "at {} ps, partition {}: the RTL stalled: no handshake for {} cycles after it took "
              "{} of {} source words and gave {} of {} output words",
              now, l.partition, idle, l.in_idx, l.src.size(), l.out_idx, l.expected.size());
          break;
        }
      }
      done = true;
    }
    if (done || stream_error_) break;
    wait(edge(2 * k + 1) - sc_core::sc_time_stamp());
    for (unsigned li : active_) {
      Lane& l = lanes_[li];
      DutPins& p = *l.pins;
      p.clk.write(false);
      p.rst_n.write(true);
      const bool more = l.in_idx < l.src.size();
      p.in_valid.write(more);
      p.in_data.write(more ? l.src[l.in_idx] : 0u);
      p.out_ready.write(l.out_idx < l.expected.size());
    }
  }
  // Half a clock later, with the DUT's registers updated by that edge, no lane
  // may offer a word beyond the model's: the stream ends there.
  wait(edge(2 * k + 1) - sc_core::sc_time_stamp());
  for (unsigned li : active_) {
    Lane& l = lanes_[li];
    DutPins& p = *l.pins;
    if (!stream_error_ && p.out_valid.read() && l.out_idx == l.expected.size())
      stream_error_ = fmt::format(
          "at {} ps, partition {}: the RTL offers output word {} (0x{:08x}) but the model "
          "produced only {}",
          sc::to_ps(sc_core::sc_time_stamp()), l.partition, l.out_idx, p.out_data.read(),
          l.expected.size());
    p.clk.write(false);
    p.in_valid.write(false);
    p.out_ready.write(false);
  }
  stats_.rtl_cycles += k;
  for (unsigned li : active_) {
    const Lane& l = lanes_[li];
    if (l.first_out > l.first_in)
      stats_.max_latency_cycles = std::max(stats_.max_latency_cycles, l.first_out - l.first_in);
  }
  busy_ = false;
  done_ev_.notify(sc_core::SC_ZERO_TIME);
}

void DequantCosim::retire_gate() {
  if (!has_stream_) return;  // not a TensorDequantize, or no channels
  has_stream_ = false;
  const sc_core::sc_time model_end = sc_core::sc_time_stamp();
  while (busy_) wait(done_ev_);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  if (end > model_end) {
    stats_.stretched_ps += sc::to_ps(end - model_end);
    ++stats_.stretched_instructions;
  }
  if (stream_error_) throw fw::KernelFault("co-simulation: " + *stream_error_);
  if (sb_.mismatches() > stream_mismatches_)
    throw fw::KernelFault(fmt::format(
        "co-simulation mismatch {} ({} {} group {}: {} of the instruction's output words differ)",
        sb_.first_mismatch()->describe(), dut_.name(), isa::dequant_fmt_name(stream_.fmt),
        stream_.group, sb_.mismatches() - stream_mismatches_));
}

}  // namespace tpb::cosim
