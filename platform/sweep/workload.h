// A sweep's workload: a directory with a cmd.txt holding its `tpbsim run`
// arguments (traces/workloads/README.md), read with the very option table
// of `tpbsim run` (platform/run/run_options.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/encodings.h"
#include "platform/run/run_options.h"

namespace tpb::sweep {

struct Workload {
  std::string name;  // its directory's basename, or as many trailing components as tell it apart
  std::string dir;   // absolute; its points run here
  run::RunOptions options;  // its `tpbsim run` options (paths relative to dir; no --timing)
  nlohmann::json base_timing = nlohmann::json::object();  // its own --timing file, if any
  isa::Arch arch = isa::Arch::Mariana;  // --arch, else its program's .arch, else mariana
};

// The workload `dir` (absolute, or relative to the sweep file's directory)
// of `sweep_file`. SweepError naming the file and what is wrong: no
// directory, no cmd.txt, an option `tpbsim run` refuses, --stats (the
// sweep's), no PROGRAM, a bad --timing file, program or --arch.
Workload load_workload(const std::string& dir, const std::string& sweep_file);

// Two workloads of one basename (a/pipeline, b/pipeline) are named by as
// many trailing components of their directories as tell them apart.
void name_apart(std::vector<Workload>& workloads);

}  // namespace tpb::sweep
