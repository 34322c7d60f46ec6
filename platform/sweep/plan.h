// Planning a sweep (docs/SWEEPS.md): the sweep file read and checked, its
// grid of timing overrides x workloads made into points, and every point's
// profile checked before anything runs. The plan is written into OUT:
// plan.json (every point's id, workload, values, working directory and
// exact `tpbsim run` argv), commands.txt, points.txt, parallel_input.tsv and
// each point's timing.json; whoever runs a point reads it from there
// (point.h), so every runner runs the same thing.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tpb::sweep {

struct PlanOptions {
  std::string out;     // OUT
  std::string tpbsim;  // the binary the points and runners call
  std::string metric;  // overrides the sweep file's ("": the file's, else simulated_ns)
};

// Plans `sweep_file` into `o.out`, replacing a sweep planned there before
// (sweep_dir.h). SweepError naming the file, the point and the key for bad
// input; nothing is written then.
nlohmann::json make_plan(const std::string& sweep_file, const PlanOptions& o);

// A value in the CSV and in point descriptions: strings bare, numbers as JSON.
std::string value_text(const nlohmann::json& v);

}  // namespace tpb::sweep
