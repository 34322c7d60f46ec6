#include "models/sc/engine/sequencer.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "models/isa/checker.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::sc {

void RunControl::fault(const std::string& message, std::uint64_t time_ps) {
  if (faulted_) return;
  faulted_ = true;
  message_ = message;
  fault_ps_ = time_ps;
  sc_core::sc_stop();
}

bool RunControl::proceed(std::uint64_t ps) {
  if (has_wall_ && watchdog_ != Watchdog::WallTime &&
      std::chrono::steady_clock::now() >= wall_deadline_) {
    if (latest_ps_ < limit_ps_) {
      limit_ps_ = latest_ps_;
      watchdog_ = Watchdog::WallTime;
    }
    has_wall_ = false;
  }
  if (ps > limit_ps_) {
    if (watchdog_ == Watchdog::None) watchdog_ = Watchdog::SimTime;
    return false;
  }
  if (ps > latest_ps_) latest_ps_ = ps;
  return true;
}

namespace {

// Thrown by a bundle that would begin after the watchdog's stop time; caught
// by execute_one (not a fault).
struct WatchdogStop {};

std::string status_name(tlm::tlm_response_status s) {
  switch (s) {
    case tlm::TLM_OK_RESPONSE:
      return "TLM_OK_RESPONSE";
    case tlm::TLM_INCOMPLETE_RESPONSE:
      return "TLM_INCOMPLETE_RESPONSE";
    case tlm::TLM_GENERIC_ERROR_RESPONSE:
      return "TLM_GENERIC_ERROR_RESPONSE";
    case tlm::TLM_ADDRESS_ERROR_RESPONSE:
      return "TLM_ADDRESS_ERROR_RESPONSE";
    case tlm::TLM_COMMAND_ERROR_RESPONSE:
      return "TLM_COMMAND_ERROR_RESPONSE";
    case tlm::TLM_BURST_ERROR_RESPONSE:
      return "TLM_BURST_ERROR_RESPONSE";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE:
      return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
  }
  return "unknown response";
}

std::string describe_addr(std::uint64_t addr) {
  const auto a = static_cast<std::uint32_t>(addr);
  switch (isa::region_of(a)) {
    case isa::Region::Sbuf:
      return fmt::format("sbuf partition {} offset 0x{:x}", isa::partition_of(a),
                         isa::offset_of(a));
    case isa::Region::Psum:
      return fmt::format("psum partition {} offset 0x{:x}", isa::partition_of(a),
                         isa::offset_of(a));
    case isa::Region::SfuTile:
      return "sfu tile file";
    case isa::Region::Control:
      return "control region";
  }
  return "";
}

}  // namespace

// The kernel's view of this engine (fw::KernelContext).
class Sequencer::Context : public fw::KernelContext {
 public:
  explicit Context(Sequencer& s) : s_(s) {}
  const isa::RawInst& inst() const override { return s_.raw_; }
  isa::Arch arch() const override { return s_.env_.arch; }
  isa::Engine engine() const override { return s_.engine_; }
  std::uint32_t reg(unsigned r) const override { return s_.env_.regs->get(s_.engine_, r); }
  const TimingConfig& timing() const override { return *s_.env_.timing; }
  fw::EngineState& engine_state() override { return s_.state_; }
  std::uint64_t now_ps() const override { return s_.now_ps(); }
  void count(const char* name, std::uint64_t n) override {
    s_.stats_.counters[name] += n;
    s_.inst_counts_.emplace_back(name, n);
  }

