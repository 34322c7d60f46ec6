// `tpbsim sweep SWEEP.json [options]`: a grid of timing overrides x workloads,
// one `tpbsim run` child process per point (SystemC elaborates once per
// process), the stats of every point merged into one CSV and a plot.
//
// The sweep is planned into OUT/plan.json (every point's command line and its
// generated timing override, OUT/points/pNNNN/timing.json). A point is run by
// `tpbsim sweep --run-point OUT N`, whoever starts it: this process (the local
// runner, --jobs children at a time), GNU parallel (--runner parallel,
// --sshlogin) or a Slurm job array (--runner slurm). `tpbsim sweep --collect
// OUT` then reads every point's result into OUT/results.csv and OUT/plot.png,
// so all three runners give the same CSV. docs/SWEEPS.md is the manual.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "firmware_stubs/kernel.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/input_file.h"
#include "models/isa/program.h"
#include "models/timing/timing_profile.h"
#include "platform/cli/commands.h"
#include "platform/run/run_options.h"
#include "platform/run/staged_outputs.h"
#include "platform/run/stop_signals.h"

namespace tpb::cli {

namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using nlohmann::json;

// Bad sweep input: exit 1, the message names the file and what is wrong.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr const char* kUsage =
    "usage: tpbsim sweep SWEEP.json [options]     plan, run, collect and plot a sweep\n"
    "       tpbsim sweep --collect OUT [options]  merge the points' results of OUT\n"
    "       tpbsim sweep --run-point OUT N        run point N of OUT's plan (for runners)\n";

// A path or a name as messages show it (control characters escaped, cut).
std::string shown(const std::string& s) { return isa::excerpt(s, 300); }

// The most a file the sweep reads may hold: a sweep file, a cmd.txt, a
// point's stats or result (an endless /dev/zero is refused, not read).
constexpr std::size_t kMaxInputBytes = std::size_t{16} << 20;
// plan.json holds every point's command line.
constexpr std::size_t kMaxPlanBytes = std::size_t{1} << 30;
// The most points a sweep plans (plan.json about 1 KiB a point).
constexpr std::size_t kMaxPoints = 100000;

std::string read_file(const std::string& path, const std::string& what,
                      std::size_t max_bytes = kMaxInputBytes) {
  std::string text;
  const std::string a_what = "a " + what;
  if (const std::string why = isa::read_input_file(path, max_bytes, a_what.c_str(), text);
      !why.empty())
    throw SweepError(fmt::format("{} '{}': {}", what, shown(path), why));
  return text;
}

// Written to a staging file of its own and renamed into place, like every
// CLI output.
void write_file(const std::string& path, const std::string& text) {
  try {
    run::OutputFile f(path);
    std::ofstream out(f.write_path(), std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out)
      throw std::runtime_error(
          fmt::format("{}: cannot write: {}", shown(path), std::strerror(errno)));
    f.commit();
  } catch (const run::OutputError& e) {
    throw std::runtime_error(e.what());
  }
}

// Strict JSON: a key given twice in one object is an error, not a silently
// dropped value.
json parse_json_file(const std::string& path, const std::string& what,
                     std::size_t max_bytes = kMaxInputBytes) {
  const std::string text = read_file(path, what, max_bytes);
  try {
    return timing::parse_json_strict(text, 64);
  } catch (const std::exception& e) {
    throw SweepError(fmt::format("{} '{}': {}", what, shown(path), e.what()));
  }
}

// A path written into a generated script, a #SBATCH line or GNU parallel's
// input: one line of text (a newline would end the line and start a command).
void require_one_line(const std::string& what, const std::string& s) {
  if (isa::has_control_chars(s))
    throw SweepError(fmt::format(
        "{} '{}' holds a control character (a newline, a tab, an escape): a sweep writes it "
        "into shell scripts and runner input, one line each; choose another",
        what, shown(s)));
}

// Shell quoting for the command lines shown to users and run by runners.
std::string sh_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-+=./:,@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sh_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + sh_quote(a);
  return out;
}

// A value in the CSV and in point descriptions: strings bare, numbers as JSON.
std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>()
                       : v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A parameter's dotted key against a profile (timing::resolve_dotted_key);
// its errors name the parameter.
std::vector<std::string> resolve_param(const std::string& key, const json& profile) {
  try {
    return timing::resolve_dotted_key(key, profile);
  } catch (const timing::TimingError& e) {
    throw SweepError(fmt::format("parameter {}", e.what()));
  }
}

struct Param {
  std::string key;
  std::vector<json> values;
};

struct Workload {
  std::string name;
  std::string dir;          // absolute; the child runs here
  run::RunOptions options;  // its `tpbsim run` options (paths relative to dir)
  std::string program;
  json base_timing = json::object();  // the workload's own --timing file, if any
  isa::Arch arch = isa::Arch::Mariana;
};

