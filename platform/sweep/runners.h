// The runners of a planned sweep (docs/SWEEPS.md "Runners"): each runs
// `tpbsim sweep --run-point OUT N` for every point N, then the points are
// collected, so all three give the same CSV.
//   local     --jobs child processes at a time, a progress bar; then collect
//   parallel  GNU parallel (--sshlogin passed through); then collect
//   slurm     a job array (OUT/sweep.sbatch) and a collect job after it
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpb::sweep {

struct RunnerOptions {
  std::string runner = "local";        // local | parallel | slurm
  unsigned jobs = 1;                   // points at once (local, parallel)
  std::vector<std::string> sshlogins;  // GNU parallel --sshlogin
  std::vector<std::string> sbatch;     // extra #SBATCH lines
  bool dry_run = false;                // write the runner's script, run nothing
  bool progress = false;               // a progress bar (local) or --bar (parallel)
  std::string metric;                  // of the plot ("": the plan's)
  bool plot = true;
};

// Runs `plan` (make_plan's) by `o.runner`: the sweep's exit code (0 every
// point ok, 1 a runner that could not run, 2 a failed point, 128 + N
// stopped by signal N).
int run_sweep(const nlohmann::json& plan, const RunnerOptions& o);

}  // namespace tpb::sweep
