#include "platform/sweep/plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/timing/timing_profile.h"
#include "platform/core/tpb_core.h"
#include "platform/run/mem_spec.h"
#include "platform/run/run_options.h"
#include "platform/sweep/collect.h"
#include "platform/sweep/shell_quote.h"
#include "platform/sweep/sweep_dir.h"
#include "platform/sweep/sweep_files.h"
#include "platform/sweep/workload.h"

namespace tpb::sweep {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The most points a sweep plans (plan.json about 1 KiB a point).
constexpr std::size_t kMaxPoints = 100000;

const std::set<std::string> kSweepKeys = {"name", "description", "workloads", "parameters",
                                          "base", "metric",      "plot"};

// An error in the sweep file: the message starts with its name.
SweepError file_error(const std::string& sweep_file, const std::string& what) {
  return SweepError(sweep_file + ": " + what);
}

struct Param {
  std::string key;
  std::vector<json> values;
  std::vector<std::string> path;  // the key in the profile (timing::resolve_dotted_key)
};

// What the sweep file says, checked.
struct Sweep {
  std::string file;
  json text;
  json base;  // overrides of every point
  std::vector<Workload> workloads;
  std::vector<Param> params;
  std::string metric, x, series;  // the plot
};

// The top level of the sweep file: an object of the known keys, with
// workloads, parameters and base of the right kinds.
json read_sweep_file(const std::string& file) {
  const json s = parse_json_file(file, "sweep file");
  if (!s.is_object()) throw file_error(file, "expected a JSON object");
  for (auto it = s.begin(); it != s.end(); ++it)
    if (!kSweepKeys.count(it.key()))
      throw file_error(file, fmt::format("unknown key '{}' (known: name description workloads "
                                         "parameters base metric plot)",
                                         it.key()));
  if (!s.contains("workloads") || !s["workloads"].is_array() || s["workloads"].empty())
    throw file_error(file, "'workloads' must be a non-empty array of workload directories");
  if (!s.contains("parameters") || !s["parameters"].is_array() || s["parameters"].empty())
    throw file_error(file,
                     "'parameters' must be a non-empty array of {\"key\": ..., \"values\": [...]}");
  if (!s.value("base", json::object()).is_object())
    throw file_error(file, "'base' must be an object of timing overrides");
  return s;
}

void read_workloads(Sweep& sw) {
  std::set<std::string> dirs;
  for (const json& w : sw.text["workloads"]) {
    if (!w.is_string())
      throw file_error(sw.file,
                       fmt::format("workload {} is not a directory name", shown(value_text(w))));
    sw.workloads.push_back(load_workload(w.get<std::string>(), sw.file));
    if (!dirs.insert(sw.workloads.back().dir).second)
      throw file_error(
          sw.file, fmt::format("workload '{}' is listed twice ({})", shown(w.get<std::string>()),
                               shown(sw.workloads.back().dir)));
  }
  name_apart(sw.workloads);
}

// Parameter i: {"key", "values"}, a key of every workload's generation's
// profile, listed once.
Param read_param(const Sweep& sw, std::size_t i, const std::map<isa::Arch, json>& profiles) {
  const json& p = sw.text["parameters"][i];
  if (!p.is_object() || !p.contains("key") || !p["key"].is_string() || !p.contains("values") ||
      !p["values"].is_array() || p["values"].empty())
    throw file_error(sw.file, fmt::format("parameter {} must be {{\"key\": \"dotted.timing.key\", "
                                          "\"values\": [...]}} with at least one value",
                                          i));
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it.key() != "key" && it.key() != "values")
      throw file_error(sw.file, fmt::format("parameter {}: unknown key '{}'", i, it.key()));
  Param q{p["key"].get<std::string>(), {}, {}};
  for (const json& v : p["values"]) q.values.push_back(v);
  for (const Param& e : sw.params)
    if (e.key == q.key)
      throw file_error(sw.file, fmt::format("parameter '{}' is listed twice", shown(q.key)));
  try {
    for (const auto& [arch, prof] : profiles) q.path = timing::resolve_dotted_key(q.key, prof);
  } catch (const timing::TimingError& e) {
    throw file_error(sw.file, fmt::format("parameter {}", e.what()));
  }
  return q;
}

void read_params(Sweep& sw) {
  std::map<isa::Arch, json> profiles;
  for (const Workload& w : sw.workloads)
    profiles.emplace(w.arch, timing::to_json(timing::default_timing(w.arch)));
  for (std::size_t i = 0; i < sw.text["parameters"].size(); ++i)
    sw.params.push_back(read_param(sw, i, profiles));
}

