#include "platform/sweep/collect.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "models/isa/address_map.h"
#include "platform/sweep/child_process.h"
#include "platform/sweep/plan.h"
#include "platform/sweep/sweep_dir.h"
#include "platform/sweep/sweep_files.h"

namespace tpb::sweep {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One point's row.
struct Row {
  std::string status;  // "ok", "race" (--racecheck found one: exit 5) or "failed"
  int exit_code = -1;
  std::string why;  // for a failed point
  std::map<std::string, double> m;
};

std::string fmt_metric(const std::string& col, double v) {
  if (col.size() > 8 && col.compare(col.size() - 8, 8, "_seconds") == 0)
    return fmt::format("{:.3f}", v);
  if (col.find("utilization") != std::string::npos) return fmt::format("{:.6f}", v);
  if (col.find("_ns") != std::string::npos) return fmt::format("{:.3f}", v);
  return fmt::format("{:.0f}", v);
}

// A failed point's reason: its exit code and the last line of its stderr.
std::string failure(const fs::path& dir, int exit_code) {
  std::string err;
  try {
    err = read_file((dir / "stderr.txt").string(), "point stderr");
  } catch (const SweepError&) {  // the exit code says enough
  }
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
  if (const std::size_t nl = err.rfind('\n'); nl != std::string::npos) err = err.substr(nl + 1);
  return fmt::format("exit {}{}", exit_code, err.empty() ? "" : ": " + shown(err));
}

// The metrics of a point's `tpbsim run --stats`. A device of several cores
// names its engines `coreK.ENGINE`: each column is then the sum over the
// cores, and the utilization their mean (busy time over cores x the run's
// time; docs/SWEEPS.md).
void read_stats(const json& s, Row& row) {
  const double sim_ns = s.at("simulated_ps").get<double>() / 1e3;
  row.m["simulated_ns"] = sim_ns;
  std::map<std::string, unsigned> cores;  // by engine: how many cores have it
  for (const json& e : s.at("engines")) {
    std::string n = e.at("name");
    if (n.rfind("core", 0) == 0 && n.find('.') != std::string::npos) n = n.substr(n.find('.') + 1);
    ++cores[n];
    const double busy = e.at("busy_cycles").get<double>(), mhz = e.at("clock_mhz").get<double>();
    const double busy_ns = mhz > 0 ? busy * 1e3 / mhz : 0;
    row.m[n + "_instructions"] += e.at("instructions").get<double>();
    row.m[n + "_busy_cycles"] += busy;
    row.m[n + "_stall_cycles"] += e.at("stall_cycles").get<double>();
    row.m[n + "_memory_stall_cycles"] += e.value("memory_stall_cycles", 0.0);
    row.m[n + "_busy_ns"] += busy_ns;
  }
  for (const auto& [n, k] : cores)
    row.m[n + "_utilization"] = sim_ns > 0 ? row.m[n + "_busy_ns"] / (k * sim_ns) : 0;
}

Row read_point(const json& plan, std::size_t i) {
  Row row;
  const fs::path dir = point_dir(plan["out"].get<std::string>(), i);
  const fs::path res = dir / "result.json";
  if (!fs::exists(res)) {
    row.status = "failed";
    row.why = "not run (no result.json)";
    return row;
  }
  const json r = parse_json_file(res.string(), "point result");
  row.exit_code = r.value("exit", -1);
  row.m["wall_seconds"] = r.value("wall_seconds", 0.0);
  row.status = "failed";
  // Exit 5: the run completed with races (SPEC §14): its metrics are read.
  if (row.exit_code != 0 && row.exit_code != 5) {
    row.why = failure(dir, row.exit_code);
    return row;
  }
  json s;
  try {
    s = parse_json_file((dir / "stats.json").string(), "point stats");
  } catch (const SweepError& e) {  // exit 0 without stats: a failed point, not a failed merge
    row.why = e.what();
    return row;
  }
  row.status = row.exit_code == 5 ? "race" : "ok";
  read_stats(s, row);
  return row;
}

// Whether `s` is a plain number (as a spreadsheet reads one).
bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  (void)std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// RFC 4180 quoting; a text a spreadsheet would take for a formula (= + - @,
// or a tab or CR first) is prefixed with ' so it stays text (a workload
// named "=HYPERLINK(...)" is shown, not run).
std::string csv_field(const std::string& in) {
  std::string s = in;
  if (!s.empty() && std::string("=+-@\t\r").find(s[0]) != std::string::npos && !is_number(s))
    s = "'" + s;
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string csv_header(const json& plan, const std::vector<std::string>& columns) {
  std::string csv = "point,workload";
  for (const auto& k : plan["parameters"].get<std::vector<std::string>>())
    csv += "," + csv_field(k);
  csv += ",status,exit_code";
  for (const auto& c : columns) csv += "," + c;
  return csv + "\n";
}

std::string csv_row(const json& p, const Row& row, const std::vector<std::string>& columns) {
  std::string csv = p["id"].get<std::string>() + "," + csv_field(p["workload"]);
  for (const json& v : p["values"]) csv += "," + csv_field(value_text(v));
  csv += "," + row.status + "," + (row.exit_code >= 0 ? std::to_string(row.exit_code) : "");
  for (const auto& c : columns) {
    csv += ",";
    if (const auto it = row.m.find(c); it != row.m.end()) csv += fmt_metric(c, it->second);
  }
  return csv + "\n";
}

// The plot script (platform/sweep/plot_sweep.py): TPBSIM_PLOT_SCRIPT, else
// the one installed beside this tpbsim (PREFIX/share/tpbsim, cmake/install.cmake),
// else the sources' (a build tree's tpbsim).
std::string plot_script() {
  if (const char* e = std::getenv("TPBSIM_PLOT_SCRIPT")) return e;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed = exe.parent_path().parent_path() / "share/tpbsim/plot_sweep.py";
  if (!ec && fs::is_regular_file(installed, ec)) return installed.string();
#ifdef TPBSIM_SOURCE_DIR
  return std::string(TPBSIM_SOURCE_DIR) + "/platform/sweep/plot_sweep.py";
#else
  return "platform/sweep/plot_sweep.py";
#endif
}

// OUT/plot.png of `metric` against the plan's x, one line per series; a
// missing matplotlib only warns.
void plot(const json& plan, const std::string& out, const std::string& csv_path,
          const std::string& metric) {
  const std::string png = (fs::path(out) / "plot.png").string();
  const std::string x = plan["plot"]["x"].get<std::string>();
  ChildSpec py;
  py.search_path = true;
  py.argv = {"/usr/bin/python3",
             plot_script(),
             csv_path,
             png,
             "--x",
             x,
             "--metric",
             metric,
             "--title",
             plan.value("name", std::string("sweep"))};
  if (const std::string s = plan["plot"].value("series", ""); !s.empty()) {
    py.argv.push_back("--series");
    py.argv.push_back(s);
  }
  const int rc = run_child(py);
  if (rc == 0)
    std::fprintf(stderr, "tpbsim sweep: wrote %s (%s against %s)\n", png.c_str(), metric.c_str(),
                 x.c_str());
  else
    std::fprintf(stderr,
                 "tpbsim sweep: warning: no plot (%s exited %d; the CSV is complete; "
                 "set TPBSIM_PLOT_SCRIPT or pass --no-plot)\n",
                 py.argv[1].c_str(), rc);
}

}  // namespace

std::vector<std::string> metric_columns(bool act) {
  std::vector<std::string> c = {"simulated_ns"};
  for (isa::Queue e : isa::kEngines) {
    if (!act && !isa::listed_when_idle(e)) continue;
    for (const char* m : {"instructions", "busy_cycles", "stall_cycles", "memory_stall_cycles",
                          "busy_ns", "utilization"})
      c.push_back(fmt::format("{}_{}", isa::engine_name(e), m));
  }
  c.push_back("wall_seconds");
  return c;
}

void require_metric(const std::string& metric) {
  const std::vector<std::string> cols = metric_columns(true);
  if (std::find(cols.begin(), cols.end(), metric) == cols.end())
    throw SweepError(fmt::format("metric '{}' is not a result column (one of: {})", metric,
                                 fmt::join(cols, " ")));
}

int collect(const std::string& out, const std::string& metric_opt, bool with_plot) {
  const json plan = load_plan(out);
  const std::string metric = metric_opt.empty() ? plan.value("metric", "simulated_ns") : metric_opt;
  require_metric(metric);
  std::vector<std::string> failed;
  std::size_t raced = 0;
  const json& points = plan["points"];
  std::vector<Row> rows;
  bool act = false;  // a point ran the ACT engine: its columns are in the CSV
  for (std::size_t i = 0; i < points.size(); ++i) {
    rows.push_back(read_point(plan, i));
    act = act || rows.back().m.count("act_instructions") != 0;
  }
  const std::vector<std::string> columns = metric_columns(act);
  std::string csv = csv_header(plan, columns);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Row& row = rows[i];
    csv += csv_row(points[i], row, columns);
    raced += row.status == "race";
    if (row.status == "failed")
      failed.push_back(fmt::format("{}: {}", points[i]["describe"].get<std::string>(), row.why));
  }
  const std::string csv_path = (fs::path(out) / "results.csv").string();
  write_file(csv_path, csv);
  std::fprintf(stderr, "tpbsim sweep: %zu points, %zu ok, %zu failed%s; wrote %s\n", points.size(),
               points.size() - failed.size() - raced, failed.size(),
               raced ? fmt::format(", {} with races (status race)", raced).c_str() : "",
               csv_path.c_str());
  if (with_plot) plot(plan, out, csv_path, metric);
  if (failed.empty()) return 0;
  std::fprintf(stderr, "tpbsim sweep: error: %zu of %zu points failed:\n", failed.size(),
               points.size());
  for (const auto& f : failed) std::fprintf(stderr, "  %s\n", f.c_str());
  return 2;
}

}  // namespace tpb::sweep
