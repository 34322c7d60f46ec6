// Running one point of a planned sweep: `tpbsim sweep --run-point OUT N`,
// whoever starts it (the local runner, GNU parallel, a Slurm array task).
// The point's `tpbsim run` runs in its workload's directory with the argv of
// plan.json; its stdout and stderr go to the point's directory, and its
// result.json records the exit code (128 + N when killed by signal N) and
// the host time.
#pragma once

#include <string>

namespace tpb::sweep {

// Runs point `index` (decimal text, from the runner) of OUT's plan. Returns
// the run's exit code, or 128 + N when this process got stop signal N
// (which was passed on to the run). SweepError for a bad index or plan.
int run_point(const std::string& out, const std::string& index);

}  // namespace tpb::sweep