  void read(std::uint64_t addr, void* dst, std::size_t len) override {
    access(addr, dst, len, false);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) override {
    access(addr, const_cast<void*>(src), len, true);
  }
  std::uint8_t* direct(std::uint64_t addr, std::size_t len, bool for_write) override {
    sc_core::sc_time d = s_.qk_.get_local_time();
    std::uint8_t* p = s_.port.direct(addr, len, for_write, d);
    s_.qk_.set(d);
    return p;
  }

  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t cycles) override {
    // cycles x trips, saturating: a huge profile value must not wrap.
    const std::uint64_t work =
        cycles != 0 && trips > UINT64_MAX / cycles ? UINT64_MAX : std::uint64_t{cycles} * trips;
    if (b.stream) {
      if (!s_.pipeline_open_) s_.open_pipeline();
      s_.pipeline_compute_ =
          work > UINT64_MAX - s_.pipeline_compute_ ? UINT64_MAX : s_.pipeline_compute_ + work;
    } else if (s_.pipeline_open_) {
      s_.close_pipeline();
    }
    trace::Recorder* rec = s_.env_.recorder;
    const trace::Picos t = s_.now_ps();
    if (!s_.env_.control->proceed(t)) throw WatchdogStop{};
    s_.bundles_.push_back(BundleRecord{&b, t, trips, cycles});
    if (rec && rec->bundles_enabled()) {
      rec->set(s_.sig_pc_, t, b.va);
      if (rec->slices_enabled()) {
        trace::NameId& n = s_.bundle_names_[b.id];
        if (n.v == UINT32_MAX) n = rec->intern(b.name);
        s_.args_.clear();
        fmt::format_to(std::back_inserter(s_.args_),
                       FMT_COMPILE(R"({{"va":"0x{:08x}","trips":{},"cycles":{}}})"), b.va, trips,
                       cycles);
        rec->begin(s_.track_, t, n, std::string_view(s_.args_.data(), s_.args_.size()));
        ++s_.open_slices_;
        bundle_open_ = true;
      }
    }
    s_.bundle_trips_[b.id] += trips;
    // A streaming bundle's step moves its data from the bundle's start (its
    // accesses book bandwidth there); its compute is on the clock at its end.
    if (b.stream)
      deferred_ = work;
    else
      s_.add_cycles(work);
  }
  void end_bundle(const fw::Bundle&) override {
    if (deferred_ != 0) {
      s_.add_cycles(deferred_);
      deferred_ = 0;
    }
    // Past a watchdog's stop the slice is left open: watchdog_stop closes it
    // at the stop time.
    if (!s_.env_.control->proceed(s_.now_ps())) throw WatchdogStop{};
    if (bundle_open_) {
      s_.env_.recorder->end(s_.track_, s_.now_ps());
      --s_.open_slices_;
      bundle_open_ = false;
    }
  }

 private:
  void access(std::uint64_t addr, void* data, std::size_t len, bool is_write) {
    if (len == 0) return;
    if (len > UINT32_MAX)
      throw fw::KernelFault(fmt::format("access of {} bytes at 0x{:07x} is too long", len, addr));
    // MemPort takes its DMI fast path itself, charged as b_transport would be.
    sc_core::sc_time d = s_.qk_.get_local_time();
    const auto n = static_cast<unsigned>(len);
    const tlm::tlm_response_status st =
        is_write ? s_.port.write(addr, data, n, d) : s_.port.read(addr, data, n, d);
    s_.qk_.set(d);
    if (st != tlm::TLM_OK_RESPONSE)
      throw fw::KernelFault(fmt::format("address error: {} of {} bytes at 0x{:07x} ({}): {}",
                                        is_write ? "write" : "read", len, addr, describe_addr(addr),
                                        status_name(st)));
  }

  Sequencer& s_;
  std::uint64_t deferred_ = 0;  // compute cycles of the open streaming bundle
  bool bundle_open_ = false;    // its trace slice is open
};

Sequencer::Sequencer(sc_core::sc_module_name name, isa::Engine engine, SequencerEnv env,
                     KernelInfoTable table)
    : sc_core::sc_module(name),
      port("port"),
      engine_(engine),
      env_(std::move(env)),
      table_(std::move(table)),
      bundle_trips_(env_.kernels->num_bundles(), 0),
      overhead_time_(engine_time(*env_.timing, engine, env_.timing->overhead(engine))),
      op_names_(256),
      bundle_names_(env_.kernels->num_bundles()) {
  stats_.name = isa::engine_name(engine);
  stats_.clock_mhz = env_.timing->clock(engine);
  if (trace::Recorder* rec = env_.recorder) {
    const std::string scope = std::string("tpb.") + isa::engine_name(engine);
    sig_busy_ = rec->add_signal(scope, "busy", 1);
    sig_opcode_ = rec->add_signal(scope, "opcode", 8);
    sig_pc_ = rec->add_signal(scope, "pc", 32);
    sig_index_ = rec->add_signal(scope, "inst_index", 32);
    sig_marker_ = rec->add_signal(scope, "marker", 1);
    sig_hint_ = rec->add_signal(scope, "marker_hint", 8);
    track_ = rec->add_track("tpb core", isa::engine_name(engine));
  }
  SC_HAS_PROCESS(Sequencer);
  SC_THREAD(run);
}

