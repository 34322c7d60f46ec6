// TpbCore's runs: a run's start and end inside a device's run
// (platform::DeviceRun), the retires in the run's one order, the report of
// what is pending at a deadlock or a stop, the run's statistics.
#include "platform/core/tpb_core.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "firmware_stubs/builtin_kernels.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::platform {

namespace {

static_assert(TpbCore::kNumMems == isa::kNumDataMemories);
const char* mem_name(unsigned m) { return isa::memory_name(static_cast<isa::CoreMemory>(m)); }

const char* wait_op(std::uint8_t mode) { return mode == 1 ? "==" : mode == 2 ? ">=" : "?"; }

}  // namespace

const char* status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return "ok";
    case RunStatus::Fault:
      return "fault";
    case RunStatus::Deadlock:
      return "deadlock";
    case RunStatus::Watchdog:
      return "watchdog";
    case RunStatus::Interrupted:
      return "interrupted";
  }
  return "?";
}

namespace {

// How bad a status is, for a device's: the worst of its cores'.
int severity(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return 0;
    case RunStatus::Interrupted:
      return 1;
    case RunStatus::Watchdog:
      return 2;
    case RunStatus::Deadlock:
      return 3;
    case RunStatus::Fault:
      return 4;
  }
  return 0;
}

}  // namespace

RunStatus worse(RunStatus a, RunStatus b) { return severity(b) > severity(a) ? b : a; }

std::string TpbCore::format_retire(const sc::RetireRecord& r, bool with_core) {
  if (!with_core) return format_retire(r);
  const std::string_view m = isa::opcode_mnemonic(r.opcode);
  return fmt::format("{:>15} {:<10} {:>6} 0x{:02x} {}", r.end_ps,
                     fmt::format("core{}.{}", r.core, isa::engine_name(r.engine)), r.index,
                     r.opcode, m.empty() ? "?" : m);
}

std::string TpbCore::format_retire(const sc::RetireRecord& r) {
  const std::string_view m = isa::opcode_mnemonic(r.opcode);
  return fmt::format("{:>15} {:<4} {:>6} 0x{:02x} {}", r.end_ps, isa::engine_name(r.engine),
                     r.index, r.opcode, m.empty() ? "?" : m);
}

void TpbCore::on_retire(const sc::RetireRecord& r) {
  // Held in the run's one order until the global time has passed it.
  retires_->push(core_id_, r);
  retires_->commit(now_ps());
  if (!core_tracer_) return;
  if (r.engine == isa::Queue::Sfu) core_tracer_->sfu_flags(tile_file().flags().bits(), r.end_ps);
  if (!rec_->signals_enabled()) return;
  std::uint64_t rd[kNumMems], wr[kNumMems];
  memory_bytes(rd, wr);
  core_tracer_->memory_bytes(rd, wr, r.end_ps);
}

void TpbCore::memory_bytes(std::uint64_t (&rd)[kNumMems], std::uint64_t (&wr)[kNumMems]) const {
  // Every port's counters are reset with its stats at the run's start, and a
  // queue with nothing to run moves nothing: the totals are the active
  // queues'.
  for (unsigned m = 0; m < kNumMems; ++m) {
    rd[m] = port_totals_.read[m];
    wr[m] = port_totals_.written[m];
  }
}

std::string TpbCore::pending_report() const {
  std::string msg;
  for (const auto& s : seqs_) {
    if (s.done()) continue;
    const std::string_view m = isa::opcode_mnemonic(s.opcode());
    const std::string op = fmt::format("opcode 0x{:02x}{}{}", s.opcode(), m.empty() ? "" : " ", m);
    const isa::Events& ev = s.blocked_on();
    msg += msg.empty() ? "" : "; ";
    // A DMA queue: its transfers in flight, then the descriptor it has not
    // submitted yet (none once all are: its index is then past the last).
    const std::uint64_t first = s.dma_unretired_first(), end = s.dma_unretired_end();
    if (end > first)
      msg += fmt::format(
          "{} transfer{} {} not completed (dma_copy)", isa::engine_name(s.engine()),
          end - first == 1 ? "" : "s",
          end - first == 1 ? fmt::format("{}", first) : fmt::format("{}-{}", first, end - 1));
    if (isa::is_dma_queue(s.engine()) &&
        s.index() >= queues[static_cast<unsigned>(s.engine())].total())
      continue;
    msg += fmt::format("{}{} instruction {} ", end > first ? "; " : "",
                       isa::engine_name(s.engine()), s.index());
    if (s.blocked())
      msg += fmt::format("waits for sem[{}] {} {} (sem[{}] = {}): {}", ev.wait_idx,
                         wait_op(ev.wait_mode), ev.sem_value, ev.wait_idx,
                         ev.wait_idx < isa::kNumSemaphores ? sems_.get(ev.wait_idx) : 0, op);
    else
      msg += fmt::format("not retired: {}", op);
  }
  return msg;
}

