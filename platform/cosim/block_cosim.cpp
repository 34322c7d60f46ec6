#include "platform/cosim/block_cosim.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "models/sc/engine/timing_config.h"

namespace tpb::cosim {

namespace {
std::vector<LinkedBlock>& registry() {
  static std::vector<LinkedBlock> blocks;
  return blocks;
}
}  // namespace

void link_block(const LinkedBlock& b) {
  std::vector<LinkedBlock>& r = registry();
  r.push_back(b);
  std::stable_sort(r.begin(), r.end(),
                   [](const LinkedBlock& x, const LinkedBlock& y) { return x.engine < y.engine; });
}

const std::vector<LinkedBlock>& linked_blocks() { return registry(); }

const LinkedBlock* linked_block(const std::string& kind) {
  for (const LinkedBlock& b : registry())
    if (kind == b.kind) return &b;
  return nullptr;
}

BlockCosim::BlockCosim(sc_core::sc_module_name name, RtlLibrary& rtl, const char* kind,
                       BlockConfig cfg)
    : sc_core::sc_module(name), cfg_(cfg), rtl_(rtl) {
  if (cfg_.clock_mhz == 0) throw std::invalid_argument("co-simulation: RTL clock of 0 MHz");
  if (cfg_.trace) rtl_.enable_trace();
  stats_.kind = kind;
  stats_.dut = rtl_.name();
  stats_.clock_mhz = cfg_.clock_mhz;
}

BlockCosim::~BlockCosim() = default;

void BlockCosim::add_lane(std::unique_ptr<LanePins> pins, const std::string& name) {
  Lane l;
  l.dut = rtl_.create(name.c_str(), *pins);
  l.pins = std::move(pins);
  lanes_.push_back(std::move(l));
}

void BlockCosim::attach(sc::Sequencer& engine) {
  engine.set_retire_gate([this] { retire_gate(); });
  SC_HAS_PROCESS(BlockCosim);
  SC_THREAD(transactor);
}

// ------------------------------------------------------------ the model's side

void BlockCosim::begin_stream(bool any, std::uint64_t start_ps) {
  active_.clear();
  stream_error_.reset();
  busy_ = has_stream_ = any;
  start_at_ = sc_core::sc_time(static_cast<double>(start_ps), sc_core::SC_PS);
}

void BlockCosim::activate(unsigned lane, std::size_t inputs, std::size_t outputs) {
  lanes_[lane].inputs = inputs;
  lanes_[lane].outputs = outputs;
  active_.push_back(lane);
}

void BlockCosim::hand_over() {
  pending_ = true;
  start_ev_.notify(sc_core::SC_ZERO_TIME);
}

// ------------------------------------------------------------ the transactor

sc_core::sc_time BlockCosim::edge(std::uint64_t half_cycles) const {
  return t0_ + sc_core::sc_time(static_cast<double>(timing::TimingConfig::cycles_to_ps(
                                    half_cycles, 2 * cfg_.clock_mhz)),
                                sc_core::SC_PS);
}

void BlockCosim::transactor() {
  for (;;) {
    while (!pending_) wait(start_ev_);
    pending_ = false;
    // The stream starts at the model's time of the step the RTL mirrors.
    if (sc_core::sc_time_stamp() < start_at_) wait(start_at_ - sc_core::sc_time_stamp());
    run_stream();
  }
}

std::string BlockCosim::lane_error(unsigned lane, std::uint64_t now,
                                   const std::string& what) const {
  return fmt::format("at {} ps, {}: {}", now, lane_text(lane, LaneText::Where, 0, 0), what);
}

// Cycle 1 holds every lane of the stream in reset with its configuration
// applied.
void BlockCosim::reset_lanes() {
  t0_ = sc_core::sc_time_stamp();
  for (unsigned li : active_) {
    Lane& l = lanes_[li];
    LanePins& p = *l.pins;
    l.in_idx = l.out_idx = 0;
    l.first_in = l.first_out = 0;
    p.clk.write(false);
    p.rst_n.write(false);
    configure(li);
    p.in_valid.write(false);
    p.out_ready.write(false);
  }
  ++stats_.instructions;
}

// The handshakes of one lane at rising edge k (none at the reset edge):
// in_valid && in_ready, the lane's next input was consumed; out_valid &&
// out_ready, an output, compared with the model's; out_valid past the
// model's outputs, an error.
void BlockCosim::take(Lane& l, unsigned lane, std::uint64_t k, std::uint64_t now, bool& progress) {
  const LanePins& p = *l.pins;
  if (p.in_valid.read() && p.in_ready.read()) {
    ++l.in_idx;
    if (l.first_in == 0) l.first_in = k;
    progress = true;
  }
  if (!p.out_valid.read()) return;
  if (l.out_idx < l.outputs) {
    if (p.out_ready.read()) {
      compare(lane, l.out_idx, now);
      ++l.out_idx;
      if (l.first_out == 0) l.first_out = k;
      progress = true;
    }
  } else if (!stream_error_) {
    stream_error_ = lane_error(lane, now, lane_text(lane, LaneText::ExtraOutput, 0, l.out_idx));
  }
}

// Rising edge k: the handshakes just before it, then the clocks rise.
// Whether any lane made progress; `finished` when every lane is done.
bool BlockCosim::rising_edge(std::uint64_t k, bool& finished) {
  wait(edge(2 * k) - sc_core::sc_time_stamp());
  const std::uint64_t now = sc::to_ps(sc_core::sc_time_stamp());
  bool progress = false;
  finished = true;
  for (unsigned li : active_) {
    Lane& l = lanes_[li];
    if (k > 1) take(l, li, k, now, progress);
    finished = finished && l.finished();
  }
  for (unsigned li : active_) lanes_[li].pins->clk.write(true);
  return progress;
}

// No handshake for longer than the stall limit: the first lane not done.
void BlockCosim::find_stall(std::uint64_t idle, std::uint64_t now) {
  for (unsigned li : active_) {
    const Lane& l = lanes_[li];
    if (l.finished()) continue;
    stream_error_ =
        lane_error(li, now,
                   fmt::format("the RTL stalled: no handshake for {} cycles after it took {}", idle,
                               lane_text(li, LaneText::Progress, l.in_idx, l.out_idx)));
    return;
  }
}

// The falling edge: each lane's next input and out_ready (held high while
// the model has outputs left).
void BlockCosim::falling_edge() {
  for (unsigned li : active_) {
    Lane& l = lanes_[li];
    LanePins& p = *l.pins;
    p.clk.write(false);
    p.rst_n.write(true);
    const bool more = l.in_idx < l.inputs;
    p.in_valid.write(more);
    drive(li, l.in_idx, more);
    p.out_ready.write(l.out_idx < l.outputs);
  }
}

// Half a clock after the last rising edge, with the DUT's registers updated
// by it, no lane may offer an output beyond the model's: the stream ends.
void BlockCosim::end_stream(std::uint64_t k) {
  wait(edge(2 * k + 1) - sc_core::sc_time_stamp());
  for (unsigned li : active_) {
    Lane& l = lanes_[li];
    LanePins& p = *l.pins;
    if (!stream_error_ && p.out_valid.read() && l.out_idx == l.outputs)
      stream_error_ = lane_error(li, sc::to_ps(sc_core::sc_time_stamp()),
                                 lane_text(li, LaneText::ExtraOutput, 0, l.out_idx));
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

// Clock by clock until every lane has taken its inputs and given its
// outputs, an error, or a stall.
void BlockCosim::run_stream() {
  reset_lanes();
  std::uint64_t idle = 0, k = 1;
  for (;; ++k) {
    bool finished = true;
    const bool progress = rising_edge(k, finished);
    idle = progress || k == 1 ? 0 : idle + 1;
    if (!finished && idle > cfg_.stall_cycles) {
      find_stall(idle, sc::to_ps(sc_core::sc_time_stamp()));
      finished = true;
    }
    if (finished || stream_error_) break;
    wait(edge(2 * k + 1) - sc_core::sc_time_stamp());
    falling_edge();
  }
  end_stream(k);
}

// ------------------------------------------------------------ the retire gate

void BlockCosim::retire_gate() {
  if (!has_stream_) return;  // not this block's instruction, or nothing to run
  has_stream_ = false;
  const sc_core::sc_time model_end = sc_core::sc_time_stamp();
  while (busy_) wait(done_ev_);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  if (end > model_end) {
    stats_.stretched_ps += sc::to_ps(end - model_end);
    ++stats_.stretched_instructions;
  }
  if (stream_error_) throw fw::KernelFault("co-simulation: " + *stream_error_);
  check_outputs();
}

}  // namespace tpb::cosim
