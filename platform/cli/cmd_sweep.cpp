// `tpbsim sweep SWEEP.json [options]`: a grid of timing overrides x
// workloads, one `tpbsim run` child process per point (SystemC elaborates
// once per process), the stats of every point merged into one CSV and a
// plot. This is argument parsing; the sweep layer (platform/sweep) plans
// (plan.h), runs points (point.h) by a runner (runners.h) and collects
// (collect.h). docs/SWEEPS.md is the manual.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "platform/cli/commands.h"
#include "platform/run/stop_signals.h"
#include "platform/sweep/child_process.h"
#include "platform/sweep/collect.h"
#include "platform/sweep/plan.h"
#include "platform/sweep/point.h"
#include "platform/sweep/runners.h"
#include "platform/sweep/sweep_files.h"

namespace tpb::cli {

namespace {

namespace po = boost::program_options;

constexpr const char* kSweepUsage =
    "usage: tpbsim sweep SWEEP.json [options]     plan, run, collect and plot a sweep\n"
    "       tpbsim sweep --collect OUT [options]  merge the points' results of OUT\n"
    "       tpbsim sweep --run-point OUT N        run point N of OUT's plan (for runners)\n";

struct SweepArgs {
  std::string sweep_file, out, collect_dir, tpbsim, jobs;
  std::vector<std::string> run_point;
  sweep::RunnerOptions runner;
  bool help = false, run_point_given = false;
};

po::options_description sweep_options(SweepArgs& a) {
  po::options_description opts("tpbsim sweep options");
  sweep::RunnerOptions& r = a.runner;
  opts.add_options()("help,h", "show this help")(
      "out,o", po::value(&a.out), "output directory (default: SWEEP's stem + '.sweep' here)")(
      "jobs,j", po::value(&a.jobs),
      "points run at once, 1..4096 (local, parallel; default: processors)")(
      "runner", po::value(&r.runner), "local | parallel (GNU parallel) | slurm (sbatch --array)")(
      "sshlogin,S", po::value(&r.sshlogins)->composing(), "GNU parallel --sshlogin (repeatable)")(
      "sbatch", po::value(&r.sbatch)->composing(),
      "extra #SBATCH line for the Slurm script, e.g. --sbatch=--partition=cpu")(
      "dry-run", "plan only: write plan.json, commands.txt and the runner's script; run nothing")(
      "metric", po::value(&r.metric),
      "the plotted result column (default: the sweep's, simulated_ns)")(
      "progress", "show a progress bar even when stderr is not a terminal")(
      "no-plot", "write the CSV only")("tpbsim", po::value(&a.tpbsim),
                                       "the tpbsim the runners call (default: this one)")(
      "collect", po::value(&a.collect_dir), "merge the results of a run sweep directory")(
      "run-point", po::value(&a.run_point)->multitoken(), "OUT N: run one point (runners)");
  return opts;
}

// Parses the command line into `a`; false (after the message) on a usage error.
bool parse_sweep_args(const Args& args, SweepArgs& a, po::options_description& opts) {
  po::options_description hidden;
  hidden.add_options()("sweep", po::value(&a.sweep_file));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "tpbsim sweep: error: %s\n%s", e.what(), kSweepUsage);
    return false;
  }
  a.help = vm.count("help") > 0;
  a.runner.plot = !vm.count("no-plot");
  a.runner.dry_run = vm.count("dry-run") > 0;
  a.runner.progress = vm.count("progress") > 0;
  a.run_point_given = vm.count("run-point") > 0;
  return true;
}

// --jobs: 1..4096 decimal digits; 0 when not given.
bool parse_jobs(const std::string& s, unsigned& jobs) {
  jobs = 0;
  if (s.empty()) return true;
  std::size_t pos = 0;
  unsigned long v = 0;
  try {
    if (s.find_first_not_of("0123456789") == std::string::npos) v = std::stoul(s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != s.size() || v < 1 || v > 4096) {
    std::fprintf(stderr, "tpbsim sweep: error: --jobs '%s' is not a number of points 1..4096\n",
                 sweep::shown(s).c_str());
    return false;
  }
  jobs = static_cast<unsigned>(v);
  return true;
}

// The runner's options, checked: false (after the message) when they are not.
bool check_runner(const SweepArgs& a) {
  const std::string& runner = a.runner.runner;
  if (runner != "local" && runner != "parallel" && runner != "slurm") {
    std::fprintf(stderr, "tpbsim sweep: error: --runner '%s' is not local, parallel or slurm\n",
                 sweep::shown(runner).c_str());
    return false;
  }
  if (!a.runner.sshlogins.empty() && runner != "parallel") {
    std::fprintf(stderr, "tpbsim sweep: error: --sshlogin needs --runner parallel\n");
    return false;
  }
  return true;
}

// Plan, then run by the runner and collect.
int plan_and_run(SweepArgs& a) {
  if (a.sweep_file.empty()) {
    std::fprintf(stderr, "tpbsim sweep: error: no SWEEP.json given\n%s", kSweepUsage);
    return 1;
  }
  if (!check_runner(a)) return 1;
  if (a.runner.jobs == 0) a.runner.jobs = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  sweep::PlanOptions po;
  po.out = a.out.empty() ? std::filesystem::path(a.sweep_file).stem().string() + ".sweep" : a.out;
  po.tpbsim = a.tpbsim.empty() ? sweep::self_executable() : a.tpbsim;
  po.metric = a.runner.metric;
  const nlohmann::json plan = sweep::make_plan(a.sweep_file, po);
  std::fprintf(stderr, "tpbsim sweep: %zu points planned in %s\n", plan["points"].size(),
               plan["out"].get<std::string>().c_str());
  a.runner.progress = a.runner.progress || isatty(2);
  return sweep::run_sweep(plan, a.runner);
}

int dispatch(SweepArgs& a) {
  if (a.run_point_given) {
    if (a.run_point.size() != 2) {
      std::fprintf(stderr, "tpbsim sweep: error: --run-point takes OUT N\n%s", kSweepUsage);
      return 1;
    }
    return sweep::run_point(a.run_point[0], a.run_point[1]);
  }
  if (!a.collect_dir.empty()) return sweep::collect(a.collect_dir, a.runner.metric, a.runner.plot);
  return plan_and_run(a);
}

}  // namespace

int cmd_sweep(const Args& args) {
  SweepArgs a;
  po::options_description opts = sweep_options(a);
  if (!parse_sweep_args(args, a, opts)) return 1;
  if (a.help) {
    std::cout << kSweepUsage << opts;
    return 0;
  }
  // A stop signal is passed to the points, which stop and record it; the
  // sweep then starts no more and exits 128 + the signal.
  run::install_stop_signals("tpbsim sweep", run::StopMode::Supervise);
  if (!parse_jobs(a.jobs, a.runner.jobs)) return 1;
  try {
    return dispatch(a);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tpbsim sweep: error: out of memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim sweep: error: %s\n", e.what());
  }
  return 1;
}

}  // namespace tpb::cli