void TpbCore::start_in(const CoreRunSetup& setup, std::shared_ptr<trace::Recorder> rec_of_run,
                       RetireMerge& retires) {
  if (running_) throw std::logic_error("TpbCore::start: a run is in progress");
  // The quantum is process-wide (TLM's global quantum) and cores of other
  // configurations may share the process: each run sets its own.
  tlm::tlm_global_quantum::instance().set(
      sc_core::sc_time(static_cast<double>(config().timing.quantum_ns), sc_core::SC_NS));
  setup_ = setup;
  stop_ps_ = trace::kForever;
  wall0_ = std::chrono::steady_clock::now();
  rec_ = std::move(rec_of_run);
  retires_ = &retires;
  trace::Recorder& rec = *rec_;
  tracers_.clear();
  tracers_.resize(isa::kNumQueues);
  core_tracer_.reset();
  dma_tracer_.reset();
  const bool tracing = setup.trace.signals || setup.trace.slices;
  dma_engines.reset_run();
  dma_engines.set_timing_only(setup.timing_only);
  dma_engines.set_race(setup.race, core_id_);
  dma_active_ = false;
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
    dma_active_ = dma_active_ || queues[static_cast<unsigned>(isa::dma_queue(q))].total() > 0;
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    sc::Sequencer& s = seqs_[i];
    stats_[i]->reset(config().timing);
    s.set_timing_only(setup.timing_only);
    s.set_race(setup.race, core_id_);
    // A DMA queue the program gives no descriptor, and the ACT engine
    // without instructions, appear in no output.
    active_[i] = isa::listed_when_idle(engine_at(i)) || queues[i].total() > 0;
    if (!active_[i]) continue;
    s.add_observer(stats_[i].get());
    if (tracing) {
      tracers_[i] = std::make_unique<sc::EngineTracer>(
          rec, engine_at(i), fw::builtin_kernels().num_bundles(), trace_names_);
      s.add_observer(tracers_[i].get());
    }
    s.add_observer(hooks_[i].get());
  }
  if (tracing) core_tracer_ = std::make_unique<CoreTracer>(rec, trace_names_);
  if (tracing && dma_active_)
    dma_tracer_ = std::make_unique<sc::DmaEngineTracer>(rec, dma_engines.engines(), trace_names_);
  dma_engines.set_observer(dma_tracer_.get());
  run_start_ps_ = now_ps();
  control_.start(isa::kNumQueues);
  if (setup.max_sim_ps != 0)
    control_.set_sim_limit(setup.max_sim_ps > UINT64_MAX - run_start_ps_
                               ? UINT64_MAX
                               : run_start_ps_ + setup.max_sim_ps);
  if (setup.max_wall_seconds > 0)
    control_.set_wall_deadline(wall0_ +
                               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(setup.max_wall_seconds)));
  if (setup.interrupt) control_.set_interrupt(setup.interrupt);
  running_ = true;
}

