// A sweep's output directory (docs/SWEEPS.md "What is written"): what a
// sweep writes there, and the one kind of directory it may write over — one
// holding a plan this tpbsim wrote for that very directory, of which it
// removes exactly what that plan proves it wrote.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tpb::sweep {

// The files a sweep writes at the top of OUT (plan.json aside).
inline const char* const kSweepFiles[] = {
    "results.csv",        "plot.png",        "parallel.joblog", "commands.txt", "points.txt",
    "parallel_input.tsv", "run_parallel.sh", "sweep.sbatch",    "slurm.jobid",  "collect.out"};
// The files of a point directory besides the outputs its argv names.
inline const char* const kPointFiles[] = {"timing.json", "stats.json", "stdout.txt", "stderr.txt",
                                          "result.json"};

// "p0000", "p0001" ...
std::string point_id(std::size_t i);
// OUT/points/pNNNN.
std::filesystem::path point_dir(const std::string& out, std::size_t i);

// Before anything is planned into `out`: SweepError when it is not a
// directory, or a non-empty one without a plan.json, or one whose plan.json
// is not a plan of this tpbsim for `out` (nothing removed). The previous
// plan when there is one.
std::optional<nlohmann::json> previous_sweep(const std::filesystem::path& out);
// Removes what `plan` (from previous_sweep) wrote in `out`: its point
// directories' files, the top-level files of a sweep, then the directories
// if that left them empty. Anything else stays.
void remove_previous_sweep(const std::filesystem::path& out, const nlohmann::json& plan);

// OUT/plan.json of a planned sweep (SweepError when there is none).
nlohmann::json load_plan(const std::string& out);

}  // namespace tpb::sweep
