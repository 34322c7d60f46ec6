// The Sequencer's thread and its named steps (sequencer.h): step() runs an
// instruction through fetch, wait, check, dispatch, execute and issue; the
// completions, the faults and the watchdog's stop. Its roles of their own:
// Context (sequencer_context.cpp), DmaQueue (dma_queue.cpp), EngineClock
// (engine_clock.h).
#include "models/sc/engine/sequencer.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "models/isa/checker.h"
#include "models/isa/opcode_table.h"
#include "models/isa/predicates.h"
#include "models/isa/program.h"
#include "models/race/detector.h"
#include "models/sc/engine/dma_queue.h"
#include "models/sc/engine/sequencer_context.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::sc {

namespace {

// A fault from a kernel: an address error names itself, anything else is
// the kernel's own.
const char* kernel_fault_kind(const std::string& what) {
  return what.rfind("address error", 0) == 0 ? "address" : "kernel";
}

}  // namespace

Sequencer::Sequencer(sc_core::sc_module_name name, isa::Queue engine, SequencerEnv env,
                     SequencerConfig cfg)
    : sc_core::sc_module(name),
      port("port"),
      engine_(engine),
      env_(env),
      clock_(env.control),
      ctx_(std::make_unique<Context>(*this)),
      dma_(std::make_unique<DmaQueue>(*this)) {
  configure(std::move(cfg));
  SC_HAS_PROCESS(Sequencer);
  SC_THREAD(thread);
  SC_METHOD(complete_due);
  sensitive << complete_ev_;
  dont_initialize();
}

Sequencer::~Sequencer() = default;

void Sequencer::configure(SequencerConfig cfg) {
  cfg_ = std::move(cfg);
  clock_.set_divider(timing::ClockDivider(cfg_.timing->clock(engine_)));
  issue_overhead_ps_ =
      timing::TimingConfig::cycles_to_ps(cfg_.timing->issue_overhead(engine_), clock_.divider());
  min_ii_ps_ = timing::TimingConfig::cycles_to_ps(cfg_.timing->min_ii(engine_), clock_.divider());
  min_ii_dynamic_ps_ =
      timing::TimingConfig::cycles_to_ps(cfg_.timing->min_ii_dynamic(engine_), clock_.divider());
  pattern_.configure(cfg_.timing->wide_stride_bytes, cfg_.timing->wide_stride_cost(engine_));
  psum_reads_exempt_ = engine_ == isa::Queue::Pe;
  dma_->configure(*cfg_.timing, cfg_.hbm_capacity, env_.dma != nullptr);
}

void Sequencer::set_device_semaphores(const std::vector<SemaphoreBank*>* banks,
                                      std::vector<unsigned> targets) {
  dma_->set_device_semaphores(banks, std::move(targets));
}

DmaEngines::Client* Sequencer::dma_client() { return dma_.get(); }
std::uint64_t Sequencer::dma_unretired_first() const { return dma_->unretired_first(); }
std::uint64_t Sequencer::dma_unretired_end() const { return dma_->unretired_end(); }
std::size_t Sequencer::in_flight() const { return completions_.size() + dma_->in_flight(); }

void Sequencer::add_observer(SequencerObserver* o) {
  observers_.push_back(o);
  if (o->wants_bundle_starts() || o->wants_bundle_ends()) bundle_observers_.push_back(o);
  if (o->wants_bundle_ends()) bundle_end_observers_.push_back(o);
}

void Sequencer::remove_observer(SequencerObserver* o) {
  for (auto* v : {&observers_, &bundle_observers_, &bundle_end_observers_})
    v->erase(std::remove(v->begin(), v->end(), o), v->end());
}

void Sequencer::open_pipeline() {
  lanes_.reset();
  pattern_.reset();
  port.begin_stream(&lanes_);
  pipeline_open_ = true;
  pipeline_compute_ = 0;
}