// cmd.txt: the `tpbsim run` arguments, whitespace-separated, `#` lines are
// comments (traces/workloads/README.md).
Workload load_workload(const std::string& dir_in, const std::string& sweep_file) {
  Workload w;
  std::error_code ec;
  const fs::path base = fs::path(sweep_file).parent_path();
  fs::path dir = fs::path(dir_in).is_absolute() ? fs::path(dir_in) : base / dir_in;
  dir = fs::weakly_canonical(dir, ec);
  if (!fs::is_directory(dir))
    throw SweepError(fmt::format("{}: workload '{}': {} is not a directory", shown(sweep_file),
                                 shown(dir_in), shown(dir.string())));
  w.dir = dir.string();
  require_one_line(
      fmt::format("{}: workload '{}': its directory", shown(sweep_file), shown(dir_in)), w.dir);
  w.name = dir.filename().string();
  const std::string cmd = (dir / "cmd.txt").string();
  if (!fs::exists(cmd))
    throw SweepError(fmt::format("{}: workload '{}': no cmd.txt in {}", shown(sweep_file),
                                 shown(dir_in), shown(w.dir)));
  std::istringstream in(read_file(cmd, "workload command line"));
  std::string line;
  std::vector<std::string> toks;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line[line.find_first_not_of(" \t\r")] == '#') continue;
    std::istringstream ls(line);
    for (std::string t; ls >> t;) toks.push_back(t);
  }
  // The very options of `tpbsim run` (run::run_option_table), either spelling.
  try {
    w.options = run::parse_run_args(toks);
  } catch (const run::InputError& e) {
    throw SweepError(fmt::format("{}: {}", shown(cmd), isa::excerpt(e.what(), 1000)));
  }
  if (!w.options.stats.empty())
    throw SweepError(fmt::format("{}: --stats is set by the sweep; remove it", shown(cmd)));
  // The workload's own profile is merged under the sweep's overrides.
  const std::string timing_file = w.options.timing;
  w.options.timing.clear();
  const std::string arch_s = w.options.arch;
  w.program = w.options.program;
  if (w.program.empty()) throw SweepError(fmt::format("{}: no PROGRAM", shown(cmd)));
  if (!timing_file.empty()) {
    const fs::path tf =
        fs::path(timing_file).is_absolute() ? fs::path(timing_file) : dir / timing_file;
    // As `tpbsim run --timing` reads it: at most 16 MiB, strict JSON.
    try {
      w.base_timing = timing::read_timing_file(tf.string());
    } catch (const timing::TimingError& e) {
      throw SweepError(fmt::format("{}: --timing {}", shown(cmd), e.what()));
    }
  }
  const fs::path prog = fs::path(w.program).is_absolute() ? fs::path(w.program) : dir / w.program;
  try {
    const isa::Program p = isa::load_program(prog.string());
    w.arch = p.arch.value_or(isa::Arch::Mariana);
  } catch (const isa::AsmError& e) {
    throw SweepError(fmt::format("{}:{}: {}", shown(e.loc().file), e.loc().line,
                                 isa::excerpt(e.message(), 1000)));
  } catch (const std::exception& e) {
    throw SweepError(fmt::format("{}: {}", shown(prog.string()), isa::excerpt(e.what(), 1000)));
  }
  if (!arch_s.empty() && !isa::parse_arch(arch_s, w.arch))
    throw SweepError(fmt::format("{}: --arch '{}' is not a generation", shown(cmd), shown(arch_s)));
  return w;
}

// The columns of a results CSV (docs/SWEEPS.md).
std::vector<std::string> metric_columns() {
  std::vector<std::string> c = {"simulated_ns"};
  for (unsigned e = 0; e < isa::kNumEngines; ++e)
    for (const char* m : {"instructions", "busy_cycles", "stall_cycles", "memory_stall_cycles",
                          "busy_ns", "utilization"})
      c.push_back(fmt::format("{}_{}", isa::kEngineNames[e], m));
  c.push_back("wall_seconds");
  return c;
}

std::string point_id(std::size_t i) { return fmt::format("p{:04d}", i); }

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  return p.string();
}

// ---------------------------------------------------------------- planning

struct PlanOptions {
  std::string out;
  std::string tpbsim;  // the binary runners call (default: this one)
  std::string metric;  // overrides the sweep file's
};

// The files a sweep writes at the top of OUT (plan.json aside).
const char* const kSweepFiles[] = {
    "results.csv",        "plot.png",        "parallel.joblog", "commands.txt", "points.txt",
    "parallel_input.tsv", "run_parallel.sh", "sweep.sbatch",    "slurm.jobid",  "collect.out"};
// The files of a point directory besides the outputs its argv names.
const char* const kPointFiles[] = {"timing.json", "stats.json", "stdout.txt", "stderr.txt",
                                   "result.json"};

// OUT's plan.json, which must be a plan this tpbsim wrote for OUT: else the
// directory is someone else's and nothing in it is removed.
json previous_plan(const fs::path& out) {
  const std::string path = (out / "plan.json").string();
  auto refuse = [&](const std::string& why) {
    return SweepError(fmt::format(
        "--out {}: its plan.json is not a tpbsim sweep plan of this directory ({}); nothing "
        "removed: choose another directory, or remove it yourself",
        shown(out.string()), why));
  };
  json plan;
  try {
    plan = parse_json_file(path, "sweep plan", kMaxPlanBytes);
  } catch (const SweepError& e) {
    throw refuse(e.what());
  }
  if (!plan.is_object() || plan.value("version", json()) != json(1))
    throw refuse("no \"version\": 1");
  if (!plan.contains("out") || !plan["out"].is_string() || plan["out"] != out.string())
    throw refuse("its \"out\" is not this directory");
  if (!plan.contains("points") || !plan["points"].is_array()) throw refuse("no \"points\"");
  const json& pts = plan["points"];
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const json& p = pts[i];
    if (!p.is_object() || p.value("id", json()) != json(point_id(i)) || !p.contains("argv") ||
        !p["argv"].is_array())
      throw refuse(fmt::format("point {} is not one of a plan", i));
    for (const json& a : p["argv"])
      if (!a.is_string()) throw refuse(fmt::format("point {}: argv holds a non-string", i));
  }
  return plan;
}

// Removes a regular file or a link (never what a link points to).
void remove_entry(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
    ::unlink(p.c_str());
}