CoreRunResult TpbCore::end_in(const RetireMerge& retires) {
  if (!running_) throw std::logic_error("TpbCore::finish: no run in progress");
  CoreRunResult r;
  r.start_ps = run_start_ps_;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  r.simulated_ps = now_ps();
  // After a fault or a watchdog's stop nothing is recorded past its time on
  // any engine: retires, stats and traces all end there (engines run
  // decoupled and pipelined, so others may have run ahead of it).
  const std::uint64_t stop_ps = this->stop_ps();
  if (stop_ps != trace::kForever)
    for (auto& s : stats_) s->stop_at(stop_ps);
  stop_ps_ = stop_ps;
  r.instructions = retires.retired(core_id_);  // committed up to stop_ps by the run
  if (control_.faulted()) {
    r.status = RunStatus::Fault;
    r.message = control_.message();
    r.fault = control_.fault_info();
    r.simulated_ps = std::max(r.simulated_ps, control_.fault_time_ps());
    if (core_tracer_ && r.fault->engine == isa::Queue::Sfu)
      core_tracer_->sfu_fault(control_.fault_time_ps(), r.message);
  } else if (control_.watchdog() != sc::RunControl::Watchdog::None) {
    // Stopped at the watchdog's time: nothing was recorded after it.
    const sc::RunControl::Watchdog w = control_.watchdog();
    r.status =
        w == sc::RunControl::Watchdog::Interrupt ? RunStatus::Interrupted : RunStatus::Watchdog;
    r.simulated_ps = control_.stop_ps();
    const std::string pending = pending_report();
    r.message = w == sc::RunControl::Watchdog::SimTime
                    ? fmt::format("simulated time limit {} ps reached", setup_.max_sim_ps)
                : w == sc::RunControl::Watchdog::WallTime
                    ? fmt::format("wall time limit {} s reached; stopped at {} ps",
                                  setup_.max_wall_seconds, r.simulated_ps)
                    : fmt::format("interrupted; stopped at {} ps", r.simulated_ps);
    if (!pending.empty()) r.message += "; pending: " + pending;
  } else {
    for (const auto& s : seqs_)
      if (!s.done()) r.status = RunStatus::Deadlock;
    if (r.status == RunStatus::Deadlock) r.message = pending_report();
  }
  // The traces end with the run; after a fault, at its time on every engine.
  for (auto& t : tracers_)
    if (t) t->finish(stop_ps);
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    seqs_[i].remove_observer(stats_[i].get());
    if (tracers_[i]) seqs_[i].remove_observer(tracers_[i].get());
    seqs_[i].remove_observer(hooks_[i].get());
  }
  for (auto& s : seqs_) s.set_race(nullptr, core_id_);
  dma_engines.set_race(nullptr, core_id_);
  setup_.race = nullptr;
  retires_ = nullptr;
  // The run's tracers write into its recorder: nothing between runs (a
  // host's semaphore write, a reset's) may reach them.
  core_tracer_.reset();
  tracers_.clear();
  dma_engines.set_observer(nullptr);
  dma_tracer_.reset();
  // A program runs once: the queues are empty for the next.
  for (auto& q : queues) q.clear();
  running_ = false;
  last_ = r;
  return r;
}

void TpbCore::on_sim_limit() {
  if (running_ && control_.running()) control_.expire_sim_limit();
}

trace::RunStats TpbCore::stats() const {
  trace::RunStats s;
  s.arch = std::string(isa::arch_name(config().arch));
  bool dma = false;
  std::uint64_t hbm_rd = 0, hbm_wr = 0;
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    if (!active_[i] && !isa::listed_when_idle(engine_at(i))) continue;
    s.engines.push_back(stats_[i]->stats());
    if (!isa::is_dma_queue(engine_at(i))) continue;
    dma = true;
    const auto& c = s.engines.back().counters;
    if (auto it = c.find("hbm_read_bytes"); it != c.end()) hbm_rd += it->second;
    if (auto it = c.find("hbm_write_bytes"); it != c.end()) hbm_wr += it->second;
  }
  // The DMA engines that moved anything (SPEC §10: DMA per engine as well
  // as per queue).
  if (dma) {
    for (unsigned e = 0; e < dma_engines.engines(); ++e)
      if (dma_engines.totals(e).shares != 0) s.engines.push_back(dma_engines.stats(e, stop_ps_));
    s.dma_active_ps["dma"] = dma_engines.active_ps(stop_ps_);
  }
  std::uint64_t rd[kNumMems], wr[kNumMems];
  memory_bytes(rd, wr);
  for (unsigned m = 0; m < kNumMems; ++m) s.memories.push_back({mem_name(m), rd[m], wr[m]});
  // The HBM's bytes (moved by the DMA queues), when a DMA queue ran.
  if (dma) s.memories.push_back({sc::kHbmRouteName, hbm_rd, hbm_wr});
  s.simulated_ps = last_.simulated_ps;
  s.start_ps = last_.start_ps;
  s.wall_seconds = last_.wall_seconds;
  s.status = status_name(last_.status);
  s.timing_only = setup_.timing_only;
  s.message = last_.message;
  if (const sfu::TileFile* tf = tile_file_) {
    s.sfu.inexact = tf->flags().inexact;
    s.sfu.saturated = tf->flags().saturated;
    s.sfu.wrapped = tf->flags().wrapped;
    s.sfu.tiles = tf->allocated_tiles();
    s.sfu.units_used = tf->used_units();
  }
  return s;
}

}  // namespace tpb::platform
