// The run API (SPEC §12): the one way to run the model from code. `tpbsim
// run`, `tpbsim sweep`'s points, the Python module and the DPI-C core all
// come here; nothing else sets up a run.
//
// A Session is a device of 1..N cores of its own (platform::Device; a core
// alone is N = 1): any number may be open in a process. Each is an
// elaboration in a SystemC simulation context of its own (the process's
// first takes the context current then, and only it may have the
// co-simulation harness); a closed Session's elaboration is kept and reset
// for the next one of as many cores, so a process elaborates as many devices
// as it ever had Sessions open at once. One simulation runs at a time per
// process: runs of Sessions in several threads take turns, and touching
// another Session while one runs is an InputError. Within a Session the
// cores run program after program; memories, the tile file, PE weights,
// semaphores and simulated time carry over (docs/EMBEDDING.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/program_spool.h"
#include "models/race/detector.h"
#include "models/trace/stats.h"
#include "models/trace/vcd_writer.h"
#include "platform/core/device.h"
#include "platform/core/tpb_core.h"
#include "platform/run/mem_spec.h"
#include "platform/run/run_options.h"

namespace tpb::cosim {
class Cosim;
}

namespace tpb::run {

class OutputSet;
struct CoreHost;  // an elaboration of the process (session.cpp)

// The modes of a run that cannot go together, refused here alone
// (InputError): --timing-only with co-simulation, --cosim-vcd without it,
// co-simulation in a tpbsim that has no RTL linked.
void check_run_modes(bool cosim, bool timing_only, bool cosim_vcd);

// What builds a Session's core.
struct CoreSpec {
  std::optional<isa::Arch> arch;  // none: mariana
  std::string timing_file;        // merged over the generation's defaults
  // Merged after the file: an object of dotted keys ("clocks_mhz.dve": 2400)
  // or nested objects, as a --timing file holds.
  nlohmann::json timing_overrides = nlohmann::json::object();
  num::MxEmax mx_emax = num::MxEmax::Ocp;
  // SPEC §15: a device of this many cores sharing one HBM (1: one core, as
  // always; at most platform::Device::kMaxCores).
  unsigned cores = 1;
  bool cosim = false;  // the linked RTL blocks beside the model (SPEC §9 --cosim)
  // With cosim: the file the RTL's waves are written to from the first run
  // (the --cosim-vcd output's write path, OutputSet::write_path).
  std::string cosim_vcd;
};
// The one load of a spec's profile (SPEC §8): the generation's defaults, the
// timing file, the overrides, checked, every bundle's cost resolved.
// Throws InputError naming the file or key (a bad profile, an unknown
// bundle name, a capacity out of range).
platform::Profile load_profile(const CoreSpec& spec);

// SPEC §9 --trace-level.
enum class TraceLevel { Auto, Instr, Bundle };
// --trace-level auto: bundle slices up to this many instructions.
inline constexpr std::uint64_t kAutoBundleLimit = 16384;

// One run's outputs and limits (paths: empty = not written; OutputSet owns
// them).
struct SessionRequest {
  std::string vcd, perfetto, stats, retire;
  std::string dump_timing;                // the profile the core runs with (JSON)
  std::string cosim_vcd;                  // the RTL's waves (a core made with CoreSpec::cosim)
  std::vector<isa::Queue> trace_engines;  // empty: every engine
  trace::TraceWindow trace_window;
  TraceLevel trace_level = TraceLevel::Auto;
  std::uint64_t max_sim_ps = 0;  // 0: off
  double max_wall_seconds = 0;   // 0: off
  // Memory written to .npy files after the run (on every outcome: a fault
  // leaves the state at the fault).
  std::vector<MemSpec> dumps;
  std::vector<TileSpec> tile_dumps;
  bool keep_retires = false;  // SessionReport::retires
  std::function<void(const sc::RetireRecord&)> on_retire;
  std::function<bool()> interrupt;  // platform::CoreRunSetup::interrupt
  bool timing_only = false;         // platform::CoreRunSetup::timing_only (SPEC §13)
  // SPEC §14 --racecheck: every access checked for races (the loaded
  // program read with its notes: load_program_file(path, true)); the report
  // in SessionReport::races and the stats, and as JSON lines in `races_file`.
  bool racecheck = false;
  std::string races_file;
  unsigned threads = 0;      // host threads for the arithmetic (0: every core)
  std::string program_name;  // the stats' "program"
  // Files the run reads: an output naming one of them is refused.
  std::vector<std::pair<std::string, std::string>> inputs;
};

struct RetireLine {
  std::uint64_t start_ps, end_ps;
  isa::Queue engine;
  std::uint64_t index;
  std::uint8_t opcode;
  unsigned core = 0;  // a device of several cores (SPEC §15)
};

struct SessionReport {
  platform::CoreRunResult result;
  trace::RunStats stats;            // per engine, per memory, SFU flags, traces, cosim
  std::vector<RetireLine> retires;  // with keep_retires
  std::vector<std::pair<std::string, std::string>> files;  // (option, path) written
  // Outputs not written: (the path the user named, the message).
  std::vector<std::pair<std::string, std::string>> output_errors;
  std::vector<std::string> notes;     // for the user (stderr)
  std::optional<race::Report> races;  // with SessionRequest::racecheck
  // A device of several cores: each core's own stats (its engines without a
  // prefix; an idle core's table is empty). `stats` then lists every core's
  // engines and memories as coreK.NAME (SPEC §15).
  std::vector<trace::RunStats> core_stats;
};

// SPEC §15 logical cores (`--lnc 2`): the engine register that holds a
// physical core's place in its logical core (0, 1), on every compute engine.
inline constexpr unsigned kCoreIdRegister = 31;
// Every DMA descriptor of `p` that updates another core's semaphore names a
// core of a device of `cores` cores; InputError naming the first that does
// not (SPEC §15). Reads the DMA queues' words once.
void check_remote_cores(isa::SpooledProgram& p, unsigned cores);

class Session {
 public:
  // Throws InputError for a bad spec, while another Session runs, or when
  // co-simulation is asked for after the process's first core.
  explicit Session(const CoreSpec& spec);
  // The same with the spec's profile loaded already (load_profile(spec): a
  // caller that reads the profile before the core is made loads it once).
  Session(const CoreSpec& spec, platform::Profile profile);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Whether any Session is open in this process.
  static bool is_open();
  // SystemC elaborations (contexts) the process's Sessions have made.
  static std::size_t elaborations();