// The plot: x and series are swept parameters; the metric a CSV column.
void read_plot(Sweep& sw, const std::string& metric_opt) {
  std::vector<std::string> keys;
  for (const Param& p : sw.params) keys.push_back(p.key);
  const json plot = sw.text.value("plot", json::object());
  if (!plot.is_object()) throw file_error(sw.file, "'plot' must be an object {x, series, metric}");
  for (auto it = plot.begin(); it != plot.end(); ++it)
    if (it.key() != "x" && it.key() != "series" && it.key() != "metric")
      throw file_error(sw.file,
                       fmt::format("plot: unknown key '{}' (known: x series metric)", it.key()));
  sw.metric = metric_opt;
  if (sw.metric.empty())
    sw.metric = plot.value("metric", sw.text.value("metric", std::string("simulated_ns")));
  require_metric(sw.metric);
  sw.x = plot.value("x", keys[0]);
  sw.series = plot.value("series", keys.size() > 1 ? keys[1] : std::string());
  for (const std::string& k : {sw.x, sw.series})
    if (!k.empty() && std::find(keys.begin(), keys.end(), k) == keys.end())
      throw file_error(sw.file, fmt::format("plot: '{}' is not a swept parameter", k));
}

// The product of the grid, checked before any point is made (4 parameters
// of 65536 values are refused, not wrapped).
void check_point_count(const Sweep& sw) {
  std::size_t total = sw.workloads.size();
  std::string dims = std::to_string(sw.workloads.size()) + " workload(s)";
  bool too_many = false;
  for (const Param& p : sw.params) {
    dims += fmt::format(" x {}", p.values.size());
    std::size_t next = 0;
    if (too_many || __builtin_mul_overflow(total, p.values.size(), &next))
      too_many = true;  // past 2^64: only "more than" can be said
    else
      total = next;
  }
  if (too_many)
    throw file_error(sw.file, fmt::format("{} is more than {} points, the most one sweep plans; "
                                          "split it",
                                          dims, kMaxPoints));
  if (total > kMaxPoints)
    throw file_error(sw.file, fmt::format("{} is {} points, more than {}, the most one sweep "
                                          "plans; split it",
                                          dims, total, kMaxPoints));
}

// Every output of the workload's command line into the point's directory,
// each under a name of its own (two outputs of one basename from different
// directories get 2-NAME, 3-NAME ...); the point's profile and stats are
// the sweep's. Every option the run table calls an output is rewritten, so
// no point writes outside its directory.
std::vector<std::string> point_argv(const Workload& w, const fs::path& pdir,
                                    const std::string& tpbsim) {
  run::RunOptions ro = w.options;
  std::set<std::string> taken(std::begin(kPointFiles), std::end(kPointFiles));
  auto in_point = [&](const std::string& given) {
    std::string base = fs::path(given).filename().string();
    if (base.empty() || base == "." || base == "..") base = "output";
    std::string name = base;
    for (int k = 2; !taken.insert(name).second; ++k) name = fmt::format("{}-{}", k, base);
    return (pdir / name).string();
  };
  for (const run::RunOption& opt : run::run_option_table()) {
    if (opt.role == run::OptionRole::OutputFile && !(ro.*opt.text).empty())
      ro.*opt.text = in_point(ro.*opt.text);
    if (opt.role == run::OptionRole::DumpSpecs)
      for (std::string& v : ro.*opt.list)
        if (const std::size_t at = run::spec_file_start(v); at != std::string::npos)
          v = v.substr(0, at) + in_point(v.substr(at));
  }
  ro.timing = (pdir / "timing.json").string();
  ro.stats = (pdir / "stats.json").string();
  ro.quiet = true;
  std::vector<std::string> argv = {tpbsim, "run"};
  for (std::string& a : run::to_args(ro)) argv.push_back(std::move(a));
  return argv;
}

// One point's profile: the workload's own, then base, then the point's
// values; merged over the generation's defaults and checked here, before
// anything runs.
json point_timing(const Sweep& sw, const Workload& w, const std::vector<json>& vals,
                  const std::string& where) {
  json timing = w.base_timing.is_null() ? json::object() : w.base_timing;
  timing::deep_merge(timing, sw.base);
  for (std::size_t k = 0; k < sw.params.size(); ++k)
    timing::deep_merge(timing, timing::nest_key(sw.params[k].path, vals[k]));
  try {  // checked as a core's profile is (the costs resolved by platform::Profile)
    platform::CoreConfig cfg = platform::default_core_config(w.arch);
    timing::merge_timing(cfg.timing, timing);
    const platform::Profile checked(std::move(cfg));
  } catch (const std::exception& e) {
    throw SweepError(fmt::format("{}: {}: {}", sw.file, where, e.what()));
  }
  return timing;
}