sc_core::sc_time Sequencer::now() const { return sc_core::sc_time_stamp() + qk_.get_local_time(); }
trace::Picos Sequencer::now_ps() const { return to_ps(now()); }

void Sequencer::add_cycles(std::uint64_t cycles) {
  const std::uint32_t mhz = env_.timing->clock(engine_);
  const std::uint64_t before = TimingConfig::cycles_to_ps(inst_cycles_, mhz);
  inst_cycles_ = cycles > UINT64_MAX - inst_cycles_ ? UINT64_MAX : inst_cycles_ + cycles;
  const std::uint64_t after = TimingConfig::cycles_to_ps(inst_cycles_, mhz);
  qk_.inc(ps_time(after - before));
}

void Sequencer::open_pipeline() {
  lanes_.reset();
  port.begin_stream(&lanes_);
  pipeline_open_ = true;
  pipeline_compute_ = 0;
}

void Sequencer::close_pipeline() {
  port.end_stream();
  pipeline_open_ = false;
  const TimingConfig& t = *env_.timing;
  const sc_core::sc_time compute = engine_time(t, engine_, pipeline_compute_);
  const sc_core::sc_time mem = std::max(lanes_.max_read(), lanes_.max_write());
  // The compute is already on the clock; add the fill and what memory takes
  // beyond it. The first stream's requests go out while the instruction's
  // fixed overhead runs (decode, dispatch), so its fill counts only beyond
  // that overhead.
  const sc_core::sc_time over = mem > compute ? mem - compute : sc_core::SC_ZERO_TIME;
  const sc_core::sc_time fill =
      lanes_.fill() > fill_credit_ ? lanes_.fill() - fill_credit_ : sc_core::SC_ZERO_TIME;
  fill_credit_ = sc_core::SC_ZERO_TIME;
  qk_.inc(fill + over);
  stats_.memory_stall_cycles += engine_cycles(t, engine_, over);
}

std::string Sequencer::where() const {
  const std::string_view m = isa::opcode_mnemonic(opcode_);
  return fmt::format("{} instruction {} (opcode 0x{:02x}{}{})", isa::engine_name(engine_), index_,
                     opcode_, m.empty() ? "" : " ", m);
}

void Sequencer::fault(const std::string& what) {
  if (!env_.control->proceed(now_ps())) {  // past a watchdog's stop: not recorded
    watchdog_stop();
    return;
  }
  // The faulting instruction's time up to the fault is busy time.
  if (in_flight_) {
    const std::uint64_t t = now_ps();
    if (t > inst_fetch_ps_)
      stats_.busy_cycles += engine_cycles(*env_.timing, engine_, ps_time(t - inst_fetch_ps_));
    in_flight_ = false;
  }
  trace_end_open_slices();
  env_.control->fault(where() + ": " + what, now_ps());
}

void Sequencer::watchdog_stop() {
  if (pipeline_open_) {
    port.end_stream();
    pipeline_open_ = false;
  }
  trace_end_open_slices(std::min<std::uint64_t>(now_ps(), env_.control->stop_ps()));
  stopped_ = true;
}

void Sequencer::trace_end_open_slices() { trace_end_open_slices(now_ps()); }

void Sequencer::trace_end_open_slices(trace::Picos t) {
  trace::Recorder* rec = env_.recorder;
  if (!rec) return;
  for (; open_slices_ > 0; --open_slices_) rec->end(track_, t);
  rec->set(sig_busy_, t, 0);
}

