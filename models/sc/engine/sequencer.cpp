#include "models/sc/engine/sequencer.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "models/isa/checker.h"
#include "models/isa/program.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::sc {

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

// A fault from a kernel: an address error names itself, anything else is
// the kernel's own.
const char* kernel_fault_kind(const std::string& what) {
  return what.rfind("address error", 0) == 0 ? "address" : "kernel";
}

}  // namespace

// The kernel's view of this engine (fw::KernelContext).
class Sequencer::Context : public fw::KernelContext {
 public:
  explicit Context(Sequencer& s) : s_(s) {}
  // A new instruction: no streaming bundle open, no scratch set (its
  // storage kept: KernelContext::set_scratch).
  void begin_instruction() {
    deferred_ = 0;
    new_instruction();
  }
  const isa::RawInst& inst() const override { return s_.raw_; }
  isa::Arch arch() const override { return s_.cfg_.arch; }
  isa::Engine engine() const override { return s_.engine_; }
  std::uint32_t reg(unsigned r) const override { return s_.env_.regs->get(s_.engine_, r); }
  const TimingConfig& timing() const override { return *s_.cfg_.timing; }
  fw::EngineState& engine_state() override { return s_.state_; }
  // Absolute simulated time: a co-simulation harness compares it with
  // sc_time_stamp().
  std::uint64_t now_ps() const override { return to_ps(s_.env_.control->origin()) + s_.now_ps(); }
  void count(const char* name, std::uint64_t n) override {
    s_.notify([&](SequencerObserver& o) { o.on_count(name, n); });
  }
  bool timing_only() const override { return s_.timing_only_; }

  void read(std::uint64_t addr, void* dst, std::size_t len) override {
    access(addr, dst, len, false);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) override {
    access(addr, const_cast<void*>(src), len, true);
  }
  std::uint8_t* direct(std::uint64_t addr, std::size_t len, bool for_write) override {
    s_.flush_time();
    sc_core::sc_time d = s_.qk_.get_local_time();
    std::uint8_t* p = s_.port.direct(addr, len, for_write, d);
    s_.qk_.set(d);
    return p;
  }

  void begin_bundle(const fw::Bundle& b, std::uint64_t trips, std::uint32_t cycles) override {
    // cycles x trips, saturating: a huge profile value must not wrap.
    std::uint64_t work;
    if (__builtin_mul_overflow(std::uint64_t{cycles}, trips, &work)) work = UINT64_MAX;
    if (b.stream) {
      if (!s_.pipeline_open_) s_.open_pipeline();
      s_.pipeline_compute_ =
          work > UINT64_MAX - s_.pipeline_compute_ ? UINT64_MAX : s_.pipeline_compute_ + work;
    } else if (s_.pipeline_open_) {
      s_.close_pipeline();
    }
    const std::uint64_t t = s_.now_ps();
    if (!s_.env_.control->proceed(t)) throw WatchdogStop{};
    // Field by field into the vector (a temporary copied in whole stalled
    // on store forwarding: its 16-byte loads spanned the 8- and 4-byte stores).
    BundleRecord& rec = s_.bundles_.emplace_back();
    rec.bundle = &b;
    rec.start_ps = t;
    rec.trips = trips;
    rec.cycles = cycles;
    for (SequencerObserver* o : s_.bundle_observers_) o->on_bundle(b, t, trips, cycles);
    // A streaming bundle's step moves its data from the bundle's start (its
    // accesses book bandwidth there); its compute is on the clock at its end.
    if (b.stream)
      deferred_ = work;
    else
      s_.add_cycles(work);
  }
  void end_bundle(const fw::Bundle& b) override {
    if (deferred_ != 0) {
      s_.add_cycles(deferred_);
      deferred_ = 0;
    }
    // Past a watchdog's stop the bundle is left open: watchdog_stop ends it
    // at the stop time.
    const std::uint64_t t = s_.now_ps();
    if (!s_.env_.control->proceed(t)) throw WatchdogStop{};
    for (SequencerObserver* o : s_.bundle_end_observers_) o->on_bundle_end(b, t);
  }