  // The selected core (core 0 unless select() said otherwise), its
  // simulation context made current (InputError while another Session
  // runs).
  platform::TpbCore& core() {
    activate();
    return device_->core(selected_);
  }
  platform::Device& device() {
    activate();
    return *device_;
  }
  unsigned cores() const { return device_->cores(); }
  // The core that core(), load(), write_rows / read_rows and the tile and
  // .npy helpers below address from now on (RangeError past the device).
  void select(unsigned core);
  // `--lnc 2` (SPEC §15) for the next run: the selected core is place `id`
  // (0, 1) of its logical core: r31 of every compute engine, and a
  // descriptor's `coreK:` names logical core K (the physical core at this
  // place of K's pair; platform::Device::set_logical_cores).
  void set_core_id(unsigned id);
  unsigned selected() const { return selected_; }
  // Every core's configuration (its profile's figures per core).
  const platform::CoreConfig& config() const { return device_->config(); }
  // The device's HBM capacity, every core's hbm.bytes pooled (SPEC §15).
  std::uint64_t hbm_bytes() const { return device_->hbm_bytes(); }
  // Each core's result of the last run (none: idle).
  const std::vector<std::optional<platform::CoreRunResult>>& per_core() const { return per_core_; }
  // The last run's stats: a core's, or a device's (every core's engines as
  // coreK.NAME; each core's own in `per_core`).
  trace::RunStats run_stats(std::vector<trace::RunStats>* per_core);
  cosim::Cosim* cosim() { return cosim_; }

  // Loads a program for the next run (engines it gives no words run nothing).
  // It must live until that run has ended (its notes name the race check's
  // lines).
  // On the selected core; the cores given a program run, the others stay
  // idle. InputError (nothing loaded) for a DMA descriptor whose remote
  // semaphore (update=...(coreK:semN)) names a core the device does not have.
  void load(isa::SpooledProgram& p) {
    check_remote_cores(p, cores());
    core().load_program(p);
    loaded_[selected_] = &p;
  }
  // Runs what is loaded. Throws InputError (nothing run) for an output that
  // names an input or another output, or that cannot be created, and for
  // modes that cannot go together (check_run_modes).
  SessionReport run(const SessionRequest& req);
  // The same with its outputs checked and opened already (`outputs` made
  // from `req`; `tpbsim run` opens them before it builds the core).
  SessionReport run(const SessionRequest& req, OutputSet& outputs);

  // Bytes of one partition of a region (SBUF, PSUM) under this configuration.
  std::uint32_t partition_bytes(isa::Region region) const {
    return config().partition_bytes(region);
  }

 private:
  void open(platform::Profile profile, const CoreSpec& spec);
  std::vector<bool> loaded_cores() const;
  // Makes this Session's simulation context SystemC's current one.
  void activate() const;
  platform::CoreRunSetup setup_for(const SessionRequest& req, OutputSet& outputs,
                                   SessionReport& rep) const;
  CoreHost* host_ = nullptr;  // its elaboration
  platform::Device* device_ = nullptr;
  unsigned selected_ = 0;
  cosim::Cosim* cosim_ = nullptr;
  std::vector<isa::SpooledProgram*> loaded_;  // per core: the program of the next run
  std::vector<std::optional<platform::CoreRunResult>> per_core_;
};

// Reads a program file into per-engine spools; InputError with
// "FILE:LINE:COL: error: MESSAGE" for text, the reason otherwise. With
// `notes`, each instruction's line and EVENTS are kept too (16 bytes an
// instruction), which a run with the race check needs.
std::unique_ptr<isa::SpooledProgram> load_program_file(const std::string& path, bool notes = false);
// A program from text (SPEC §9 syntax) or from raw 64-byte words.
std::unique_ptr<isa::SpooledProgram> program_from_text(const std::string& text,
                                                       const std::string& name, bool notes = false);
std::unique_ptr<isa::SpooledProgram> program_from_words(const std::uint8_t* data, std::size_t len,
                                                        const std::string& name,
                                                        bool notes = false);

// The exit code of an outcome (SPEC §9): 0 ok, 2 fault, 3 deadlock, 4 watchdog,
// 130 interrupted.
int exit_code(platform::RunStatus s);
// SPEC §14: the exit code of a completed run that found races.
inline constexpr int kExitRace = 5;
// The exit code of a report: exit_code of its status, 1 when an output was
// not written, else 5 when the race check found a race, else 0.
int exit_code(const SessionReport& r);

}  // namespace tpb::run