trace::EngineStats Sequencer::stats() const {
  trace::EngineStats s = stats_;
  for (std::uint32_t id = 0; id < bundle_trips_.size(); ++id)
    if (bundle_trips_[id] != 0) s.bundles[env_.kernels->bundle(id)->name] = bundle_trips_[id];
  s.bytes_read = s.bytes_written = 0;
  // Data bytes (SBUF quadrants, PSUM); instruction fetches are not counted.
  for (unsigned i = 0; i < MemPort::kCountOther; ++i) {
    s.bytes_read += port.bytes_read()[i];
    s.bytes_written += port.bytes_written()[i];
  }
  return s;
}

void Sequencer::await_fetch() {
  while (!batches_.empty() && batches_.front().end <= index_) batches_.pop_front();
  if (batches_.empty() || index_ < batches_.front().start) return;  // in the ring already
  const std::uint64_t t = now_ps();
  const std::uint64_t ready = batches_.front().ready_ps;
  if (ready <= t) return;
  qk_.inc(ps_time(ready - t));
  stats_.fetch_stall_cycles += engine_cycles(*env_.timing, engine_, ps_time(ready - t));
}

void Sequencer::issue_refill() {
  InstructionQueue& q = *env_.queue;
  const TimingConfig::Fetch& f = env_.timing->fetch;
  // Instructions 0..index_ are fetched: the ring's free slots are those of
  // words older than index_ + 1; a batch goes out when one batch fits.
  const std::uint64_t in_ring = q.loaded() - (index_ + 1);
  if (q.loaded() >= q.total() || q.ring_words() - in_ring < f.batch_words) return;
  const std::size_t n = q.refill(f.batch_words);
  // The DMA moves n words at mbytes_per_s after its start latency; batches
  // queue behind each other on the one fetch DMA.
  const std::uint64_t xfer_ps =
      (std::uint64_t{n} * isa::kInstBytes * 1000000ull + f.mbytes_per_s - 1) / f.mbytes_per_s;
  const std::uint64_t issue = std::max<std::uint64_t>(now_ps(), fetch_free_ps_);
  fetch_free_ps_ = issue + xfer_ps;
  batches_.push_back(
      Batch{q.loaded() - n, q.loaded(), issue + std::uint64_t{f.latency_ns} * 1000 + xfer_ps});
}

Sequencer::Totals Sequencer::totals() const {
  return Totals{stats_.instructions,        stats_.busy_cycles,        stats_.stall_cycles,
                stats_.memory_stall_cycles, stats_.fetch_stall_cycles, port.bytes_read(),
                port.bytes_written()};
}

void Sequencer::record_retired(std::uint64_t start_ps, std::uint64_t end_ps) {
  // Drop what the global time has passed: a fault can no longer come before it.
  const std::uint64_t now = to_ps(sc_core::sc_time_stamp());
  while (!retired_.empty() && retired_.front().end_ps < now) {
    for (std::size_t k = 0; k < retired_.front().bundles; ++k) retired_trips_.pop_front();
    retired_.pop_front();
  }
  for (const BundleRecord& b : bundles_) retired_trips_.emplace_back(b.bundle->id, b.trips);
  retired_.push_back(Retired{start_ps, end_ps, before_, bundles_.size(), {}});
  if (!inst_counts_.empty()) retired_.back().counts.swap(inst_counts_);
}

void Sequencer::stop_at(std::uint64_t t_ps) {
  std::size_t first = 0;  // the first instruction retired after t_ps
  std::size_t trip0 = 0;  // its first retired_trips_ entry
  while (first < retired_.size() && retired_[first].end_ps <= t_ps) {
    trip0 += retired_[first].bundles;
    ++first;
  }
  std::uint64_t busy_from = in_flight_ ? inst_fetch_ps_ : t_ps;
  if (first < retired_.size()) {
    const Totals& b = retired_[first].before;
    stats_.instructions = b.instructions;
    stats_.busy_cycles = b.busy;
    stats_.stall_cycles = b.stall;
    stats_.memory_stall_cycles = b.memory_stall;
    stats_.fetch_stall_cycles = b.fetch_stall;
    port.set_counts(b.rd, b.wr);
    for (std::size_t k = trip0; k < retired_trips_.size(); ++k)
      bundle_trips_[retired_trips_[k].first] -= retired_trips_[k].second;
    for (std::size_t i = first; i < retired_.size(); ++i)
      for (const auto& [name, n] : retired_[i].counts) stats_.counters[name] -= n;
    busy_from = retired_[first].start_ps;
  }
  if (busy_from < t_ps)
    stats_.busy_cycles += engine_cycles(*env_.timing, engine_, ps_time(t_ps - busy_from));
  retired_.clear();
  retired_trips_.clear();
  in_flight_ = false;
}