void Sequencer::close_pipeline() {
  flush_time();
  port.end_stream();
  pipeline_open_ = false;
  const timing::TimingConfig& t = *cfg_.timing;
  const sc_core::sc_time compute = engine_time(t, engine_, pipeline_compute_);
  // The slowest memory lane, or the engine's interfaces slowed by a wide
  // innermost stride (timing::AccessPattern).
  const sc_core::sc_time mem =
      std::max({lanes_.max_read(), lanes_.max_write(),
                engine_time(t, engine_, pattern_.interface_cycles(pipeline_compute_))});
  // The compute is already on the clock; add the fill and what memory takes
  // beyond it. The first stream's requests go out while the instruction's
  // fixed overhead runs (decode, dispatch), so its fill counts only beyond
  // that overhead.
  const sc_core::sc_time over = mem > compute ? mem - compute : sc_core::SC_ZERO_TIME;
  const sc_core::sc_time fill =
      lanes_.fill() > fill_credit_ ? lanes_.fill() - fill_credit_ : sc_core::SC_ZERO_TIME;
  fill_credit_ = sc_core::SC_ZERO_TIME;
  clock_.inc(fill + over);
  // The stream holds the engine's issue (SPEC §8); its fill is latency only.
  const std::uint64_t stream = to_ps(std::max(compute, mem));
  issue_ps_ += stream;
  stream_cycles_ += engine_cycles(t, engine_, std::max(compute, mem));
  const std::uint64_t stall = engine_cycles(t, engine_, over);
  notify([&](SequencerObserver& o) { o.on_stall(StallKind::Memory, stall); });
}

std::string Sequencer::where() const {
  const std::string_view m = isa::opcode_mnemonic(opcode_);
  return fmt::format("{} instruction {} (opcode 0x{:02x}{}{})", isa::engine_name(engine_), index_,
                     opcode_, m.empty() ? "" : " ", m);
}

void Sequencer::fault(std::string kind, std::string what, std::vector<std::string> predicates) {
  // Precise: every earlier instruction completes before the fault; the
  // other engines run up to it (the time synced).
  const std::uint64_t t = now_ps();
  sync();
  drain();
  if (stopped_) return;
  const std::uint64_t tf = std::max(t, now_ps());
  if (!env_.control->proceed(tf)) {  // past a watchdog's stop: not recorded
    watchdog_stop();
    return;
  }
  // The faulting instruction shows from where it began to the fault.
  const std::uint64_t start = std::min(exec_start_ps_, tf);
  notify([&](SequencerObserver& o) {
    o.on_issue(IssueEvent{engine_, index_, opcode_, &raw_, start, tf});
  });
  for (const BundleRecord& b : bundles_) {
    for (SequencerObserver* o : bundle_observers_)
      o->on_bundle(*b.bundle, std::min(b.start_ps, tf), b.trips, b.cycles);
    if (&b != &bundles_.back())
      for (SequencerObserver* o : bundle_end_observers_)
        o->on_bundle_end(*b.bundle, std::min(b.end_ps, tf));
  }
  notify([&](SequencerObserver& o) { o.on_fault(tf); });
  FaultInfo info;
  info.engine = engine_;
  info.index = index_;
  info.opcode = opcode_;
  info.kind = std::move(kind);
  info.predicates = std::move(predicates);
  info.message = where() + ": " + what;
  env_.control->fault(std::move(info), tf);
}

void Sequencer::host_fault(const std::string& what) {
  // The host could not hold what the instruction touched: the run ends now
  // (kind "host": the run API reports it as an error of the host).
  FaultInfo info;
  info.engine = engine_;
  info.index = index_;
  info.opcode = opcode_;
  info.kind = "host";
  info.message = where() + ": " + what;
  env_.control->fault(std::move(info), std::max(now_ps(), clock_.stamp_ps()));
}

void Sequencer::watchdog_stop() {
  if (pipeline_open_) {
    port.end_stream();
    pipeline_open_ = false;
  }
  // What completes before the stop still does; the rest is not retired.
  RunControl& c = *env_.control;
  const std::uint64_t stop = c.stop_ps();
  flush_time();
  try {
    while (!c.aborted() && ((!completions_.empty() && completions_.front().end_ps <= stop) ||
                            (dma_->in_flight() > 0 && now_ps() <= stop))) {
      const std::uint64_t now = env_.control->rel_ps(sc_core::sc_time_stamp());
      if (dma_->in_flight() > 0 && stop >= now)
        wait(ps_time(stop - now + 1), drained_ev_ | c.abort_event());
      else
        wait(drained_ev_ | c.abort_event());
      refresh_stamp();
      clock_.reset_local();
    }
  } catch (...) {
    throw;
  }
  completions_.clear();
  const std::uint64_t t = std::min<std::uint64_t>(now_ps(), stop);
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
    } catch (const HostSpaceError& e) {
      host_fault(e.what());
    } catch (const std::bad_alloc&) {
      host_fault("out of host memory (the machine, or a memory limit such as ulimit -v)");
    }
    if (pipeline_open_) {
      port.end_stream();
      pipeline_open_ = false;
    }
    env_.control->engine_finished();
  }
}