// Removes what `plan` (checked by previous_plan) wrote in OUT: its point
// directories' files, the top-level files of a sweep, then the directories
// if that left them empty. Anything else stays.
void remove_previous_sweep(const fs::path& out, const json& plan) {
  const fs::path points = out / "points";
  struct stat st {};
  if (::lstat(points.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    const json& pts = plan["points"];
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const fs::path pdir = points / point_id(i);
      if (::lstat(pdir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      for (const char* f : kPointFiles) remove_entry(pdir / f);
      const std::string prefix = pdir.string() + "/";
      for (const json& a : pts[i]["argv"]) {
        std::string v = a.get<std::string>();
        if (v.rfind(prefix, 0) != 0)
          if (const std::size_t eq = v.rfind('='); eq != std::string::npos) v = v.substr(eq + 1);
        if (v.rfind(prefix, 0) != 0) continue;
        const std::string name = v.substr(prefix.size());
        if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
          continue;
        remove_entry(pdir / name);
        remove_entry(pdir / fs::path(name).replace_extension(".gtkw"));
        remove_entry(pdir / (name + ".gtkw"));
      }
      ::rmdir(pdir.c_str());
      remove_entry(points / fmt::format("slurm-{}.out", i));
    }
    ::rmdir(points.c_str());
  }
  for (const char* f : kSweepFiles) remove_entry(out / f);
}

const std::set<std::string> kSweepKeys = {"name", "description", "workloads", "parameters",
                                          "base", "metric",      "plot"};

json make_plan(const std::string& sweep_file, const PlanOptions& o) {
  require_one_line("--out", o.out);
  require_one_line("--tpbsim", o.tpbsim);
  const json s = parse_json_file(sweep_file, "sweep file");
  auto bad = [&](const std::string& what) { return SweepError(sweep_file + ": " + what); };
  if (!s.is_object()) throw bad("expected a JSON object");
  for (auto it = s.begin(); it != s.end(); ++it)
    if (!kSweepKeys.count(it.key()))
      throw bad(
          fmt::format("unknown key '{}' (known: name description workloads parameters base "
                      "metric plot)",
                      it.key()));
  if (!s.contains("workloads") || !s["workloads"].is_array() || s["workloads"].empty())
    throw bad("'workloads' must be a non-empty array of workload directories");
  if (!s.contains("parameters") || !s["parameters"].is_array() || s["parameters"].empty())
    throw bad("'parameters' must be a non-empty array of {\"key\": ..., \"values\": [...]}");
  const json base = s.value("base", json::object());
  if (!base.is_object()) throw bad("'base' must be an object of timing overrides");

  std::vector<Workload> workloads;
  std::set<std::string> dirs;
  for (const json& w : s["workloads"]) {
    if (!w.is_string())
      throw bad(fmt::format("workload {} is not a directory name", shown(value_text(w))));
    workloads.push_back(load_workload(w.get<std::string>(), sweep_file));
    if (!dirs.insert(workloads.back().dir).second)
      throw bad(fmt::format("workload '{}' is listed twice ({})", shown(w.get<std::string>()),
                            shown(workloads.back().dir)));
  }
  // Two workloads of one basename (a/pipeline, b/pipeline) are named by as
  // many trailing components of their directories as tell them apart.
  for (std::size_t depth = 2;; ++depth) {
    std::map<std::string, std::vector<std::size_t>> by_name;
    for (std::size_t i = 0; i < workloads.size(); ++i) by_name[workloads[i].name].push_back(i);
    bool clash = false;
    for (const auto& [name, idx] : by_name) {
      if (idx.size() < 2) continue;
      clash = true;
      for (std::size_t i : idx) {
        std::vector<std::string> parts;
        for (const auto& c : fs::path(workloads[i].dir)) parts.push_back(c.string());
        std::string n;
        for (std::size_t k = parts.size() > depth ? parts.size() - depth : 1; k < parts.size(); ++k)
          n += (n.empty() ? "" : "/") + parts[k];
        workloads[i].name = n;
      }
    }
    if (!clash || depth > 64) break;
  }

  std::vector<Param> params;
  std::map<isa::Arch, json> profiles;
  for (const Workload& w : workloads)
    profiles.emplace(w.arch, timing::to_json(timing::default_timing(w.arch)));
  std::vector<std::vector<std::string>> paths;
  for (std::size_t i = 0; i < s["parameters"].size(); ++i) {
    const json& p = s["parameters"][i];
    if (!p.is_object() || !p.contains("key") || !p["key"].is_string() || !p.contains("values") ||
        !p["values"].is_array() || p["values"].empty())
      throw bad(
          fmt::format("parameter {} must be {{\"key\": \"dotted.timing.key\", \"values\": "
                      "[...]}} with at least one value",
                      i));
    for (auto it = p.begin(); it != p.end(); ++it)
      if (it.key() != "key" && it.key() != "values")
        throw bad(fmt::format("parameter {}: unknown key '{}'", i, it.key()));
    Param q{p["key"].get<std::string>(), {}};
    for (const json& v : p["values"]) q.values.push_back(v);
    for (const Param& e : params)
      if (e.key == q.key) throw bad(fmt::format("parameter '{}' is listed twice", shown(q.key)));
    std::vector<std::string> path;
    try {
      for (const auto& [arch, prof] : profiles) path = resolve_param(q.key, prof);
    } catch (const SweepError& e) {
      throw bad(e.what());
    }
    params.push_back(q);
    paths.push_back(path);
  }

  std::vector<std::string> keys;
  for (const Param& p : params) keys.push_back(p.key);
  json plot = s.value("plot", json::object());
  if (!plot.is_object()) throw bad("'plot' must be an object {x, series, metric}");
  for (auto it = plot.begin(); it != plot.end(); ++it)
    if (it.key() != "x" && it.key() != "series" && it.key() != "metric")
      throw bad(fmt::format("plot: unknown key '{}' (known: x series metric)", it.key()));
  std::string metric = o.metric;
  if (metric.empty()) metric = plot.value("metric", s.value("metric", std::string("simulated_ns")));
  const std::vector<std::string> cols = metric_columns();
  if (std::find(cols.begin(), cols.end(), metric) == cols.end())
    throw SweepError(fmt::format("metric '{}' is not a result column (one of: {})", metric,
                                 fmt::join(cols, " ")));
  const std::string x = plot.value("x", keys[0]);
  const std::string series = plot.value("series", keys.size() > 1 ? keys[1] : std::string());
  for (const std::string& k : {x, series})
    if (!k.empty() && std::find(keys.begin(), keys.end(), k) == keys.end())
      throw bad(fmt::format("plot: '{}' is not a swept parameter", k));

  const fs::path out = fs::absolute(o.out);
  std::error_code ec;
  if (fs::exists(out) && !fs::is_directory(out))
    throw SweepError(fmt::format("--out {}: not a directory", shown(out.string())));
  if (fs::is_directory(out) && !fs::is_empty(out) && !fs::exists(out / "plan.json"))
    throw SweepError(fmt::format(
        "--out {}: a non-empty directory that holds no sweep (no plan.json); choose another",
        shown(out.string())));
  // A previous sweep here: only what its plan proves it wrote is replaced.
  std::optional<json> old_plan;
  if (fs::exists(out / "plan.json")) old_plan = previous_plan(out);

  // Checked product: the points, before any is made.
  std::size_t total = workloads.size();
  std::string dims = std::to_string(workloads.size()) + " workload(s)";
  bool too_many = false;
  for (const Param& p : params) {
    dims += fmt::format(" x {}", p.values.size());
    std::size_t next = 0;
    if (too_many || __builtin_mul_overflow(total, p.values.size(), &next))
      too_many = true;  // past 2^64: only "more than" can be said
    else
      total = next;
  }
  if (too_many || total > kMaxPoints)
    throw bad(too_many ? fmt::format("{} is more than {} points, the most one sweep plans; "
                                     "split it",
                                     dims, kMaxPoints)
                       : fmt::format("{} is {} points, more than {}, the most one sweep plans; "
                                     "split it",
                                     dims, total, kMaxPoints));
  json plan = {{"version", 1},
               {"sweep", fs::absolute(sweep_file).string()},
               {"name", s.value("name", fs::path(sweep_file).stem().string())},
               {"tpbsim", o.tpbsim},
               {"out", out.string()},
               {"parameters", keys},
               {"metric", metric},
               {"plot", {{"x", x}, {"series", series}}}};
  json points = json::array();
  std::vector<json> timings;  // written once every point is checked
  // Cartesian product: the last parameter varies fastest, workloads slowest.
  std::size_t grid = 1;
  for (const Param& p : params) grid *= p.values.size();
  for (const Workload& w : workloads) {
    for (std::size_t g = 0; g < grid; ++g) {
      std::vector<json> vals(params.size());
      std::size_t rem = g;
      for (std::size_t k = params.size(); k-- > 0;) {
        vals[k] = params[k].values[rem % params[k].values.size()];
        rem /= params[k].values.size();
      }
      json timing = w.base_timing;
      if (timing.is_null()) timing = json::object();
      timing::deep_merge(timing, base);
      for (std::size_t k = 0; k < params.size(); ++k)
        timing::deep_merge(timing, timing::nest_key(paths[k], vals[k]));
      const std::size_t idx = points.size();
      const std::string id = point_id(idx);
      std::string where = fmt::format("point {} (workload {}", id, w.name);
      for (std::size_t k = 0; k < params.size(); ++k)
        where += fmt::format(", {}={}", params[k].key, value_text(vals[k]));
      where += ")";
      // The profile the child will load, checked here, before anything runs.
      try {
        timing::TimingConfig cfg = timing::default_timing(w.arch);
        timing::merge_timing(cfg, timing);
        fw::builtin_kernels().resolve_costs(cfg);
      } catch (const std::exception& e) {
        throw SweepError(fmt::format("{}: {}: {}", sweep_file, where, e.what()));
      }
      const fs::path pdir = out / "points" / id;
      timings.push_back(timing);
      // Every output of the workload's command line into the point's
      // directory, each under a name of its own (two outputs of one
      // basename from different directories get 2-NAME, 3-NAME ...); the
      // point's profile and stats are the sweep's.
      run::RunOptions ro = w.options;
      std::set<std::string> taken = {"timing.json", "stats.json", "stdout.txt", "stderr.txt",
                                     "result.json"};
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
            if (const std::size_t eq = v.rfind('='); eq != std::string::npos)
              v = v.substr(0, eq + 1) + in_point(v.substr(eq + 1));
      }
      ro.timing = (pdir / "timing.json").string();
      ro.stats = (pdir / "stats.json").string();
      ro.quiet = true;
      std::vector<std::string> argv = {o.tpbsim, "run"};
      for (std::string& a : run::to_args(ro)) argv.push_back(std::move(a));
      points.push_back({{"id", id},
                        {"workload", w.name},
                        {"values", vals},
                        {"cwd", w.dir},
                        {"argv", argv},
                        {"describe", where}});
    }
  }
  plan["points"] = points;
  // Every point checked: now the directory. A previous sweep's points and
  // results go: exactly the files its plan names, nothing else.
  if (old_plan) remove_previous_sweep(out, *old_plan);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const fs::path pdir = out / "points" / point_id(i);
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
    tsv += o.tpbsim + "\t" + out.string() + "\t" + std::to_string(i) + "\n";
    cmds += "cd " + sh_quote(points[i]["cwd"]) + " && " +
            sh_join(points[i]["argv"].get<std::vector<std::string>>()) + "\n";
  }
  write_file((out / "points.txt").string(), idx);
  write_file((out / "parallel_input.tsv").string(), tsv);
  write_file((out / "commands.txt").string(), cmds);
  return plan;
}