// Grid point g's values: the last parameter varies fastest.
std::vector<json> grid_values(const std::vector<Param>& params, std::size_t g) {
  std::vector<json> vals(params.size());
  for (std::size_t k = params.size(); k-- > 0;) {
    vals[k] = params[k].values[g % params[k].values.size()];
    g /= params[k].values.size();
  }
  return vals;
}

// Every point, workloads slowest; its generated profile into `timings`.
json make_points(const Sweep& sw, const fs::path& out, const std::string& tpbsim,
                 std::vector<json>& timings) {
  json points = json::array();
  std::size_t grid = 1;
  for (const Param& p : sw.params) grid *= p.values.size();
  for (const Workload& w : sw.workloads) {
    for (std::size_t g = 0; g < grid; ++g) {
      const std::vector<json> vals = grid_values(sw.params, g);
      const std::string id = point_id(points.size());
      std::string where = fmt::format("point {} (workload {}", id, w.name);
      for (std::size_t k = 0; k < sw.params.size(); ++k)
        where += fmt::format(", {}={}", sw.params[k].key, value_text(vals[k]));
      where += ")";
      timings.push_back(point_timing(sw, w, vals, where));
      points.push_back({{"id", id},
                        {"workload", w.name},
                        {"values", vals},
                        {"cwd", w.dir},
                        {"argv", point_argv(w, out / "points" / id, tpbsim)},
                        {"describe", where}});
    }
  }
  return points;
}

// Every point checked: now the directory. A previous sweep's points and
// results go (exactly the files its plan names), then the new plan's files.
void write_plan(const json& plan, const std::vector<json>& timings,
                const std::optional<json>& old_plan) {
  const fs::path out = plan["out"].get<std::string>();
  const json& points = plan["points"];
  if (old_plan) remove_previous_sweep(out, *old_plan);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const fs::path pdir = out / "points" / point_id(i);
    std::error_code ec;
    fs::create_directories(pdir, ec);
    if (ec) throw SweepError(fmt::format("{}: cannot create: {}", pdir.string(), ec.message()));
    write_file((pdir / "timing.json").string(), timings[i].dump(2) + "\n");
  }
  write_file((out / "plan.json").string(),
             plan.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  std::string idx, cmds, tsv;
  for (std::size_t i = 0; i < points.size(); ++i) {
    idx += std::to_string(i) + "\n";
    // GNU parallel's input: the command's every argument comes from here,
    // so a path holding {} or {= perl =} is data, never a replacement string.
    tsv +=
        plan["tpbsim"].get<std::string>() + "\t" + out.string() + "\t" + std::to_string(i) + "\n";
    cmds += "cd " + sh_quote(points[i]["cwd"]) + " && " +
            sh_join(points[i]["argv"].get<std::vector<std::string>>()) + "\n";
  }
  write_file((out / "points.txt").string(), idx);
  write_file((out / "parallel_input.tsv").string(), tsv);
  write_file((out / "commands.txt").string(), cmds);
}

}  // namespace

std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>()
                       : v.dump(-1, ' ', false, json::error_handler_t::replace);
}

json make_plan(const std::string& sweep_file, const PlanOptions& o) {
  require_one_line("--out", o.out);
  require_one_line("--tpbsim", o.tpbsim);
  Sweep sw;
  sw.file = sweep_file;
  sw.text = read_sweep_file(sweep_file);
  sw.base = sw.text.value("base", json::object());
  read_workloads(sw);
  read_params(sw);
  read_plot(sw, o.metric);
  const fs::path out = fs::absolute(o.out);
  const std::optional<json> old_plan = previous_sweep(out);
  check_point_count(sw);
  std::vector<std::string> keys;
  for (const Param& p : sw.params) keys.push_back(p.key);
  json plan = {{"version", 1},
               {"sweep", fs::absolute(sweep_file).string()},
               {"name", sw.text.value("name", fs::path(sweep_file).stem().string())},
               {"tpbsim", o.tpbsim},
               {"out", out.string()},
               {"parameters", keys},
               {"metric", sw.metric},
               {"plot", {{"x", sw.x}, {"series", sw.series}}}};
  std::vector<json> timings;  // written once every point is checked
  plan["points"] = make_points(sw, out, o.tpbsim, timings);
  write_plan(plan, timings, old_plan);
  return plan;
}

}  // namespace tpb::sweep