void Sequencer::run_program() {
  clock_.reset_local();
  clock_.clear_pending();
  refresh_stamp();
  fetch_.reset(*env_.queue, cfg_.timing->fetch);
  complete_ev_.cancel();
  completions_.clear();
  dma_->reset();
  gate_overlap_ps_ = 0;
  pipe_.reset(now_ps());
  const std::uint64_t count = env_.queue->total();
  notify([&](SequencerObserver& o) { o.on_run_start(now_ps()); });
  for (index_ = 0; index_ < count; ++index_) {
    if (!step()) return;
    flush_time();
    if (clock_.need_sync()) sync();
  }
  sync();
  drain();
  if (stopped_) return;
  done_ = true;
}

bool Sequencer::step() {
  if (!fetch()) return false;
  wait_semaphore();
  // Nothing is recorded past a watchdog's stop.
  exec_start_ps_ = now_ps();
  bundles_.clear();
  if (!env_.control->proceed(exec_start_ps_)) {
    watchdog_stop();
    return false;
  }
  // The race check (SPEC §14): a compute engine's instruction begins here,
  // its wait satisfied (a DMA transfer is registered as it is submitted and
  // its engines begin it as they take it).
  if (race_ && !isa::is_dma_queue(engine_))
    race_->begin(race_core_, engine_, index_, opcode_, events_);
  std::optional<KernelInfoRecord> record;
  bool unknown_only = false;
  if (!check(record, unknown_only)) return false;
  if (isa::is_dma_queue(engine_)) return dma_->submit();
  const fw::Kernel* worker = dispatch(record, unknown_only);
  return worker && execute(*worker) && issue();
}

bool Sequencer::fetch() {
  opcode_ = 0;
  const std::uint64_t t = now_ps();
  notify([&](SequencerObserver& o) { o.on_fetch(index_, t); });
  // Instruction fetch (SPEC §7, §9): a word that has not landed yet is a
  // wait; a stall as far as it delays the issue (the engine's pipeline may
  // hold the issue that long anyway).
  const std::uint64_t ready = fetch_.ready_at(index_, t);
  if (ready > t) clock_.inc(ps_time(ready - t));
  // 64 bytes from this engine's queue, timed by the queue (SPEC §7).
  fetch_ps_ = now_ps();
  sc_core::sc_time d = clock_.local_time();
  const sc_core::sc_time before = d;
  const std::uint64_t addr = queue_base(engine_) + env_.queue->slot_addr(index_);
  const tlm::tlm_response_status st = port.read_control(addr, raw_.data(), isa::kInstBytes, d);
  // After a retire gate held the thread to the instruction's end, the fetch
  // happened in the shadow of that instruction, as it does without a gate
  // (issue() fetches the next word from the instruction's start).
  if (gate_overlap_ps_ != 0 && d > before) {
    const sc_core::sc_time hidden = std::min(d - before, ps_time(gate_overlap_ps_));
    d -= hidden;
  }
  gate_overlap_ps_ = 0;
  clock_.set_local_time(d);
  if (ready > t) {
    // A stall as far as the wait delays the fetched word past the time the
    // engine could issue it anyway (its pipeline may hold the issue longer).
    const std::uint64_t issue_at = pipe_.unit_ready(timing::IssuePipeline::kMoving, t);
    const std::uint64_t got = now_ps();
    const std::uint64_t late =
        got > issue_at ? std::min(ready - t, got - std::max(issue_at, t + (got - ready))) : 0;
    if (late > 0) {
      const std::uint64_t stall = engine_cycles(*cfg_.timing, engine_, ps_time(late));
      notify([&](SequencerObserver& o) { o.on_stall(StallKind::Fetch, stall); });
    }
  }
  if (st != tlm::TLM_OK_RESPONSE) {
    exec_start_ps_ = now_ps();
    bundles_.clear();
    fault("fetch",
          fmt::format("fetch of 64 bytes at 0x{:07x} failed: {}", addr, tlm_status_name(st)));
    return false;
  }
  fetched_ps_ = now_ps();
  fetch_.fetched(index_, fetched_ps_);
  opcode_ = isa::header_of(raw_).opcode;
  events_ = isa::events_of(raw_);
  return true;
}