void Sequencer::run() {
  wait(env_.control->start_event());
  qk_.reset();
  const std::uint64_t count = env_.queue->total();
  for (index_ = 0; index_ < count; ++index_) {
    before_ = totals();
    inst_counts_.clear();
    inst_fetch_ps_ = now_ps();
    in_flight_ = true;
    await_fetch();
    if (!execute_one()) return;
    in_flight_ = false;
    if (qk_.need_sync()) qk_.sync();
  }
  qk_.sync();
  done_ = true;
}

bool Sequencer::execute_one() {
  trace::Recorder* rec = env_.recorder;
  const TimingConfig& timing = *env_.timing;
  opcode_ = 0;
  inst_cycles_ = 0;
  bundles_.clear();

  // Fetch (SPEC §7): 64 bytes from this engine's queue, timed by the queue.
  const sc_core::sc_time t_fetch = now();
  sc_core::sc_time d = qk_.get_local_time();
  const std::uint64_t fetch_addr = queue_base(engine_) + env_.queue->slot_addr(index_);
  const tlm::tlm_response_status fst = port.read(fetch_addr, raw_.data(), isa::kInstBytes, d);
  qk_.set(d);
  if (fst != tlm::TLM_OK_RESPONSE) {
    fault(fmt::format("fetch of 64 bytes at 0x{:07x} failed: {}", fetch_addr, status_name(fst)));
    return false;
  }
  issue_refill();
  const sc_core::sc_time fetch_time = now() - t_fetch;
  const isa::Header h = isa::header_of(raw_);
  opcode_ = h.opcode;
  events_ = isa::events_of(raw_);

  // Semaphore wait: sync first so the condition is evaluated at this
  // engine's true time; a malformed EVENTS field is left to the checker.
  const auto wm = static_cast<isa::WaitMode>(events_.wait_mode);
  const bool wait_ok = events_.wait_mode <= 2 && events_.wait_idx < isa::kNumSemaphores;
  if (wait_ok && wm != isa::WaitMode::None &&
      !env_.sems->satisfied(wm, events_.wait_idx, events_.sem_value)) {
    qk_.sync();
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    blocked_ = true;
    while (!env_.sems->satisfied(wm, events_.wait_idx, events_.sem_value))
      wait(env_.sems->changed_event());
    blocked_ = false;
    stats_.stall_cycles += engine_cycles(timing, engine_, sc_core::sc_time_stamp() - t0);
  }

  const sc_core::sc_time t_start = now();
  if (!env_.control->proceed(to_ps(t_start))) {
    watchdog_stop();
    return false;
  }
  const std::string_view mnem = isa::opcode_mnemonic(opcode_);
  if (rec) {
    const trace::Picos t = to_ps(t_start);
    rec->set(sig_busy_, t, 1);
    rec->set(sig_opcode_, t, opcode_);
    rec->set(sig_index_, t, index_);
    if (rec->slices_enabled()) {
      trace::NameId& n = op_names_[opcode_];
      if (n.v == UINT32_MAX)
        n = rec->intern(mnem.empty() ? fmt::format("op_0x{:02x}", opcode_) : std::string(mnem));
      args_.clear();
      fmt::format_to(std::back_inserter(args_),
                     FMT_COMPILE(R"({{"index":{},"opcode":"0x{:02x}"}})"), index_, opcode_);
      rec->begin(track_, t, n, std::string_view(args_.data(), args_.size()));
      ++open_slices_;
    }
    if (h.debug_cmd == 1) {  // SPEC §2: trace marker carrying debug_hint
      marker_level_ = !marker_level_;
      rec->set(sig_marker_, t, marker_level_);
      rec->set(sig_hint_, t, h.debug_hint);
      if (rec->slices_enabled())
        rec->instant(track_, t, "marker", fmt::format(R"({{"hint":{}}})", h.debug_hint));
    }
  }

  // Validity (SPEC §1): every failed predicate by name. An opcode the
  // checker has no contract for ("has_known_opcode" alone) is reported by
  // what the dispatch makes of it: unknown (no kernel_info record) or not
  // modelled (a record whose kernel this model does not implement).
  const isa::CheckResult check = isa::check_instruction(raw_, env_.arch);
  const std::optional<KernelInfoRecord> rec_ki = table_.lookup(opcode_);
  const bool unknown_only = check.failed.size() == 1 && check.failed[0] == "has_known_opcode";
  if (!check.valid() && !unknown_only) {
    std::string names;
    for (std::string_view n : check.failed) names += (names.empty() ? "" : ", ") + std::string(n);
    fault(fmt::format("invalid instruction on {}{}: failed {}", isa::arch_name(env_.arch),
                      check.contract.empty() ? "" : " (" + check.contract + ")", names));
    return false;
  }

  // Dispatch (seed 000 §1): kernel_info record -> trampoline -> worker.
  if (!rec_ki) {
    fault(fmt::format("unknown opcode 0x{:02x}: no record in the {} kernel_info table{}", opcode_,
                      isa::engine_name(engine_), unknown_only ? " (failed has_known_opcode)" : ""));
    return false;
  }
  if (unknown_only || !env_.kernels->find(rec_ki->func_va)) {
    fault(
        fmt::format("kernel_info idx{} dispatches opcode 0x{:02x} to trampoline 0x{:08x}, a "
                    "kernel this model does not implement (not modelled)",
                    rec_ki->index, opcode_, rec_ki->func_va));
    return false;
  }
  add_cycles(timing.overhead(engine_));
  fill_credit_ = overhead_time_;
  Context ctx(*this);
  try {
    env_.kernels->execute(rec_ki->func_va, ctx, *env_.costs);
  } catch (const fw::KernelFault& e) {
    if (pipeline_open_) close_pipeline();
    fault(e.what());
    return false;
  } catch (const WatchdogStop&) {
    watchdog_stop();
    return false;
  }
  if (pipeline_open_) close_pipeline();
  // Simulated time never wraps: a profile whose values push an instruction
  // past kMaxPs (2^62 ps) faults here instead.
  if (now_ps() >= TimingConfig::kMaxPs) {
    fault(
        fmt::format("simulated time reached {} ps (2^62): the timing profile's cycle counts are "
                    "too large for this program",
                    TimingConfig::kMaxPs));
    return false;
  }

  // The retire gate (co-simulation): on the kernel's clock, it may wait.
  if (retire_gate_) {
    qk_.sync();
    try {
      retire_gate_();
    } catch (const fw::KernelFault& e) {
      fault(e.what());
      return false;
    }
  }

  // Retire (stats, retire line, trace), then the semaphore update at the
  // engine's true time; a watchdog stops it when it would end after its limit.
  const sc_core::sc_time t_end = now();
  if (!env_.control->proceed(to_ps(t_end))) {
    watchdog_stop();
    return false;
  }
  ++stats_.instructions;
  stats_.busy_cycles += engine_cycles(timing, engine_, fetch_time + (t_end - t_start));
  if (rec) {
    const trace::Picos t = to_ps(t_end);
    if (rec->slices_enabled()) {
      rec->end(track_, t);
      --open_slices_;
    }
    rec->set(sig_busy_, t, 0);
  }
  record_retired(to_ps(t_fetch), to_ps(t_end));
  if (env_.on_retire)
    env_.on_retire(RetireRecord{engine_, index_, opcode_, to_ps(t_start), to_ps(t_end),
                                bundles_.data(), bundles_.size()});
  const auto um = static_cast<isa::UpdateMode>(events_.update_mode);
  if (um != isa::UpdateMode::None) {
    qk_.sync();
    env_.sems->apply_update(um, events_.update_idx, events_.sem_value);
  }
  return true;
}

}  // namespace tpb::sc
