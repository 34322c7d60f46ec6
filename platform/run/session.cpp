#include "platform/run/session.h"

#include <pthread.h>

#include <cstring>
#include <mutex>
#include <new>
#include <sstream>

#include <fmt/format.h>

#include "firmware_stubs/common/host_threads.h"
#include "models/isa/input_file.h"
#include "models/isa/program.h"
#include "models/sc/memory/core_memory_map.h"
#include "platform/core/device.h"
#include "platform/cosim/cosim.h"
#include "platform/run/coroutine_fork.h"
#include "platform/run/host_args.h"
#include "platform/run/output_set.h"
#include "platform/run/race_check.h"
#include "platform/run/stop_signals.h"

namespace tpb::run {

// One elaboration: a SystemC simulation context and the core built in it.
// SystemC keeps one "current" context per process (sc_curr_simcontext);
// every module, process, event and sc_start belongs to the context current
// when it is made or called. The process's first host takes the context
// that is current then (so a one-core process is what it always was); every
// later one gets a fresh context of its own, made current while it is used
// (Session::activate). Contexts are never deleted (SystemC cannot tear one
// down): a closed Session's host goes back to the pool and the next Session
// resets its core, so a process holds as many hosts as it ever had Sessions
// open at once.
struct CoreHost {
  sc_core::sc_simcontext* ctx = nullptr;
  platform::Device* device = nullptr;  // its cores (one for a tpbsim.Core)
  cosim::Cosim* cosim = nullptr;       // the process's first host only
  bool in_use = false;
  bool broken = false;  // a run was in progress in another thread at a fork
};
namespace {

struct Hosts {
  std::vector<CoreHost*> all;  // never freed: their SystemC objects live on
  // The host whose simulation runs now (one at a time per process: SystemC
  // has one current context) and the lock that orders runs from threads.
  const CoreHost* running = nullptr;
  std::mutex run_lock;
};
void after_fork_in_child();
Hosts& hosts() {
  static Hosts* h = [] {
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    return new Hosts;  // never deleted: outlives static destructors
  }();
  return *h;
}
// A forked child has only the forking thread: a run of another thread is
// gone with it, and that host's simulation stopped halfway (unusable).
void after_fork_in_child() {
  Hosts& h = hosts();
  new (&h.run_lock) std::mutex;
  if (h.running) {
    const_cast<CoreHost*>(h.running)->broken = true;
    h.running = nullptr;
    // The coroutine that thread ran at the fork is no current one here.
    reset_coroutines_after_fork();
  }
}
void make_current(sc_core::sc_simcontext* ctx) {
  sc_core::sc_curr_simcontext = ctx;
  sc_core::sc_default_global_context = ctx;
}

}  // namespace

namespace {

// The profile of `cfg`, an unknown bundle named as the file's (`file`: the
// timing file merged last; empty: none).
platform::Profile profile_of(platform::CoreConfig cfg, const std::string& file) {
  try {
    return platform::Profile(std::move(cfg));
  } catch (const timing::TimingError& e) {
    if (file.empty()) throw;
    throw timing::TimingError(file + ": " + e.what());
  }
}

}  // namespace

platform::Profile load_profile(const CoreSpec& spec) {
  platform::CoreConfig cfg = platform::default_core_config(spec.arch.value_or(isa::Arch::Mariana));
  cfg.mx_emax = spec.mx_emax;
  const bool overrides = !spec.timing_overrides.is_null() && !spec.timing_overrides.empty();
  try {
    if (!spec.timing_file.empty()) {
      timing::merge_timing_file(cfg.timing, spec.timing_file);
      // The file's own errors first, named by the file.
      if (overrides) profile_of(cfg, spec.timing_file);
    }
    if (overrides)
      timing::merge_timing(cfg.timing, timing::expand_dotted_keys(spec.timing_overrides));
    return profile_of(std::move(cfg), overrides ? "" : spec.timing_file);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
}

Session::Session(const CoreSpec& spec) : Session(spec, load_profile(spec)) {}

Session::Session(const CoreSpec& spec, platform::Profile profile) {
  open(std::move(profile), spec);
}

void check_remote_cores(isa::SpooledProgram& p, unsigned cores) {
  std::vector<isa::RawInst> buf(256);
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q) {
    const isa::Queue e = isa::dma_queue(q);
    if (p.count(e) == 0) continue;
    std::unique_ptr<isa::InstructionSource> src = p.source(e);
    std::uint64_t index = 0;
    for (std::size_t k; (k = src->read(buf.data(), buf.size())) != 0;)
      for (std::size_t i = 0; i < k; ++i, ++index) {
        const isa::RawInst& w = buf[i];
        if (w[0] != static_cast<std::uint8_t>(isa::Opcode::DmaCopy)) continue;
        const unsigned core = w[offsetof(isa::DmaDescriptor, update_core)];
        // Without an update mode the byte updates nothing: the run's check
        // names it (dma_valid_update_core), not as an update of a semaphore.
        const unsigned mode = w[offsetof(isa::DmaDescriptor, events) + 2];
        if (core <= cores || mode == 0) continue;
        throw InputError(fmt::format(
            "{}: {}[{}] dma_copy updates a semaphore of core{} (update=...(core{}:sem{})), a core "
            "this device of {} core{} does not have",
            p.path(), isa::engine_name(e), index, core - 1, core - 1,
            w[offsetof(isa::DmaDescriptor, events) + 3], cores, cores == 1 ? "" : "s"));
      }
  }
}

void Session::open(platform::Profile profile, const CoreSpec& spec) {
  const unsigned cores = spec.cores;
  const bool cosim = spec.cosim;
  from_argument("--cores ", [&] { return check_cores(cores); });
  try {
    platform::Device::validate(cores, profile);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  check_run_modes(cosim, false, false);
  if (cosim && cores > 1)
    throw InputError(
        "--cosim runs a device of one core (--cores 1): its RTL blocks are one core's");
  Hosts& g = hosts();
  if (g.running)
    throw InputError(
        "another core of this process is running now (SystemC runs one simulation at a time "
        "per process): make the core when that run has ended");
  CoreHost* h = nullptr;
  if (cosim) {
    if (!g.all.empty())
      throw InputError(
          "--cosim: co-simulation is built with the first core of a process; this process "
          "already made one without it (start a new process)");
  } else {
    for (CoreHost* c : g.all)
      if (!c->in_use && !c->broken && c->device->cores() == cores) {
        h = c;
        break;
      }
  }
  if (h) {
    make_current(h->ctx);
    h->device->reset(profile);
    // The harness of an earlier core stays elaborated but detached.
    cosim_ = nullptr;
  } else {
    auto fresh = std::make_unique<CoreHost>();
    fresh->ctx = g.all.empty() ? sc_core::sc_get_curr_simcontext() : new sc_core::sc_simcontext;
    make_current(fresh->ctx);
    try {
      fresh->device = new platform::Device(cores, profile);
    } catch (const std::bad_alloc&) {
      throw sc::HostSpaceError(fmt::format(
          "no host address space left to make a device of {} core{} (each takes about 100 MiB "
          "of address space, docs/PERFORMANCE.md): the machine, or a limit such as ulimit -v",
          cores, cores == 1 ? "" : "s"));
    }
    if (cosim) fresh->cosim = cosim::attach(fresh->device->core(0), {spec.cosim_vcd});
    cosim_ = fresh->cosim;
    h = fresh.release();
    g.all.push_back(h);
  }
  h->in_use = true;
  host_ = h;
  device_ = h->device;
  selected_ = 0;
  loaded_.assign(cores, nullptr);
}

void Session::select(unsigned core) {
  if (core >= device_->cores())
    throw RangeError(fmt::format("core {} is not a core of this device of {} core{} (0..{})", core,
                                 device_->cores(), device_->cores() == 1 ? "" : "s",
                                 device_->cores() - 1));
  selected_ = core;
}

void Session::set_core_id(unsigned id) {
  for (isa::Queue e : isa::kEngines) core().set_reg(e, kCoreIdRegister, id);
  if (device_->cores() % 2 == 0) device_->set_logical_cores(2);
}

std::vector<bool> Session::loaded_cores() const {
  // The cores given a program run, the others stay idle; the core of a
  // Session of one runs whatever it holds (an engine given no words runs
  // nothing), as a core always has.
  std::vector<bool> v(loaded_.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = loaded_[i] != nullptr || v.size() == 1;
  return v;
}

void Session::activate() const {
  const Hosts& g = hosts();
  if (g.running && g.running != host_)
    throw InputError(
        "another core of this process is running now (SystemC runs one simulation at a time "
        "per process): use this one when that run has ended");
  if (sc_core::sc_curr_simcontext != host_->ctx) make_current(host_->ctx);
}

Session::~Session() {
  if (host_) host_->in_use = false;
}

bool Session::is_open() {
  for (const CoreHost* h : hosts().all)
    if (h->in_use) return true;
  return false;
}

std::size_t Session::elaborations() { return hosts().all.size(); }

// ------------------------------------------------------------------- programs

std::unique_ptr<isa::SpooledProgram> load_program_file(const std::string& path, bool notes) {
  try {
    return isa::SpooledProgram::load(path, notes);
  } catch (const isa::AsmError& e) {
    throw LocatedError(
        fmt::format("{}:{}:{}: error: {}", e.loc().file, e.loc().line, e.loc().col, e.message()));
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
}

std::unique_ptr<isa::SpooledProgram> program_from_text(const std::string& text,
                                                       const std::string& name, bool notes) {
  auto p = std::make_unique<isa::SpooledProgram>(name);
  p->keep_notes(notes);
  std::istringstream in(text);
  try {
    isa::parse_program_stream(in, name, *p);
  } catch (const isa::AsmError& e) {
    throw LocatedError(
        fmt::format("{}:{}:{}: error: {}", e.loc().file, e.loc().line, e.loc().col, e.message()));
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  return p;
}

std::unique_ptr<isa::SpooledProgram> program_from_words(const std::uint8_t* data, std::size_t len,
                                                        const std::string& name, bool notes) {
  if (len % isa::kInstBytes != 0)
    throw InputError(
        fmt::format("{}: {} bytes is not a whole number of 64-byte instruction words", name, len));
  auto p = std::make_unique<isa::SpooledProgram>(name);
  p->keep_notes(notes);
  for (std::size_t off = 0; off < len; off += isa::kInstBytes) {
    isa::RawInst w;
    std::memcpy(w.data(), data + off, isa::kInstBytes);
    p->inst(isa::home_engine(w[0]), w, isa::SourceLoc{name, 0, 0});
  }
  return p;
}

int exit_code(platform::RunStatus s) {
  switch (s) {
    case platform::RunStatus::Ok:
      return 0;
    case platform::RunStatus::Fault:
      return 2;
    case platform::RunStatus::Deadlock:
      return 3;
    case platform::RunStatus::Watchdog:
      return 4;
    case platform::RunStatus::Interrupted:
      return 130;
  }
  return 1;
}

int exit_code(const SessionReport& r) {
  const int rc = exit_code(r.result.status);
  if (rc != 0) return rc;
  if (!r.output_errors.empty()) return 1;
  return r.races && r.races->total > 0 ? kExitRace : 0;
}

// ------------------------------------------------------------------------ run

void check_run_modes(bool cosim, bool timing_only, bool cosim_vcd) {
  if (timing_only && cosim)
    throw InputError("--timing-only computes no values: it cannot co-simulate (--cosim)");
  if (cosim_vcd && !cosim) throw InputError("--cosim-vcd needs --cosim");
  if (cosim && !cosim::any_block_linked())
    throw InputError(
        "--cosim: this tpbsim has no RTL linked (built without Verilator; see docs/COSIM.md)");
}

trace::RunStats Session::run_stats(std::vector<trace::RunStats>* per_core) {
  activate();
  if (device_->cores() == 1) return device_->core(0).stats();
  // A device: every core's engines and memories as coreK.NAME, the HBM the
  // device's (its bytes summed over the cores), the latest end, the worst
  // status (Device::run's message names each core's).
  trace::RunStats all = device_->core(0).stats();
  all.engines.clear();
  all.memories.clear();
  all.simulated_ps = 0;
  all.start_ps = UINT64_MAX;
  all.dma_active_ps.clear();
  all.sfu = {};
  std::uint64_t hbm_rd = 0, hbm_wr = 0;
  bool hbm = false;
  for (unsigned c = 0; c < device_->cores(); ++c) {
    const bool ran = c < per_core_.size() && per_core_[c].has_value();
    trace::RunStats s = ran ? device_->core(c).stats() : trace::RunStats{};
    if (!ran) s.arch = all.arch;
    const std::string prefix = fmt::format("core{}.", c);
    for (trace::EngineStats e : s.engines) {
      e.name = prefix + e.name;
      all.engines.push_back(std::move(e));
    }
    for (const auto& m : s.memories) {
      if (m.name == sc::kHbmRouteName) {
        hbm = true;
        hbm_rd += m.bytes_read;
        hbm_wr += m.bytes_written;
      }
      auto mm = m;
      mm.name = prefix + m.name;
      all.memories.push_back(std::move(mm));
    }
    for (const auto& [name, ps] : s.dma_active_ps) all.dma_active_ps[prefix + name] = ps;
    if (ran) {
      all.simulated_ps = std::max(all.simulated_ps, s.simulated_ps);
      all.start_ps = std::min(all.start_ps, s.start_ps);
      all.sfu.inexact = all.sfu.inexact || s.sfu.inexact;
      all.sfu.saturated = all.sfu.saturated || s.sfu.saturated;
      all.sfu.wrapped = all.sfu.wrapped || s.sfu.wrapped;
      all.sfu.tiles += s.sfu.tiles;
      all.sfu.units_used += s.sfu.units_used;
    }
    if (per_core) per_core->push_back(std::move(s));
  }
  if (hbm) all.memories.push_back({sc::kHbmRouteName, hbm_rd, hbm_wr});
  if (all.start_ps == UINT64_MAX) all.start_ps = 0;
  return all;
}

SessionReport Session::run(const SessionRequest& req) {
  OutputSet outputs(req);
  outputs.open();
  return run(req, outputs);
}

// What the core records and where it stops: the traces the outputs ask for
// (bundle detail or not, hidden engines), the watchdogs, the mode.
platform::CoreRunSetup Session::setup_for(const SessionRequest& req, OutputSet& outputs,
                                          SessionReport& rep) const {
  platform::CoreRunSetup setup;
  setup.trace.signals = !req.vcd.empty();
  setup.trace.slices = !req.perfetto.empty();
  std::uint64_t count = 0;
  for (unsigned c = 0; c < device_->cores(); ++c)
    for (unsigned e = 0; e < isa::kNumQueues; ++e) count += device_->core(c).queues[e].total();
  // auto: bundle detail while a program is short; a long one's bundle
  // slices would be about ten times the trace (docs/PERFORMANCE.md).
  setup.trace.bundles = req.trace_level == TraceLevel::Bundle ||
                        (req.trace_level == TraceLevel::Auto && count <= kAutoBundleLimit);
  if (req.trace_level == TraceLevel::Auto && !setup.trace.bundles &&
      (setup.trace.signals || setup.trace.slices))
    rep.notes.push_back(fmt::format(
        "{} instructions: tracing instructions, not bundles (--trace-level bundle for those)",
        count));
  if (!req.trace_engines.empty())
    for (unsigned e = 0; e < isa::kNumQueues; ++e) {
      bool keep = false;
      for (isa::Queue k : req.trace_engines) keep = keep || static_cast<unsigned>(k) == e;
      if (!keep) setup.trace.hidden_queues.push_back(static_cast<isa::Queue>(e));
    }
  setup.trace.vcd = outputs.vcd();
  setup.trace.perfetto = outputs.perfetto();
  setup.max_sim_ps = req.max_sim_ps;
  setup.max_wall_seconds = req.max_wall_seconds;
  setup.timing_only = req.timing_only;
  return setup;
}

SessionReport Session::run(const SessionRequest& req, OutputSet& outputs) {
  // One simulation at a time per process: a run of another Session in
  // another thread is waited for.
  Hosts& g = hosts();
  std::unique_lock<std::mutex> one_at_a_time(g.run_lock);
  if (host_->broken)
    throw InputError(
        "this core was running in another thread when the process forked: it cannot run in "
        "the child (make a new one there)");
  activate();
  g.running = host_;
  struct Done {
    Hosts& g;
    ~Done() { g.running = nullptr; }
  } done{g};
  check_run_modes(cosim_ != nullptr, req.timing_only, !req.cosim_vcd.empty());
  SessionReport rep;
  rep.notes = outputs.notes();
  outputs.write_timing(device_->effective_timing(), rep);
  platform::CoreRunSetup setup = setup_for(req, outputs, rep);
  if (req.threads != 0) fw::set_host_threads(req.threads);
  // A stop signal of a command-line process (stop_signals.h) asks too.
  setup.interrupt = [&req] { return stop_signal() != 0 || (req.interrupt && req.interrupt()); };
  // The core delivers retires in time order (end, engine, index), whatever
  // the quantum or the co-simulation's syncs: the file is diffable.
  std::ostream* retire_out = outputs.retire();
  const bool several = device_->cores() > 1;  // retire lines name the core
  if (retire_out || req.keep_retires || req.on_retire)
    setup.retire_sink = [&](const sc::RetireRecord& rr) {
      if (retire_out) *retire_out << platform::TpbCore::format_retire(rr, several) << '\n';
      if (req.keep_retires)
        rep.retires.push_back(
            RetireLine{rr.start_ps, rr.end_ps, rr.engine, rr.index, rr.opcode, rr.core});
      if (req.on_retire) req.on_retire(rr);
    };
  // SPEC §14: the detector of this run's program, made before it starts.
  std::unique_ptr<race::Detector> detector;
  if (req.racecheck) {
    // Every core's accesses against every other's (SPEC §15).
    std::vector<platform::TpbCore*> cores;
    std::vector<std::vector<unsigned>> targets;  // logical cores: whom coreK: updates
    for (unsigned c = 0; c < device_->cores(); ++c) {
      cores.push_back(&device_->core(c));
      targets.push_back(device_->update_targets(c));
    }
    detector = make_detector(cores, loaded_, targets);
    setup.race = detector.get();
  }
  {
    const StopWindow window;  // a first stop signal now stops the run, not the process
    platform::DeviceRunResult r = device_->run(loaded_cores(), setup);
    rep.result = r.total;
    per_core_ = std::move(r.per);
  }
  std::fill(loaded_.begin(), loaded_.end(), nullptr);  // a program runs once
  if (detector) rep.races = detector->finish();
  // Outputs are written on every outcome, so a fault leaves complete files.
  outputs.finish(*this, rep);
  // The host could not hold what the run touched (HBM chunks under
  // ulimit -v): an error of the host, not of the program, after every
  // output was written up to the stop.
  if (rep.result.fault && rep.result.fault->kind == "host")
    throw HostError(rep.result.message +
                    " (the run stopped there; its outputs are complete up to that point)");
  return rep;
}

}  // namespace tpb::run