void Sequencer::wait_semaphore() {
  // Sync first so the condition is evaluated at this engine's true time; a
  // malformed EVENTS field is left to the checker.
  const auto wm = static_cast<isa::WaitMode>(events_.wait_mode);
  const bool wait_ok = events_.wait_mode <= 2 && events_.wait_idx < isa::kNumSemaphores;
  if (!wait_ok || wm == isa::WaitMode::None ||
      env_.sems->satisfied(wm, events_.wait_idx, events_.sem_value))
    return;
  sync();
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  blocked_ = true;
  while (!env_.sems->satisfied(wm, events_.wait_idx, events_.sem_value)) {
    wait(env_.sems->changed_event() | env_.control->abort_event());
    refresh_stamp();
    if (env_.control->aborted()) throw RunControl::Abort{};
  }
  blocked_ = false;
  const std::uint64_t stall = engine_cycles(*cfg_.timing, engine_, sc_core::sc_time_stamp() - t0);
  notify([&](SequencerObserver& o) { o.on_stall(StallKind::Semaphore, stall); });
}

bool Sequencer::check(std::optional<KernelInfoRecord>& record, bool& unknown_only) {
  // Validity (SPEC §1): every failed predicate by name. An opcode the
  // checker has no contract for ("has_known_opcode" alone) is reported by
  // what the dispatch makes of it: unknown (no kernel_info record) or not
  // modelled (a record whose kernel this model does not implement).
  // Against the core's configured capacities (a profile may enlarge HBM or SBUF).
  const timing::TimingConfig& tc = *cfg_.timing;
  isa::CheckResult check =
      isa::check_instruction(raw_, cfg_.arch,
                             isa::MemoryCapacity{tc.sbuf_bytes_per_partition,
                                                 tc.psum_bytes_per_partition, cfg_.hbm_capacity});
  if (!isa::dma_copy_on_its_queue(engine_, raw_)) check.failed.push_back("dma_copy_on_its_queue");
  // A word its header sends to another engine (SPEC §18: several engines run
  // its opcode) is not this engine's to run.
  if (isa::is_compute_engine(engine_) && isa::engine_selector(raw_) != 0 &&
      isa::pred::word_engine(raw_, cfg_.arch) != engine_)
    check.failed.push_back("queue_executes_opcode");
  if (!isa::nop_on_its_queue(engine_, raw_)) check.failed.push_back("nop_on_its_queue");
  record = cfg_.table.lookup(opcode_);
  unknown_only = check.failed.size() == 1 && check.failed[0] == "has_known_opcode";
  if (check.valid() || unknown_only) return true;
  std::string names;
  std::vector<std::string> preds;
  for (std::string_view n : check.failed) {
    names += (names.empty() ? "" : ", ") + std::string(n);
    preds.emplace_back(n);
  }
  fault("invalid",
        fmt::format("invalid instruction on {}{}: failed {}", isa::arch_name(cfg_.arch),
                    check.contract.empty() ? "" : " (" + std::string(check.contract) + ")", names),
        std::move(preds));
  return false;
}

const fw::Kernel* Sequencer::dispatch(const std::optional<KernelInfoRecord>& record,
                                      bool unknown_only) {
  // Dispatch (seed 000 §1): kernel_info record -> trampoline -> worker.
  if (!record) {
    fault("dispatch",
          fmt::format("unknown opcode 0x{:02x}: no record in the {} kernel_info table{}", opcode_,
                      isa::engine_name(engine_), unknown_only ? " (failed has_known_opcode)" : ""));
    return nullptr;
  }
  const fw::Kernel* worker = unknown_only ? nullptr : env_.kernels->find(record->func_va);
  if (!worker)
    fault("dispatch",
          fmt::format("kernel_info idx{} dispatches opcode 0x{:02x} to trampoline 0x{:08x}, a "
                      "kernel this model does not implement (not modelled)",
                      record->index, opcode_, record->func_va));
  return worker;
}

unsigned Sequencer::issue_unit() const {
  // Its opcode-table row says (the PE's LoadStationary loads in the
  // background of the running matmul, TIMING.md [A]: a unit of its own).
  const isa::OpcodeInfo* row = isa::opcode_info(opcode_);
  return row && row->issue_unit == isa::IssueUnit::Stationary ? timing::IssuePipeline::kStationary
                                                              : timing::IssuePipeline::kMoving;
}