json load_plan(const std::string& out) {
  const std::string path = (fs::path(out) / "plan.json").string();
  if (!fs::exists(path))
    throw SweepError(
        fmt::format("{}: no sweep here (no plan.json; run `tpbsim sweep SWEEP.json "
                    "--out {}` first)",
                    out, out));
  json plan = parse_json_file(path, "sweep plan");
  if (!plan.is_object() || plan.value("version", 0) != 1 || !plan.contains("points"))
    throw SweepError(path + ": not a sweep plan of this tpbsim");
  return plan;
}

fs::path point_dir(const json& plan, std::size_t i) {
  return fs::path(plan["out"].get<std::string>()) / "points" / point_id(i);
}

// --------------------------------------------------------------- one point

int run_point(const std::string& out, const std::string& index_s) {
  const json plan = load_plan(out);
  std::size_t idx = 0, pos = 0;
  try {
    idx = std::stoul(index_s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != index_s.size() || idx >= plan["points"].size())
    throw SweepError(
        fmt::format("point '{}' is not 0..{}", shown(index_s), plan["points"].size() - 1));
  const json& p = plan["points"][idx];
  const fs::path dir = point_dir(plan, idx);
  std::error_code ec;
  fs::remove(dir / "result.json", ec);
  fs::remove(dir / "stats.json", ec);
  const std::vector<std::string> argv = p["argv"].get<std::vector<std::string>>();
  const std::string cwd = p["cwd"].get<std::string>();
  const std::string so = (dir / "stdout.txt").string(), se = (dir / "stderr.txt").string();
  const auto t0 = std::chrono::steady_clock::now();
  if (const int sig = run::stop_signal())
    throw SweepError(fmt::format("point {}: not started ({})", idx, run::signal_name(sig)));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    run::reset_signals_for_exec();
    const int o = open(so.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(se.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "tpbsim sweep: %s: cannot start in %s: %s\n",
                   p["id"].get<std::string>().c_str(), cwd.c_str(), std::strerror(errno));
      _exit(127);
    }
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    std::fprintf(stderr, "tpbsim sweep: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  // A stop signal sent to this process is passed on to the run, whose
  // exit code (130, 143) the result records.
  run::add_stop_child(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run::remove_stop_child(pid);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json r = {{"wall_seconds", wall}};
  int rc = 0;
  if (WIFEXITED(status)) {
    rc = WEXITSTATUS(status);
    r["exit"] = rc;
  } else {
    rc = 128 + WTERMSIG(status);
    r["exit"] = rc;
    r["signal"] = WTERMSIG(status);
  }
  write_file((dir / "result.json").string(), r.dump(2) + "\n");
  if (const int sig = run::stop_signal()) return 128 + sig;
  return rc;
}

// ---------------------------------------------------------------- collect

struct Row {
  std::string status;  // "ok" or "failed"
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

Row read_point(const json& plan, std::size_t i) {
  Row row;
  const fs::path dir = point_dir(plan, i);
  const fs::path res = dir / "result.json";
  if (!fs::exists(res)) {
    row.status = "failed";
    row.why = "not run (no result.json)";
    return row;
  }
  const json r = parse_json_file(res.string(), "point result");
  row.exit_code = r.value("exit", -1);
  const double wall = r.value("wall_seconds", 0.0);
  if (row.exit_code != 0) {
    row.status = "failed";
    std::string err;
    try {
      err = read_file((dir / "stderr.txt").string(), "point stderr");
    } catch (const SweepError&) {  // the exit code says enough
    }
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    if (const std::size_t nl = err.rfind('\n'); nl != std::string::npos) err = err.substr(nl + 1);
    row.why = fmt::format("exit {}{}", row.exit_code, err.empty() ? "" : ": " + shown(err));
    row.m["wall_seconds"] = wall;
    return row;
  }
  json s;
  try {
    s = parse_json_file((dir / "stats.json").string(), "point stats");
  } catch (const SweepError& e) {  // exit 0 without stats: a failed point, not a failed merge
    row.status = "failed";
    row.why = e.what();
    row.m["wall_seconds"] = wall;
    return row;
  }
  row.status = "ok";
  const double sim_ns = s.at("simulated_ps").get<double>() / 1e3;
  row.m["simulated_ns"] = sim_ns;
  for (const json& e : s.at("engines")) {
    const std::string n = e.at("name");
    const double busy = e.at("busy_cycles").get<double>(), mhz = e.at("clock_mhz").get<double>();
    const double busy_ns = mhz > 0 ? busy * 1e3 / mhz : 0;
    row.m[n + "_instructions"] = e.at("instructions").get<double>();
    row.m[n + "_busy_cycles"] = busy;
    row.m[n + "_stall_cycles"] = e.at("stall_cycles").get<double>();
    row.m[n + "_memory_stall_cycles"] = e.value("memory_stall_cycles", 0.0);
    row.m[n + "_busy_ns"] = busy_ns;
    row.m[n + "_utilization"] = sim_ns > 0 ? busy_ns / sim_ns : 0;
  }
  row.m["wall_seconds"] = wall;
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

std::string plot_script() {
  if (const char* e = std::getenv("TPBSIM_PLOT_SCRIPT")) return e;
#ifdef TPBSIM_SOURCE_DIR
  return std::string(TPBSIM_SOURCE_DIR) + "/scripts/plot_sweep.py";
#else
  return "scripts/plot_sweep.py";
#endif
}

// Runs argv (no shell), waits; the exit code, or -1 when it cannot start.
int run_wait(const std::vector<std::string>& argv, const std::string& stdout_file = "") {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    run::reset_signals_for_exec();
    if (!stdout_file.empty()) {
      const int o = open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o >= 0) dup2(o, 1);
    }
    std::vector<char*> c;
    for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    execvp(c[0], c.data());
    std::fprintf(stderr, "tpbsim sweep: cannot run %s: %s\n", c[0], std::strerror(errno));
    _exit(127);
  }
  run::add_stop_child(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run::remove_stop_child(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int collect(const std::string& out, const std::string& metric_opt, bool plot) {
  json plan = load_plan(out);
  const std::vector<std::string> keys = plan["parameters"].get<std::vector<std::string>>();
  const std::vector<std::string> cols = metric_columns();
  std::string metric = metric_opt.empty() ? plan.value("metric", "simulated_ns") : metric_opt;
  if (std::find(cols.begin(), cols.end(), metric) == cols.end())
    throw SweepError(fmt::format("metric '{}' is not a result column (one of: {})", metric,
                                 fmt::join(cols, " ")));
  std::string csv = "point,workload";
  for (const auto& k : keys) csv += "," + csv_field(k);
  csv += ",status,exit_code";
  for (const auto& c : cols) csv += "," + c;
  csv += "\n";
  std::vector<std::string> failed;
  const json& points = plan["points"];
  for (std::size_t i = 0; i < points.size(); ++i) {
    const json& p = points[i];
    const Row row = read_point(plan, i);
    csv += p["id"].get<std::string>() + "," + csv_field(p["workload"]);
    for (const json& v : p["values"]) csv += "," + csv_field(value_text(v));
    csv += "," + row.status + "," + (row.exit_code >= 0 ? std::to_string(row.exit_code) : "");
    for (const auto& c : cols) {
      csv += ",";
      if (const auto it = row.m.find(c); it != row.m.end()) csv += fmt_metric(c, it->second);
    }
    csv += "\n";
    if (row.status != "ok")
      failed.push_back(fmt::format("{}: {}", p["describe"].get<std::string>(), row.why));
  }
  const std::string csv_path = (fs::path(out) / "results.csv").string();
  write_file(csv_path, csv);
  std::fprintf(stderr, "tpbsim sweep: %zu points, %zu ok, %zu failed; wrote %s\n", points.size(),
               points.size() - failed.size(), failed.size(), csv_path.c_str());
  if (plot) {
    const std::string png = (fs::path(out) / "plot.png").string();
    std::vector<std::string> argv = {"/usr/bin/python3",
                                     plot_script(),
                                     csv_path,
                                     png,
                                     "--x",
                                     plan["plot"]["x"].get<std::string>(),
                                     "--metric",
                                     metric,
                                     "--title",
                                     plan.value("name", std::string("sweep"))};
    if (const std::string s = plan["plot"].value("series", ""); !s.empty()) {
      argv.push_back("--series");
      argv.push_back(s);
    }
    const int rc = run_wait(argv);
    if (rc == 0)
      std::fprintf(stderr, "tpbsim sweep: wrote %s (%s against %s)\n", png.c_str(), metric.c_str(),
                   plan["plot"]["x"].get<std::string>().c_str());
    else
      std::fprintf(stderr,
                   "tpbsim sweep: warning: no plot (%s exited %d; the CSV is complete; "
                   "set TPBSIM_PLOT_SCRIPT or pass --no-plot)\n",
                   argv[1].c_str(), rc);
  }
  if (!failed.empty()) {
    std::fprintf(stderr, "tpbsim sweep: error: %zu of %zu points failed:\n", failed.size(),
                 points.size());
    for (const auto& f : failed) std::fprintf(stderr, "  %s\n", f.c_str());
    return 2;
  }
  return 0;
}

// ----------------------------------------------------------------- runners

void progress(bool show, std::size_t done, std::size_t total, std::size_t failed, double seconds) {
  if (!show) return;
  constexpr int kWidth = 30;
  const int fill = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu points, %zu failed, %.1f s",
               std::string(fill, '#').c_str(), std::string(kWidth - fill, '.').c_str(), done, total,
               failed, seconds);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// Runs every point, `jobs` child processes at a time.
void run_local(const json& plan, unsigned jobs, bool show) {
  const std::string self = self_exe(), out = plan["out"];
  const std::size_t n = plan["points"].size();
  std::size_t next = 0, done = 0, failed = 0, running = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto secs = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  progress(show, 0, n, 0, 0);
  while (done < n) {
    // After a stop signal no point starts; the running ones were passed
    // the signal and are waited for.
    while (running < jobs && next < n && run::stop_signal() == 0) {
      const std::string idx = std::to_string(next++);
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
      if (pid == 0) {
        run::reset_signals_for_exec();
        execl(self.c_str(), self.c_str(), "sweep", "--run-point", out.c_str(), idx.c_str(),
              static_cast<char*>(nullptr));
        _exit(127);
      }
      run::add_stop_child(pid);
      ++running;
    }
    if (running == 0) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    run::remove_stop_child(pid);
    --running;
    ++done;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    progress(show, done, n, failed, secs());
  }
}

std::vector<std::string> parallel_argv(const json& plan, unsigned jobs,
                                       const std::vector<std::string>& logins, bool bar) {
  const std::string out = plan["out"];
  std::vector<std::string> a = {"parallel",
                                "--jobs",
                                std::to_string(jobs),
                                "--halt",
                                "never",
                                "--joblog",
                                (fs::path(out) / "parallel.joblog").string()};
  for (const auto& l : logins) {
    a.push_back("--sshlogin");
    a.push_back(l);
  }
  if (bar) a.push_back("--bar");
  // Every argument of the command from the input file (TPBSIM, OUT, N per
  // line): the command line holds no path, so nothing of a user's is ever
  // read as a replacement string ({}, {= perl =}).
  for (const std::string& s :
       {std::string("--colsep"), std::string("\t"), std::string("-q"), std::string("{1}"),
        std::string("sweep"), std::string("--run-point"), std::string("{2}"), std::string("{3}"),
        std::string("::::"), (fs::path(out) / "parallel_input.tsv").string()})
    a.push_back(s);
  return a;
}

// A job name Slurm takes on a #SBATCH line: letters, digits, . _ - only.
std::string slurm_job_name(const std::string& name) {
  std::string n = "tpbsim-";
  for (char c : name) {
    if (n.size() >= 64) break;
    n += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  return n;
}

std::string slurm_script(const json& plan, const std::vector<std::string>& extra) {
  const std::string out = plan["out"], tpbsim = plan["tpbsim"];
  const std::size_t n = plan["points"].size();
  // #SBATCH lines are read by sbatch, not a shell: no quoting there, and
  // --output expands %: OUT must be plain.
  if (out.find_first_of(" \t\"'\\%$`") != std::string::npos || isa::has_control_chars(out))
    throw SweepError(fmt::format(
        "--out '{}': --runner slurm writes it on #SBATCH lines, which take no spaces, quotes, "
        "backslashes, $, ` or % (Slurm's filename patterns); choose another directory",
        shown(out)));
  for (const auto& e : extra)
    if (isa::has_control_chars(e) || e.empty() || e[0] != '-')
      throw SweepError(
          fmt::format("--sbatch '{}': one sbatch option on one line (starting with -), e.g. "
                      "--sbatch=--partition=cpu",
                      shown(e)));
  std::string s = "#!/bin/bash\n";
  s += "# A Slurm job array of the sweep " + isa::excerpt(plan.value("name", std::string())) +
       ", written by `tpbsim sweep --runner slurm`.\n"
       "# Task i runs point i of plan.json (its command: line i+1 of commands.txt).\n"
       "# Submit: sbatch " +
       sh_quote((fs::path(out) / "sweep.sbatch").string()) +
       "\n# then:  " + isa::excerpt(sh_quote(tpbsim)) + " sweep --collect " + sh_quote(out) + "\n";
  s += "#SBATCH --job-name=" + slurm_job_name(plan.value("name", std::string("sweep"))) + "\n";
  s += fmt::format("#SBATCH --array=0-{}\n", n - 1);
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += "#SBATCH --output=" + (fs::path(out) / "points" / "slurm-%a.out").string() + "\n";
  for (const auto& e : extra) s += "#SBATCH " + e + "\n";
  s += "set -eu\n";
  s += "exec " + sh_quote(tpbsim) + " sweep --run-point " + sh_quote(out) +
       " \"$SLURM_ARRAY_TASK_ID\"\n";
  return s;
}

}  // namespace

int cmd_sweep(const Args& args) {
  po::options_description opts("tpbsim sweep options");
  std::string out, runner = "local", metric, collect_dir, tpbsim;
  std::vector<std::string> logins, run_point_args, sbatch_opts;
  std::string jobs_s;
  unsigned jobs = 0;
  opts.add_options()("help,h", "show this help")(
      "out,o", po::value(&out), "output directory (default: SWEEP's stem + '.sweep' here)")(
      "jobs,j", po::value(&jobs_s),
      "points run at once, 1..4096 (local, parallel; default: processors)")(
      "runner", po::value(&runner), "local | parallel (GNU parallel) | slurm (sbatch --array)")(
      "sshlogin,S", po::value(&logins)->composing(), "GNU parallel --sshlogin (repeatable)")(
      "sbatch", po::value(&sbatch_opts)->composing(),
      "extra #SBATCH line for the Slurm script, e.g. --sbatch=--partition=cpu")(
      "dry-run", "plan only: write plan.json, commands.txt and the runner's script; run nothing")(
      "metric", po::value(&metric),
      "the plotted result column (default: the sweep's, simulated_ns)")(
      "progress", "show a progress bar even when stderr is not a terminal")(
      "no-plot", "write the CSV only")("tpbsim", po::value(&tpbsim),
                                       "the tpbsim the runners call (default: this one)")(
      "collect", po::value(&collect_dir), "merge the results of a run sweep directory")(
      "run-point", po::value(&run_point_args)->multitoken(), "OUT N: run one point (runners)");
  po::options_description hidden;
  std::string sweep_file;
  hidden.add_options()("sweep", po::value(&sweep_file));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "tpbsim sweep: error: %s\n%s", e.what(), kUsage);
    return 1;
  }
  if (vm.count("help")) {
    std::cout << kUsage << opts;
    return 0;
  }
  const bool plot = !vm.count("no-plot");
  // A stop signal is passed to the points, which stop and record it; the
  // sweep then starts no more and exits 128 + the signal.
  run::install_stop_signals("tpbsim sweep", run::StopMode::Supervise);
  if (!jobs_s.empty()) {
    std::size_t pos = 0;
    unsigned long v = 0;
    try {
      if (jobs_s.find_first_not_of("0123456789") == std::string::npos) v = std::stoul(jobs_s, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos == 0 || pos != jobs_s.size() || v < 1 || v > 4096) {
      std::fprintf(stderr, "tpbsim sweep: error: --jobs '%s' is not a number of points 1..4096\n",
                   shown(jobs_s).c_str());
      return 1;
    }
    jobs = static_cast<unsigned>(v);
  }
  try {
    if (vm.count("run-point")) {
      if (run_point_args.size() != 2) {
        std::fprintf(stderr, "tpbsim sweep: error: --run-point takes OUT N\n%s", kUsage);
        return 1;
      }
      return run_point(run_point_args[0], run_point_args[1]);
    }
    if (!collect_dir.empty()) return collect(collect_dir, metric, plot);
    if (sweep_file.empty()) {
      std::fprintf(stderr, "tpbsim sweep: error: no SWEEP.json given\n%s", kUsage);
      return 1;
    }
    if (runner != "local" && runner != "parallel" && runner != "slurm") {
      std::fprintf(stderr, "tpbsim sweep: error: --runner '%s' is not local, parallel or slurm\n",
                   shown(runner).c_str());
      return 1;
    }
    if (!logins.empty() && runner != "parallel") {
      std::fprintf(stderr, "tpbsim sweep: error: --sshlogin needs --runner parallel\n");
      return 1;
    }
    if (jobs == 0) jobs = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    PlanOptions po_;
    po_.out = out.empty() ? fs::path(sweep_file).stem().string() + ".sweep" : out;
    po_.tpbsim = tpbsim.empty() ? self_exe() : tpbsim;
    po_.metric = metric;
    const json plan = make_plan(sweep_file, po_);
    const std::string dir = plan["out"];
    const std::size_t n = plan["points"].size();
    const bool show = vm.count("progress") || isatty(2);
    std::fprintf(stderr, "tpbsim sweep: %zu points planned in %s\n", n, dir.c_str());

    if (runner == "slurm") {
      const std::string script = (fs::path(dir) / "sweep.sbatch").string();
      write_file(script, slurm_script(plan, sbatch_opts));
      fs::permissions(script, fs::perms::owner_exec, fs::perm_options::add);
      if (vm.count("dry-run")) {
        std::printf("%s\n", script.c_str());
        std::fprintf(stderr,
                     "tpbsim sweep: dry run: submit with `sbatch %s`, then `%s sweep --collect "
                     "%s`\n",
                     script.c_str(), plan["tpbsim"].get<std::string>().c_str(), dir.c_str());
        return 0;
      }
      const std::string idfile = (fs::path(dir) / "slurm.jobid").string();
      const int rc = run_wait({"sbatch", "--parsable", script}, idfile);
      if (rc != 0) {
        std::fprintf(stderr,
                     "tpbsim sweep: error: sbatch %s failed (exit %d); on a machine without "
                     "Slurm use --dry-run and submit the script on the cluster\n",
                     script.c_str(), rc);
        return 1;
      }
      std::string id = read_file(idfile, "sbatch output");
      id = id.substr(0, id.find_first_of(";\n"));
      const std::string collect_cmd =
          sh_quote(plan["tpbsim"].get<std::string>()) + " sweep --collect " + sh_quote(dir);
      const int rc2 = run_wait(
          {"sbatch", "--parsable", "--dependency=afterany:" + id, "--job-name=tpbsim-collect",
           "--output=" + (fs::path(dir) / "collect.out").string(), "--wrap", collect_cmd});
      std::fprintf(stderr, "tpbsim sweep: submitted job array %s (%zu tasks)%s\n", id.c_str(), n,
                   rc2 == 0 ? " and the collect job after it" : "; collect job NOT submitted");
      return rc2 == 0 ? 0 : 1;
    }
    if (runner == "parallel") {
      const std::vector<std::string> argv = parallel_argv(plan, jobs, logins, show);
      write_file((fs::path(dir) / "run_parallel.sh").string(),
                 "#!/bin/sh\n# GNU parallel runs every point; then collect.\n" + sh_join(argv) +
                     "\n" + sh_quote(plan["tpbsim"].get<std::string>()) + " sweep --collect " +
                     sh_quote(dir) + "\n");
      if (vm.count("dry-run")) {
        std::printf("%s\n", sh_join(argv).c_str());
        return 0;
      }
      const int rc = run_wait(argv);
      if (const int sig = run::stop_signal()) {
        std::fprintf(stderr, "tpbsim sweep: interrupted (%s); GNU parallel was passed it\n",
                     run::signal_name(sig));
        return 128 + sig;
      }
      if (rc == -1 || rc == 127 || rc == 255) {
        std::fprintf(stderr, "tpbsim sweep: error: GNU parallel did not run (exit %d)\n", rc);
        if (rc != 255) return 1;
      }
      return collect(dir, metric, plot);
    }
    if (vm.count("dry-run")) {
      std::printf("%s\n", (fs::path(dir) / "commands.txt").string().c_str());
      return 0;
    }
    run_local(plan, jobs, show);
    if (const int sig = run::stop_signal()) {
      std::fprintf(stderr,
                   "tpbsim sweep: interrupted (%s): points not yet run were not started; "
                   "`tpbsim sweep --collect %s` merges those that ran\n",
                   run::signal_name(sig), shown(dir).c_str());
      return 128 + sig;
    }
    return collect(dir, metric, plot);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tpbsim sweep: error: out of memory\n");
    return 1;
  } catch (const SweepError& e) {
    std::fprintf(stderr, "tpbsim sweep: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim sweep: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace tpb::cli
