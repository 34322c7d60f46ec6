// `tpbsim run PROGRAM [options]` (SPEC §9): argument parsing, then the run
// API (platform/run/run.h) does the run; this prints what it says.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <systemc>

#include "platform/cli/commands.h"
#include "platform/cosim/cosim.h"
#include "platform/run/no_sc_main.h"
#include "platform/run/race_check.h"
#include "platform/run/run.h"
#include "platform/run/stop_signals.h"

namespace tpb::cli {

namespace {

constexpr const char* kUsage =
    "usage: tpbsim run PROGRAM [options]\n"
    "       tpbsim run --cores N PROGRAM0 [PROGRAM1 ...] [options]  (program i on core i)\n"
    "PROGRAM: program text (docs/ASM.md; `.engine pool|dve|pe|sfu|dma0..dma15` picks the\n"
    "queue, dma_copy descriptors move data between HBM and SBUF) or 64-byte words (.bin)\n";
constexpr const char* kExitCodes =
    "\nexit codes: 0 ok; 1 bad input, usage or file error (nothing runs) or an output\n"
    "not written; 2 fault (invalid instruction, address error, tile fault); 3 deadlock;\n"
    "4 watchdog (--max-sim-time or --max-wall-time reached: the outputs are complete up\n"
    "to the stop time); 5 race (--racecheck found one; the run completed and its outputs\n"
    "are written; 2, 3 and 4 take precedence); 128+N stopped by signal N (130 SIGINT, 143 SIGTERM, "
    "129 SIGHUP:\n"
    "during the simulation the outputs are written complete up to the stop time; a second\n"
    "signal, or one while reading inputs or writing outputs, stops at once and leaves no\n"
    "partial file). docs/BAD_INPUT.md lists every message.\n";
// Races printed on stderr (the rest: --races FILE, --stats).
constexpr std::size_t kRaceLines = 20;

// Parses the arguments into `o`: -1 to go on, else the exit code (help
// printed: 0; a usage error: 1).
int parse(const Args& args, run::RunOptions& o) {
  bool help = false;
  try {
    o = run::parse_run_args(args, &help);
  } catch (const run::UsageError& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n%s", e.what(), kUsage);
    return 1;
  } catch (const run::InputError& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", e.what());
    return 1;
  }
  if (help) {
    run::RunOptions shown;
    std::cout << kUsage << run::run_options_description(shown) << kExitCodes;
    return 0;
  }
  if (o.program.empty()) {
    std::fprintf(stderr, "tpbsim run: error: no PROGRAM given\n%s", kUsage);
    return 1;
  }
  return -1;
}

// On stderr: how the run ended when not ok, a stop signal, every output not
// written.
void report_outcome(const run::CommandOutcome& out, int sig) {
  const platform::CoreRunResult& r = out.report.result;
  if (r.status == platform::RunStatus::Interrupted) {
    std::string what = r.message;
    if (what.rfind("interrupted; ", 0) == 0) what = what.substr(13);
    std::fprintf(stderr,
                 "tpbsim run: interrupted (%s): %s; the outputs are complete up to the stop time\n",
                 sig ? run::signal_name(sig) : "interrupt", what.c_str());
  } else if (r.status != platform::RunStatus::Ok) {
    std::fprintf(stderr, "tpbsim run: %s: %s\n", platform::status_name(r.status),
                 r.message.c_str());
  }
  if (sig && r.status != platform::RunStatus::Interrupted)
    std::fprintf(stderr, "tpbsim run: interrupted (%s) as the run ended; its outputs are whole\n",
                 run::signal_name(sig));
  // The race check's findings (SPEC §14), even with -q: a race is no success.
  if (out.report.races)
    for (const std::string& line : run::race_lines(*out.report.races, kRaceLines))
      std::fprintf(stderr, "tpbsim run: %s\n", line.c_str());
  if (out.report.output_errors.empty()) return;
  std::string list;
  for (const auto& [path, msg] : out.report.output_errors) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", msg.c_str());
    list += (list.empty() ? "" : ", ") + path;
  }
  std::fprintf(stderr, "tpbsim run: error: not written: %s\n", list.c_str());
}

// On stdout: the summary line (never "ok" when the exit code is not 0) and
// the co-simulation's.
void print_summary(const run::CommandOutcome& out) {
  const platform::CoreRunResult& r = out.report.result;
  const std::uint64_t races = out.report.races ? out.report.races->total : 0;
  std::printf("tpbsim run: %s, arch %s, simulated %.3f ns, %llu instructions%s\n",
              out.exit_code == 1                ? "error"
              : out.exit_code == run::kExitRace ? "race"
                                                : platform::status_name(r.status),
              out.arch.c_str(), static_cast<double>(r.simulated_ps) / 1000.0,
              static_cast<unsigned long long>(r.instructions),
              races ? fmt::format(", {} race{}", races, races == 1 ? "" : "s").c_str() : "");
  if (out.report.stats.cosim.enabled)
    for (const std::string& line : cosim::summary(out.report.stats.cosim))
      std::printf("tpbsim run: %s\n", line.c_str());
}

}  // namespace

int cmd_run(const Args& args) {
  // Ctrl-C, SIGTERM, SIGHUP stop the run (stop_signals.h); SIGPIPE and
  // SIGXFSZ become write errors naming the file.
  run::install_stop_signals("tpbsim run");
  // Keep stdout for the summary: no banner, no "simulation stopped" info.
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  run::RunOptions o;
  if (const int rc = parse(args, o); rc >= 0) return rc;
  const run::CommandOutcome out = run::run_once(o);
  if (!out.ran) {
    for (const std::string& e : out.errors)
      if (out.error_is_located)
        std::fprintf(stderr, "%s\n", e.c_str());
      else
        std::fprintf(stderr, "tpbsim run: error: %s\n", e.c_str());
    return 1;
  }
  if (!o.quiet)
    for (const std::string& n : out.notes)
      std::fprintf(stderr, "tpbsim run: note: %s\n", n.c_str());
  const int sig = run::stop_signal();
  report_outcome(out, sig);
  if (!o.quiet) print_summary(out);
  // A stop signal's exit code (128 + N) whatever the run's outcome was.
  return sig ? 128 + sig : out.exit_code;
}

}  // namespace tpb::cli