bool Sequencer::execute(const fw::Kernel& worker) {
  const timing::TimingConfig& timing = *cfg_.timing;
  // The kernel runs from the earliest time its unit may start; the
  // interlock may move it later once its accesses are known (issue()).
  unit_ = issue_unit();
  const std::uint64_t now = now_ps();
  const std::uint64_t s0 = pipe_.unit_ready(unit_, now);
  clock_.add_pending_ps(s0 - now);  // on to the quantum keeper with the kernel's first cycles
  exec_start_ps_ = s0;
  footprint_.clear();
  // The wait-only instruction (SPEC §18) fetches no operands and starts no
  // kernel: no front end, no startup, only its bundle (docs/CONVENTIONS.md).
  const bool bare = opcode_ == static_cast<std::uint8_t>(isa::Opcode::Nop);
  issue_ps_ = bare ? 0 : issue_overhead_ps_;
  stream_cycles_ = 0;
  dynamic_ = false;
  clock_.begin_instruction();
  if (!bare) add_cycles(std::uint64_t{timing.overhead(engine_)} + timing.issue_overhead(engine_));
  fill_credit_ = ps_time(clock_.instruction_ps());
  Context& ctx = *ctx_;
  ctx.begin_instruction();
  try {
    env_.kernels->execute(worker, ctx, *cfg_.costs);
  } catch (const fw::KernelFault& e) {
    if (pipeline_open_) close_pipeline();
    fault(kernel_fault_kind(e.what()), e.what());
    return false;
  } catch (const WatchdogStop&) {
    watchdog_stop();
    return false;
  }
  if (pipeline_open_) close_pipeline();
  // Simulated time never wraps: a profile whose values push an instruction
  // past kMaxPs (2^62 ps) faults here instead.
  if (now_ps() >= timing::TimingConfig::kMaxPs) {
    fault("time",
          fmt::format("simulated time reached {} ps (2^62): the timing profile's cycle counts are "
                      "too large for this program",
                      timing::TimingConfig::kMaxPs));
    return false;
  }
  return true;
}

bool Sequencer::issue() {
  const timing::TimingConfig& timing = *cfg_.timing;
  flush_time();
  const std::uint64_t s0 = exec_start_ps_;
  std::uint64_t latency = now_ps() - s0;
  // The initiation interval (SPEC §8): the issue-bound time, at least the
  // engine's minimum; a short stream does not overlap the next instruction.
  std::uint64_t ii = std::max(issue_ps_, min_ii_ps_);
  if (stream_cycles_ < timing.pipeline_min_stream(engine_) || retire_gate_) ii = latency;
  ii = std::min(ii, latency);
  // A register-addressed operand: MIN_II_DYNAMIC (TIMING.md [O]), the
  // results landing no earlier.
  if (dynamic_ && ii < min_ii_dynamic_ps_) latency = std::max(latency, ii = min_ii_dynamic_ps_);
  // The interlock: an in-flight instruction of this engine writes what this
  // one reads: it starts when that one completes.
  pipe_.forget_until(s0);
  const std::uint64_t start = pipe_.after_dependences(footprint_, s0);
  const std::uint64_t shift = start - s0;
  if (shift != 0) {
    const std::uint64_t stall = engine_cycles(timing, engine_, ps_time(shift));
    notify([&](SequencerObserver& o) { o.on_stall(StallKind::Interlock, stall); });
  }
  if (!env_.control->proceed(start)) {
    watchdog_stop();
    return false;
  }
  // The retire gate (co-simulation): on the kernel's clock, it may wait.
  if (retire_gate_ && !pass_retire_gate(s0 + latency + shift, start, latency, ii)) return false;
  const std::uint64_t end = pipe_.commit(unit_, start, ii, latency, footprint_);
  if (end >= timing::TimingConfig::kMaxPs) {
    fault("time", fmt::format("simulated time reached {} ps (2^62): the timing profile's cycle "
                              "counts are too large for this program",
                              timing::TimingConfig::kMaxPs));
    return false;
  }
  tell_issue(start, end, shift);
  // Past a watchdog's stop it does not complete.
  if (!env_.control->proceed(end)) {
    watchdog_stop();
    return false;
  }
  // Its retire is told now, stamped with its completion (the observers and
  // the core's retire order go by that time; a stop before it takes it
  // back); its semaphore update must happen at that time: the
  // completions' SC_METHOD applies it.
  const RetireRecord rr{engine_,         index_,          opcode_,   start,      end,
                        bundles_.data(), bundles_.size(), fetch_ps_, fetched_ps_};
  notify([&](SequencerObserver& o) { o.on_retire(rr); });
  // Its release in the race check: the accesses of this instruction and the
  // ones before it (in order), before the next one begins.
  if (race_) race_->end(race_core_, engine_, index_, events_);
  if (events_.update_mode != static_cast<std::uint8_t>(isa::UpdateMode::None)) {
    Completion& c = completions_.emplace_back();
    c.index = index_;
    c.opcode = opcode_;
    c.events = events_;
    c.end_ps = end;
    c.retired = true;
    if (completions_.size() == 1) complete_ev_.notify(ps_time(end - clock_.stamp_ps()));
  }
  bundles_.clear();
  // In order: the next instruction's fetch starts where this one started.
  set_now(std::max(start, clock_.stamp_ps()));
  return true;
}