 private:
  void access(std::uint64_t addr, void* data, std::size_t len, bool is_write) {
    if (len == 0) return;
    if (len > UINT32_MAX)
      throw fw::KernelFault(fmt::format("access of {} bytes at 0x{:07x} is too long", len, addr));
    // MemPort takes its DMI fast path itself, charged as b_transport would be.
    s_.flush_time();
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

 private:
  Sequencer& s_;
  std::uint64_t deferred_ = 0;  // compute cycles of the open streaming bundle
};

Sequencer::Sequencer(sc_core::sc_module_name name, isa::Engine engine, SequencerEnv env,
                     SequencerConfig cfg)
    : sc_core::sc_module(name),
      port("port"),
      engine_(engine),
      env_(env),
      ctx_(std::make_unique<Context>(*this)) {
  configure(std::move(cfg));
  SC_HAS_PROCESS(Sequencer);
  SC_THREAD(thread);
}

Sequencer::~Sequencer() = default;

void Sequencer::configure(SequencerConfig cfg) {
  cfg_ = std::move(cfg);
  clock_ = timing::ClockDivider(cfg_.timing->clock(engine_));
  overhead_time_ = engine_time(*cfg_.timing, engine_, cfg_.timing->overhead(engine_));
  if (isa::is_dma_queue(engine_))
    dma_ = std::make_unique<DmaExecutor>(port, env_.hbm, dma_timing(*cfg_.timing));
}

bool Sequencer::execute_dma() {
  if (opcode_ != static_cast<std::uint8_t>(isa::Opcode::DmaCopy)) {
    fault("dispatch", fmt::format("a DMA queue executes DMA descriptors only (dma_copy, opcode "
                                  "0x{:02x}), not opcode 0x{:02x}",
                                  static_cast<unsigned>(isa::Opcode::DmaCopy), opcode_));
    return false;
  }
  isa::DmaDescriptor d;
  std::memcpy(&d, raw_.data(), sizeof d);
  flush_time();
  DmaResult r;
  try {
    r = dma_->execute(d, qk_);  // waits for the HBM's bandwidth
    refresh_stamp();
  } catch (const DmaFault& e) {
    refresh_stamp();
    // "address error: ..." or "<predicate>(side): ..." (nothing was written).
    const std::string what = e.what();
    if (what.rfind("address error", 0) == 0) {
      fault("address", what);
    } else {
      const std::size_t cut = what.find_first_of("(:");
      fault("invalid", "invalid DMA descriptor: " + what, {what.substr(0, cut)});
    }
    return false;
  }
  // The transfer waits are not the run's: a fault elsewhere ends it here.
  if (env_.control->aborted()) throw RunControl::Abort{};
  const bool src_hbm = d.src.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
  const bool dst_hbm = d.dst.kind == static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
  const bool add = d.dst_rmw_op == static_cast<std::uint8_t>(isa::DmaRmwOp::Add);
  notify([&](SequencerObserver& o) {
    o.on_count("dma_bytes", r.bytes);
    if (src_hbm || (dst_hbm && add))
      o.on_count("hbm_read_bytes", (src_hbm ? r.bytes : 0) + (dst_hbm && add ? r.bytes : 0));
    if (dst_hbm) o.on_count("hbm_write_bytes", r.bytes);
  });
  return true;
}

void Sequencer::add_observer(SequencerObserver* o) {
  observers_.push_back(o);
  if (o->wants_bundle_starts()) bundle_observers_.push_back(o);
  if (o->wants_bundle_ends()) bundle_end_observers_.push_back(o);
}

void Sequencer::remove_observer(SequencerObserver* o) {
  for (auto* v : {&observers_, &bundle_observers_, &bundle_end_observers_})
    v->erase(std::remove(v->begin(), v->end(), o), v->end());
}

std::uint64_t Sequencer::now_ps() const {
  // The simulated time moves only while this thread waits, and every wait
  // of the engine's thread is followed by refresh_stamp().
  assert(stamp_ps_ == env_.control->rel_ps(sc_core::sc_time_stamp()));
  return stamp_ps_ + qk_.get_local_time().value() + pending_ps_;
}
void Sequencer::refresh_stamp() { stamp_ps_ = env_.control->rel_ps(sc_core::sc_time_stamp()); }

void Sequencer::sync() {
  flush_time();
  RunControl& c = *env_.control;
  if (c.aborted()) throw RunControl::Abort{};
  wait(qk_.get_local_time(), c.abort_event());
  refresh_stamp();
  if (c.aborted()) throw RunControl::Abort{};
  qk_.reset();
}

void Sequencer::add_cycles(std::uint64_t cycles) {
  inst_cycles_ = cycles > UINT64_MAX - inst_cycles_ ? UINT64_MAX : inst_cycles_ + cycles;
  const std::uint64_t after = TimingConfig::cycles_to_ps(inst_cycles_, clock_);
  pending_ps_ += after - inst_ps_;
  inst_ps_ = after;
}

void Sequencer::open_pipeline() {
  lanes_.reset();
  port.begin_stream(&lanes_);
  pipeline_open_ = true;
  pipeline_compute_ = 0;
}

void Sequencer::close_pipeline() {
  flush_time();
  port.end_stream();
  pipeline_open_ = false;
  const TimingConfig& t = *cfg_.timing;
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
  const std::uint64_t stall = engine_cycles(t, engine_, over);
  notify([&](SequencerObserver& o) { o.on_stall(StallKind::Memory, stall); });
}

std::string Sequencer::where() const {
  const std::string_view m = isa::opcode_mnemonic(opcode_);
  return fmt::format("{} instruction {} (opcode 0x{:02x}{}{})", isa::engine_name(engine_), index_,
                     opcode_, m.empty() ? "" : " ", m);
}

void Sequencer::fault(std::string kind, std::string what, std::vector<std::string> predicates) {
  const std::uint64_t t = now_ps();
  if (!env_.control->proceed(t)) {  // past a watchdog's stop: not recorded
    watchdog_stop();
    return;
  }
  notify([&](SequencerObserver& o) { o.on_fault(t); });
  FaultInfo info;
  info.engine = engine_;
  info.index = index_;
  info.opcode = opcode_;
  info.kind = std::move(kind);
  info.predicates = std::move(predicates);
  info.message = where() + ": " + what;
  env_.control->fault(std::move(info), t);
}

void Sequencer::watchdog_stop() {
  if (pipeline_open_) {
    port.end_stream();
    pipeline_open_ = false;
  }
  const std::uint64_t t = std::min<std::uint64_t>(now_ps(), env_.control->stop_ps());
  notify([&](SequencerObserver& o) { o.on_stop(t); });
  stopped_ = true;
}

void Sequencer::thread() {
  for (;;) {
    wait(env_.control->start_event());
    done_ = blocked_ = stopped_ = false;
    index_ = 0;
    opcode_ = 0;
    try {
      run_program();
    } catch (const RunControl::Abort&) {
      // The run was aborted (a fault elsewhere, or a deadlock): nothing more
      // happens on this engine until the next run.
      if (pipeline_open_) {
        port.end_stream();
        pipeline_open_ = false;
      }
    }
    env_.control->engine_finished();
  }
}

void Sequencer::run_program() {
  qk_.reset();
  pending_ps_ = 0;
  refresh_stamp();
  fetch_.reset(*env_.queue, cfg_.timing->fetch);
  const std::uint64_t count = env_.queue->total();
  notify([&](SequencerObserver& o) { o.on_run_start(now_ps()); });
  for (index_ = 0; index_ < count; ++index_) {
    const std::uint64_t t = now_ps();
    notify([&](SequencerObserver& o) { o.on_fetch(index_, t); });
    // Instruction fetch (SPEC §7, §9): a word that has not landed yet is a wait.
    const std::uint64_t ready = fetch_.ready_at(index_, t);
    if (ready > t) {
      qk_.inc(ps_time(ready - t));
      const std::uint64_t stall = engine_cycles(*cfg_.timing, engine_, ps_time(ready - t));
      notify([&](SequencerObserver& o) { o.on_stall(StallKind::Fetch, stall); });
    }
    if (!execute_one()) return;
    flush_time();
    if (qk_.need_sync()) sync();
  }
  sync();
  done_ = true;
}

bool Sequencer::execute_one() {
  const TimingConfig& timing = *cfg_.timing;
  opcode_ = 0;
  inst_cycles_ = 0;
  inst_ps_ = 0;  // pending_ps_ is 0: run_program flushed after the last one
  bundles_.clear();

  // Fetch (SPEC §7): 64 bytes from this engine's queue, timed by the queue.
  const std::uint64_t fetch_ps = now_ps();
  sc_core::sc_time d = qk_.get_local_time();
  const std::uint64_t fetch_addr = queue_base(engine_) + env_.queue->slot_addr(index_);
  const tlm::tlm_response_status fst = port.read(fetch_addr, raw_.data(), isa::kInstBytes, d);
  qk_.set(d);
  if (fst != tlm::TLM_OK_RESPONSE) {
    fault("fetch",
          fmt::format("fetch of 64 bytes at 0x{:07x} failed: {}", fetch_addr, status_name(fst)));
    return false;
  }
  const std::uint64_t fetched_ps = now_ps();
  fetch_.fetched(index_, fetched_ps);
  const isa::Header h = isa::header_of(raw_);
  opcode_ = h.opcode;
  events_ = isa::events_of(raw_);

  // Semaphore wait: sync first so the condition is evaluated at this
  // engine's true time; a malformed EVENTS field is left to the checker.
  const auto wm = static_cast<isa::WaitMode>(events_.wait_mode);
  const bool wait_ok = events_.wait_mode <= 2 && events_.wait_idx < isa::kNumSemaphores;
  if (wait_ok && wm != isa::WaitMode::None &&
      !env_.sems->satisfied(wm, events_.wait_idx, events_.sem_value)) {
    sync();
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    blocked_ = true;
    while (!env_.sems->satisfied(wm, events_.wait_idx, events_.sem_value)) {
      wait(env_.sems->changed_event() | env_.control->abort_event());
      refresh_stamp();
      if (env_.control->aborted()) throw RunControl::Abort{};
    }
    blocked_ = false;
    const std::uint64_t stall = engine_cycles(timing, engine_, sc_core::sc_time_stamp() - t0);
    notify([&](SequencerObserver& o) { o.on_stall(StallKind::Semaphore, stall); });
  }

  const std::uint64_t start_ps = now_ps();
  if (!env_.control->proceed(start_ps)) {
    watchdog_stop();
    return false;
  }
  const IssueEvent issue{engine_, index_, opcode_, &raw_, start_ps};
  notify([&](SequencerObserver& o) { o.on_issue(issue); });

  // Validity (SPEC §1): every failed predicate by name. An opcode the
  // checker has no contract for ("has_known_opcode" alone) is reported by
  // what the dispatch makes of it: unknown (no kernel_info record) or not
  // modelled (a record whose kernel this model does not implement).
  // Against the core's configured capacities (a profile may enlarge HBM or SBUF).
  const TimingConfig& tc = *cfg_.timing;
  isa::CheckResult check = isa::check_instruction(
      raw_, cfg_.arch,
      isa::MemoryCapacity{tc.sbuf_bytes_per_partition, tc.psum_bytes_per_partition, tc.hbm.bytes});
  if (!isa::dma_copy_on_its_queue(engine_, raw_)) check.failed.push_back("dma_copy_on_its_queue");
  const std::optional<KernelInfoRecord> rec_ki = cfg_.table.lookup(opcode_);
  const bool unknown_only = check.failed.size() == 1 && check.failed[0] == "has_known_opcode";
  if (!check.valid() && !unknown_only) {
    std::string names;
    std::vector<std::string> preds;
    for (std::string_view n : check.failed) {
      names += (names.empty() ? "" : ", ") + std::string(n);
      preds.emplace_back(n);
    }
    fault(
        "invalid",
        fmt::format("invalid instruction on {}{}: failed {}", isa::arch_name(cfg_.arch),
                    check.contract.empty() ? "" : " (" + std::string(check.contract) + ")", names),
        std::move(preds));
    return false;
  }

  if (isa::is_dma_queue(engine_)) {
    if (!execute_dma()) return false;
  } else {
    // Dispatch (seed 000 §1): kernel_info record -> trampoline -> worker.
    if (!rec_ki) {
      fault(
          "dispatch",
          fmt::format("unknown opcode 0x{:02x}: no record in the {} kernel_info table{}", opcode_,
                      isa::engine_name(engine_), unknown_only ? " (failed has_known_opcode)" : ""));
      return false;
    }
    const fw::Kernel* worker = unknown_only ? nullptr : env_.kernels->find(rec_ki->func_va);
    if (!worker) {
      fault("dispatch",
            fmt::format("kernel_info idx{} dispatches opcode 0x{:02x} to trampoline 0x{:08x}, a "
                        "kernel this model does not implement (not modelled)",
                        rec_ki->index, opcode_, rec_ki->func_va));
      return false;
    }
    add_cycles(timing.overhead(engine_));
    fill_credit_ = overhead_time_;
    Context& ctx = *ctx_;
    ctx.begin_instruction();
    try {
      env_.kernels->execute(*worker, ctx, *cfg_.costs);
    } catch (const fw::KernelFault& e) {
      if (pipeline_open_) close_pipeline();
      fault(kernel_fault_kind(e.what()), e.what());
      return false;
    } catch (const WatchdogStop&) {
      watchdog_stop();
      return false;
    }
    if (pipeline_open_) close_pipeline();
  }
  // Simulated time never wraps: a profile whose values push an instruction
  // past kMaxPs (2^62 ps) faults here instead.
  if (now_ps() >= TimingConfig::kMaxPs) {
    fault("time",
          fmt::format("simulated time reached {} ps (2^62): the timing profile's cycle counts are "
                      "too large for this program",
                      TimingConfig::kMaxPs));
    return false;
  }

  // The retire gate (co-simulation): on the kernel's clock, it may wait.
  if (retire_gate_) {
    sync();
    try {
      retire_gate_();  // may wait
      refresh_stamp();
    } catch (const fw::KernelFault& e) {
      refresh_stamp();
      fault("cosim", e.what());
      return false;
    }
  }

  // Retire (stats, retire line, trace), then the semaphore update at the
  // engine's true time; a watchdog stops it when it would end after its limit.
  const std::uint64_t end_ps = now_ps();
  if (!env_.control->proceed(end_ps)) {
    watchdog_stop();
    return false;
  }
  const RetireRecord rr{engine_,         index_,          opcode_,  start_ps,  end_ps,
                        bundles_.data(), bundles_.size(), fetch_ps, fetched_ps};
  notify([&](SequencerObserver& o) { o.on_retire(rr); });
  const auto um = static_cast<isa::UpdateMode>(events_.update_mode);
  if (um != isa::UpdateMode::None) {
    sync();
    env_.sems->apply_update(um, events_.update_idx, events_.sem_value);
  }
  return true;
}

}  // namespace tpb::sc
