// Collecting a sweep (docs/SWEEPS.md "CSV columns"): every point's result
// and stats merged into OUT/results.csv, one row per point in plan order (a
// point that has not run, or failed, keeps its row), and the plot of one
// column (platform/sweep/plot_sweep.py) into OUT/plot.png.
#pragma once

#include <string>
#include <vector>

namespace tpb::sweep {

// The metric columns of results.csv, after the point, workload, parameter,
// status and exit_code columns: the engines of every run's stats, and the
// ACT engine's (SPEC §18) when `act` (some point ran it).
std::vector<std::string> metric_columns(bool act = true);
// SweepError unless `metric` is one of metric_columns().
void require_metric(const std::string& metric);

// Writes OUT/results.csv and (with `plot`) OUT/plot.png of `metric` ("":
// the plan's). 0 when every point ran and exited 0, 2 when one did not (each
// such point listed on stderr).
int collect(const std::string& out, const std::string& metric, bool plot);

}  // namespace tpb::sweep