bool Sequencer::pass_retire_gate(std::uint64_t at, std::uint64_t start, std::uint64_t& latency,
                                 std::uint64_t& ii) {
  set_now(at);
  sync();
  try {
    retire_gate_();  // may wait
    refresh_stamp();
  } catch (const fw::KernelFault& e) {
    refresh_stamp();
    fault("cosim", e.what());
    return false;
  }
  latency = now_ps() - start;
  ii = latency;
  gate_overlap_ps_ = latency;
  return true;
}

void Sequencer::tell_issue(std::uint64_t start, std::uint64_t end, std::uint64_t shift) {
  notify([&](SequencerObserver& o) {
    o.on_issue(IssueEvent{engine_, index_, opcode_, &raw_, start, end});
  });
  if (shift != 0) {
    for (BundleRecord& b : bundles_) {
      b.start_ps += shift;
      b.end_ps += shift;
    }
  }
  // Each observer takes the instruction's bundles in one call (observers
  // are independent: the order among them does not matter).
  for (SequencerObserver* o : bundle_observers_) o->on_bundles(bundles_.data(), bundles_.size());
}

void Sequencer::deliver(const Completion& c) {
  if (isa::is_dma_queue(engine_)) dma_->retired();  // in queue order
  if (!c.retired) {
    const RetireRecord rr{engine_, c.index, c.opcode,   c.start_ps,  c.end_ps,
                          nullptr, 0,       c.fetch_ps, c.fetched_ps};
    notify([&](SequencerObserver& o) { o.on_retire(rr); });
  }
  const auto um = static_cast<isa::UpdateMode>(c.events.update_mode);
  if (um != isa::UpdateMode::None)
    update_bank(c.update_core).apply_update(um, c.events.update_idx, c.events.sem_value);
}

SemaphoreBank& Sequencer::update_bank(unsigned update_core) const {
  // 1 + K: core K's of the device (checked against the device by check_dma;
  // already the physical core: transfer_done).
  SemaphoreBank* bank = dma_->device_bank(update_core);
  return bank ? *bank : *env_.sems;
}

void Sequencer::complete_due() {
  RunControl& ctl = *env_.control;
  const std::uint64_t now = ctl.rel_ps(sc_core::sc_time_stamp());
  while (!completions_.empty() && completions_.front().end_ps <= now) {
    if (ctl.aborted()) {
      completions_.clear();
      break;
    }
    Completion& c = completions_.front();
    // Past a watchdog's stop nothing completes (the engine's thread stops).
    if (!ctl.proceed(c.end_ps)) {
      drained_ev_.notify(sc_core::SC_ZERO_TIME);
      return;
    }
    deliver(c);
    completions_.pop_front();
  }
  if (!completions_.empty())
    complete_ev_.notify(ps_time(completions_.front().end_ps - now));
  else
    drained_ev_.notify(sc_core::SC_ZERO_TIME);
}

void Sequencer::drain() {
  RunControl& c = *env_.control;
  // The engine's last instruction completes: its time is the run's.
  flush_time();
  if (pipe_.last_completion() > now_ps()) {
    set_now(pipe_.last_completion());
    sync();
  }
  while (in_flight() != 0) {
    if (!completions_.empty() && completions_.back().end_ps > c.stop_ps()) {
      watchdog_stop();
      return;
    }
    wait(drained_ev_ | c.abort_event());
    refresh_stamp();
    clock_.reset_local();
    clock_.clear_pending();
    if (c.aborted()) throw RunControl::Abort{};
    if (c.watchdog() != RunControl::Watchdog::None && now_ps() > c.stop_ps()) {
      watchdog_stop();
      return;
    }
  }
}

}  // namespace tpb::sc
