#include "platform/cosim/quantize_mx_cosim.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/sc/engine/timing_config.h"

namespace tpb::cosim {

QmxPins::QmxPins(const std::string& p)
    : clk((p + "_clk").c_str()),
      rst_n((p + "_rst_n").c_str()),
      in_dtype((p + "_in_dtype").c_str()),
      out_dtype((p + "_out_dtype").c_str()),
      emax_alt((p + "_emax_alt").c_str()),
      in_valid((p + "_in_valid").c_str()),
      in_ready((p + "_in_ready").c_str()),
      in_data((p + "_in_data").c_str()),
      out_valid((p + "_out_valid").c_str()),
      out_ready((p + "_out_ready").c_str()),
      out_scale((p + "_out_scale").c_str()),
      out_data((p + "_out_data").c_str()) {}

namespace {
QmxDutLibrary*& qmx_slot() {
  static QmxDutLibrary* lib = nullptr;
  return lib;
}

std::string words_text(const std::array<std::uint32_t, 8>& w) {
  std::string s;
  for (std::size_t r = 0; r < w.size(); ++r) s += fmt::format("{}0x{:08x}", r ? " " : "", w[r]);
  return s;
}

const char* dtype_name(isa::Dtype d) {
  return d == isa::Dtype::Bf16 ? "bf16" : d == isa::Dtype::Fp16 ? "fp16" : "fp32";
}
}  // namespace

QmxDutLibrary* linked_qmx_dut() { return qmx_slot(); }
void register_qmx_dut(QmxDutLibrary* lib) { qmx_slot() = lib; }

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

QuantizeMxCosim::QuantizeMxCosim(sc_core::sc_module_name name, QmxDutLibrary& dut,
                                 sc::Sequencer& dve, QuantizeMxCosimConfig cfg)
    : sc_core::sc_module(name), dut_(dut), cfg_(cfg), lanes_(kLanes) {
  if (cfg_.clock_mhz == 0) throw std::invalid_argument("co-simulation: RTL clock of 0 MHz");
  if (cfg_.trace) dut_.enable_trace();
  for (unsigned l = 0; l < kLanes; ++l) {
    const std::string n = fmt::format("block{}", l);
    lanes_[l].pins = std::make_unique<QmxPins>(n);
    lanes_[l].dut = dut_.create(n.c_str(), *lanes_[l].pins);
  }
  stats_.kind = "quantize_mx";
  stats_.dut = dut_.name();
  stats_.clock_mhz = cfg_.clock_mhz;
  dve.engine_state().get<fw::QuantizeMxTap>().observer = this;
  dve.set_retire_gate([this] { retire_gate(); });
  SC_HAS_PROCESS(QuantizeMxCosim);
  SC_THREAD(transactor);
}

QuantizeMxCosim::~QuantizeMxCosim() = default;

void QuantizeMxCosim::begin(const fw::QuantizeMxStream& s) {
  stream_ = s;
  blocks_seen_ = 0;
  stream_error_.reset();
  stream_first_.reset();
  stream_bad_blocks_ = 0;
  for (Lane& l : lanes_) l.blocks.clear();
  busy_ = has_stream_ = s.block_rows > 0 && s.cols > 0;
  start_at_ = sc_core::sc_time(static_cast<double>(s.start_ps), sc_core::SC_PS);
}

void QuantizeMxCosim::block(unsigned b, std::uint32_t j, const std::uint32_t raw[32],
                            std::uint8_t scale, const std::uint32_t words[8]) {
  // The kernel hands the blocks column by column: lane b's come in column order.
  (void)j;
  Block k;
  std::copy(raw, raw + 32, k.raw.begin());
  k.scale = scale;
  std::copy(words, words + 8, k.words.begin());
  lanes_[b].blocks.push_back(k);
  if (++blocks_seen_ == std::uint64_t{stream_.block_rows} * stream_.cols) {
    pending_ = true;
    start_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

sc_core::sc_time QuantizeMxCosim::edge(std::uint64_t half_cycles) const {
  return t0_ + sc_core::sc_time(static_cast<double>(sc::TimingConfig::cycles_to_ps(
                                    half_cycles, 2 * cfg_.clock_mhz)),
                                sc_core::SC_PS);
}

void QuantizeMxCosim::transactor() {
  for (;;) {
    while (!pending_) wait(start_ev_);
    pending_ = false;
    // The stream starts at the model's time of the quantize step.
    if (sc_core::sc_time_stamp() < start_at_) wait(start_at_ - sc_core::sc_time_stamp());
    run_stream();
  }
}

void QuantizeMxCosim::compare(std::uint64_t now_ps, unsigned b, Lane& l) {
  const Block& want = l.blocks[l.out_idx];
  QmxPins& p = *l.pins;
  BlockMismatch m;
  m.time_ps = now_ps;
  m.block_row = b;
  m.first_partition = stream_.dst_partition + 8 * b;
  m.column = static_cast<std::uint32_t>(l.out_idx);
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
  if (bad) {
    ++stream_bad_blocks_;
    if (!stream_first_) stream_first_ = m;
    if (!first_) first_ = m;
  }
}

// Clock by clock, as DequantCosim::run_stream: the handshakes of each rising
// edge are taken just before it (in_valid && in_ready: the lane's next block
// was consumed; out_valid && out_ready: a block's output, compared with the
// model's), then the clock rises; at the falling edge the inputs for the next
// edge are driven. Cycle 1 holds the DUT in reset with the dtypes and emax
// applied. The stream ends half a clock after its last handshake.
void QuantizeMxCosim::run_stream() {
  t0_ = sc_core::sc_time_stamp();
  const unsigned rows = stream_.block_rows;
  const std::uint32_t out_dt = static_cast<std::uint32_t>(
      stream_.out == num::MxOut::E4M3 ? isa::Dtype::Fp8Exp4 : isa::Dtype::Fp8Exp5);
  for (unsigned b = 0; b < rows; ++b) {
    Lane& l = lanes_[b];
    QmxPins& p = *l.pins;
    l.in_idx = l.out_idx = 0;
    l.first_in = l.first_out = 0;
    p.clk.write(false);
    p.rst_n.write(false);
    p.in_dtype.write(static_cast<std::uint32_t>(stream_.in_dtype));
    p.out_dtype.write(out_dt);
    p.emax_alt.write(stream_.emax == num::MxEmax::NeuronAlt);
    p.in_valid.write(false);
    p.out_ready.write(false);
    stats_.source_words += 32 * l.blocks.size();
  }
  ++stats_.instructions;
  sc_dt::sc_bv<1024> data;
  std::uint64_t idle = 0, k = 1;
  for (;; ++k) {
    wait(edge(2 * k) - sc_core::sc_time_stamp());
    const std::uint64_t now = sc::to_ps(sc_core::sc_time_stamp());
    bool progress = false, done = true;
    for (unsigned b = 0; b < rows; ++b) {
      Lane& l = lanes_[b];
      QmxPins& p = *l.pins;
      if (k > 1) {
        if (p.in_valid.read() && p.in_ready.read()) {
          ++l.in_idx;
          if (l.first_in == 0) l.first_in = k;
          progress = true;
        }
        if (p.out_valid.read()) {
          if (l.out_idx < l.blocks.size()) {
            if (p.out_ready.read()) {
              compare(now, b, l);
              ++l.out_idx;
              if (l.first_out == 0) l.first_out = k;
              progress = true;
            }
          } else if (!stream_error_) {
            stream_error_ = fmt::format(
                "at {} ps, block row {}: the RTL offers block {} but the model quantized only {}",
                now, b, l.out_idx, l.blocks.size());
          }
        }
      }
      if (l.in_idx < l.blocks.size() || l.out_idx < l.blocks.size()) done = false;
    }
    for (unsigned b = 0; b < rows; ++b) lanes_[b].pins->clk.write(true);
    idle = progress || k == 1 ? 0 : idle + 1;
    if (!done && idle > cfg_.stall_cycles) {
      for (unsigned b = 0; b < rows; ++b) {
        const Lane& l = lanes_[b];
        if (l.in_idx < l.blocks.size() || l.out_idx < l.blocks.size()) {
          stream_error_ = fmt::format(
              "at {} ps, block row {}: the RTL stalled: no handshake for {} cycles after it took "
              "{} of {} blocks and gave {}",
              now, b, idle, l.in_idx, l.blocks.size(), l.out_idx);
          break;
        }
      }
      done = true;
    }
    if (done || stream_error_) break;
    wait(edge(2 * k + 1) - sc_core::sc_time_stamp());
    for (unsigned b = 0; b < rows; ++b) {
      Lane& l = lanes_[b];
      QmxPins& p = *l.pins;
      p.clk.write(false);
      p.rst_n.write(true);
      const bool more = l.in_idx < l.blocks.size();
      p.in_valid.write(more);
      if (more) {
        const Block& blk = l.blocks[l.in_idx];
        for (int i = 0; i < 32; ++i) data.set_word(i, blk.raw[i]);
        p.in_data.write(data);
      }
      p.out_ready.write(l.out_idx < l.blocks.size());
    }
  }
  // Half a clock later, with the DUT's registers updated by that edge, no lane
  // may offer a block beyond the model's: the stream ends there.
  wait(edge(2 * k + 1) - sc_core::sc_time_stamp());
  for (unsigned b = 0; b < rows; ++b) {
    Lane& l = lanes_[b];
    QmxPins& p = *l.pins;
    if (!stream_error_ && p.out_valid.read() && l.out_idx == l.blocks.size())
      stream_error_ = fmt::format(
          "at {} ps, block row {}: the RTL offers block {} but the model quantized only {}",
          sc::to_ps(sc_core::sc_time_stamp()), b, l.out_idx, l.blocks.size());
    p.clk.write(false);
    p.in_valid.write(false);
    p.out_ready.write(false);
  }
  stats_.rtl_cycles += k;
  for (unsigned b = 0; b < rows; ++b) {
    const Lane& l = lanes_[b];
    if (l.first_out > l.first_in)
      stats_.max_latency_cycles = std::max(stats_.max_latency_cycles, l.first_out - l.first_in);
  }
  busy_ = false;
  done_ev_.notify(sc_core::SC_ZERO_TIME);
}

void QuantizeMxCosim::retire_gate() {
  if (!has_stream_) return;  // not a QuantizeMX, or no blocks
  has_stream_ = false;
  const sc_core::sc_time model_end = sc_core::sc_time_stamp();
  while (busy_) wait(done_ev_);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  if (end > model_end) {
    stats_.stretched_ps += sc::to_ps(end - model_end);
    ++stats_.stretched_instructions;
  }
  if (stream_error_) throw fw::KernelFault("co-simulation: " + *stream_error_);
  if (stream_first_)
    throw fw::KernelFault(fmt::format(
        "co-simulation mismatch {} ({} {} -> {} {}: {} of the instruction's {} blocks differ)",
        stream_first_->describe(), dut_.name(), dtype_name(stream_.in_dtype),
        stream_.out == num::MxOut::E4M3 ? "fp8_e4m3" : "fp8_e5m2",
        stream_.emax == num::MxEmax::Ocp ? "ocp" : "neuron-alt", stream_bad_blocks_,
        std::uint64_t{stream_.block_rows} * stream_.cols));
}

}  // namespace tpb::cosim
