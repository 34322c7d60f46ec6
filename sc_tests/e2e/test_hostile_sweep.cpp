// A hostile user's sweeps (docs/SWEEPS.md, docs/BAD_INPUT.md "Sweeps"):
// names and paths that would inject into the runners' scripts or GNU
// parallel, spreadsheet formulas, directories the sweep does not own, sizes
// that wrap or never end, stop signals, and workloads of one basename.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/hostile.h"

namespace tpb::e2e {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string sweep_file(const std::string& dir, const json& extra = json::object()) {
  json s = {{"name", "h"},
            {"workloads", {pipeline_workload()}},
            {"parameters", {{{"key", "clocks_mhz.dve"}, {"values", {1200, 2400}}}}}};
  s.update(extra);
  return put(dir, "sweep.json", s.dump(2));
}

// Whether a process's command line holds `text`.
bool process_running_with(const std::string& text) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_text(e.path().string() + "/cmdline");
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(text) != std::string::npos && cmd.find("tpbsim") != std::string::npos) return true;
  }
  return false;
}

bool has_line_starting(const std::string& text, const std::string& start) {
  std::size_t at = 0;
  for (;;) {
    if (text.compare(at, start.size(), start) == 0) return true;
    at = text.find('\n', at);
    if (at == std::string::npos) return false;
    ++at;
  }
}

// --------------------------------------------------- scripts and parallel

// A sweep name with a newline stays inside its comment and job name; a
// --out or --sbatch with one is refused: the generated script runs no line
// the user slipped in.
TEST(HostileSweep, NewlinesNeverReachTheGeneratedScripts) {
  const std::string d = scratch_dir("hs-nl");
  const std::string s = sweep_file(d, {{"name", "x\ntouch " + d + "/PWNED\n#"}});
  const ToolResult r = run_tool("sweep " + s + " --out " + d + "/o --runner slurm --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = read_text(d + "/o/sweep.sbatch");
  EXPECT_FALSE(has_line_starting(script, "touch")) << script;
  EXPECT_NE(script.find("#SBATCH --job-name=tpbsim-x_touch_"), std::string::npos) << script;
  for (int k = 0; k < 2; ++k)
    (void)std::system(("SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " bash " + d +
                       "/o/sweep.sbatch >/dev/null 2>&1")
                          .c_str());
  EXPECT_FALSE(fs::exists(d + "/PWNED"));

  const ToolResult o = run_tool("sweep " + s + " --out '" + d + "/o2\ntouch " + d +
                                "/PWNED2' --runner slurm --dry-run");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("holds a control character"), std::string::npos) << o.err;
  const ToolResult b = run_tool("sweep " + s + " --out " + d + "/o3 --runner slurm --dry-run " +
                                "--sbatch '--partition=cpu\ntouch " + d + "/PWNED3'");
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("--sbatch"), std::string::npos) << b.err;
  EXPECT_FALSE(fs::exists(d + "/o3/sweep.sbatch"));
  // #SBATCH lines take no quoting and expand %: such an --out is refused for Slurm.
  const ToolResult pct =
      run_tool("sweep " + s + " --out '" + d + "/o%j x' --runner slurm --dry-run");
  EXPECT_EQ(pct.exit_code, 1);
  EXPECT_NE(pct.err.find("#SBATCH"), std::string::npos) << pct.err;
}

// GNU parallel never sees a user's path as a replacement string: an --out
// holding {= perl =} or {} runs every point in its own place and nothing else.
TEST(HostileSweep, GnuParallelTakesPathsAsDataNotReplacementStrings) {
  if (std::system("parallel --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "GNU parallel is missing";
  const std::string d = scratch_dir("hs-par");
  const std::string s = sweep_file(d);
  const std::string out = d + "/par{=system(\"touch " + d + "/PWNED\")=}/x{}";
  const ToolResult r =
      run_tool("sweep " + s + " --out '" + out + "' --runner parallel --sshlogin : --no-plot");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(d + "/PWNED"));
  for (const char* p : {"/points/p0000/stats.json", "/points/p0001/stats.json", "/results.csv"})
    EXPECT_TRUE(fs::exists(out + p)) << p;
}

// A workload whose name a spreadsheet would run as a formula is text in
// results.csv.
TEST(HostileSweep, FormulaLikeNamesAreTextInTheCsv) {
  const std::string d = scratch_dir("hs-csv");
  const std::string w = d + "/=HYPERLINK(\"http:__x\")";
  fs::create_directories(w);
  for (const auto& e : fs::directory_iterator(pipeline_workload()))
    fs::copy(e.path(), w / e.path().filename());
  const std::string s = sweep_file(d, {{"workloads", {w}}});
  const ToolResult r = run_tool("sweep " + s + " --out " + d + "/o --no-plot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_text(d + "/o/results.csv");
  EXPECT_NE(csv.find(",\"'=HYPERLINK(\"\"http:__x\"\")\","), std::string::npos) << csv;
  EXPECT_EQ(csv.find(",=HYPERLINK"), std::string::npos) << csv;
  EXPECT_EQ(csv.find(",\"=HYPERLINK"), std::string::npos) << csv;
}

// ----------------------------------------------------- output directories

// An --out holding a plan.json that is not this tpbsim's plan of it: nothing
// in it is removed (not points/, not results.csv), even by a dry run.
TEST(HostileSweep, ADirectoryTheSweepDoesNotOwnIsNeverEmptied) {
  const std::string d = scratch_dir("hs-own");
  const std::string out = d + "/o";
  fs::create_directories(out + "/points/mine");
  put(out, "plan.json", R"({"my": "plan"})");
  put(out, "results.csv", "precious\n");
  put(out + "/points/mine", "data.txt", "precious\n");
  const std::string s = sweep_file(d);
  for (const char* extra : {" --dry-run", ""}) {
    const ToolResult r = run_tool("sweep " + s + " --out " + out + extra);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("is not a tpbsim sweep plan of this directory"), std::string::npos)
        << r.err;
    EXPECT_EQ(read_text(out + "/results.csv"), "precious\n");
    EXPECT_EQ(read_text(out + "/points/mine/data.txt"), "precious\n");
  }
  // A real previous sweep is replaced, but only the files its plan names.
  const std::string out2 = d + "/o2";
  ASSERT_EQ(run_tool("sweep " + s + " --out " + out2 + " --no-plot").exit_code, 0);
  put(out2 + "/points/p0000", "notes.txt", "mine\n");
  put(out2, "README.txt", "mine\n");
  const ToolResult again = run_tool("sweep " + s + " --out " + out2 + " --no-plot --dry-run");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(read_text(out2 + "/points/p0000/notes.txt"), "mine\n");
  EXPECT_EQ(read_text(out2 + "/README.txt"), "mine\n");
  EXPECT_FALSE(fs::exists(out2 + "/points/p0000/stats.json"));  // the old run's: gone
  EXPECT_FALSE(fs::exists(out2 + "/results.csv"));
}

// ------------------------------------------------------------------ sizes

// 4 parameters x 65536 values is 2^64 points: refused with the count, not
// wrapped to 0; a million points is past the stated limit; --jobs must be a
// number of points; an endless sweep file or profile is refused, not read.
TEST(HostileSweep, SizesAreCheckedAndReadsAreBounded) {
  const std::string d = scratch_dir("hs-size");
  json values = json::array();
  for (int i = 0; i < 65536; ++i) values.push_back(1200 + (i % 7));
  json params = json::array();
  for (const char* k : {"clocks_mhz.dve", "clocks_mhz.pe", "clocks_mhz.pool", "clocks_mhz.sfu"})
    params.push_back({{"key", k}, {"values", values}});
  const std::string big = sweep_file(d, {{"parameters", params}});
  double took = 0;
  Background b = start(
      std::string(TPBSIM_BIN) + " sweep " + big + " --out " + d + "/o --runner slurm --dry-run",
      d + "/err.txt");
  EXPECT_EQ(wait_exit(b.pid, 60, &took), 1) << read_text(d + "/err.txt");
  const std::string err = read_text(d + "/err.txt");
  EXPECT_NE(err.find("x 65536 x 65536 x 65536 x 65536 is more than 100000 points, the most one "
                     "sweep plans"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(d + "/o/sweep.sbatch"));

  json mvals = json::array();
  for (int i = 0; i < 1000; ++i) mvals.push_back(1000 + i);
  const std::string million = sweep_file(d, {{"parameters",
                                              {{{"key", "clocks_mhz.dve"}, {"values", mvals}},
                                               {{"key", "clocks_mhz.pe"}, {"values", mvals}}}}});
  const ToolResult m = run_tool("sweep " + million + " --out " + d + "/m --dry-run");
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_NE(m.err.find("1 workload(s) x 1000 x 1000 is 1000000 points"), std::string::npos)
      << m.err;

  const std::string s = sweep_file(d);
  for (const char* j : {"-1", "0", "4294967296", "x", "99999"}) {
    const ToolResult r = run_tool("sweep " + s + " --out " + d + "/j --jobs " + j);
    EXPECT_EQ(r.exit_code, 1) << j;
    EXPECT_NE(r.err.find("is not a number of points 1..4096"), std::string::npos) << r.err;
  }

  const ToolResult z = run_tool("sweep /dev/zero --out " + d + "/z");
  EXPECT_EQ(z.exit_code, 1);
  EXPECT_NE(z.err.find("is a device") == std::string::npos ? z.err.find("is larger than")
                                                           : z.err.find("is a device"),
            std::string::npos)
      << z.err;
  const std::string w = d + "/w";
  fs::create_directories(w);
  for (const auto& e : fs::directory_iterator(pipeline_workload()))
    fs::copy(e.path(), w / e.path().filename());
  std::ofstream(w + "/cmd.txt", std::ios::app) << "--timing /dev/zero\n";
  const ToolResult t =
      run_tool("sweep " + sweep_file(d, {{"workloads", {w}}}) + " --out " + d + "/t --dry-run");
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("/dev/zero"), std::string::npos) << t.err;

  // A key given twice in the sweep file is refused, not silently dropped.
  const std::string dup = put(
      d, "dup.json",
      "{\"workloads\": [\"" + pipeline_workload() +
          "\"], \"parameters\": [{\"key\": \"clocks_mhz.dve\", "
          "\"values\": [1]}], \"parameters\": [{\"key\": \"clocks_mhz.pe\", \"values\": [1]}]}");
  const ToolResult du = run_tool("sweep " + dup + " --out " + d + "/du --dry-run");
  EXPECT_EQ(du.exit_code, 1);
  EXPECT_NE(du.err.find("duplicate key 'parameters'"), std::string::npos) << du.err;
}

// ---------------------------------------------------------------- signals

// SIGTERM to a local sweep reaches its points: none is left running, the
// sweep exits 143 and says how to collect what ran.
TEST(HostileSweep, AStopSignalReachesEveryPoint) {
  const std::string d = scratch_dir("hs-sig");
  const std::string w = d + "/long";
  fs::create_directories(w);
  const std::string args = long_run_args(w);  // long.tpb --timing slow.json
  put(w, "cmd.txt", "long.tpb\n--timing slow.json\n");
  const std::string s = sweep_file(d, {{"workloads", {w}}});
  Background b =
      start(std::string(TPBSIM_BIN) + " sweep " + s + " --out " + d + "/o --jobs 2 --no-plot",
            d + "/err.txt");
  // Both points running: their stdout files exist.
  for (int i = 0; i < 2000 && !(fs::exists(d + "/o/points/p0000/stderr.txt") &&
                                fs::exists(d + "/o/points/p0001/stderr.txt"));
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(b.pid, SIGTERM);
  double took = 0;
  EXPECT_EQ(wait_exit(b.pid, 60, &took), 143) << read_text(d + "/err.txt");
  EXPECT_LT(took, 30.0);
  EXPECT_NE(read_text(d + "/err.txt").find("interrupted (SIGTERM)"), std::string::npos);
  // No point process is left: each recorded its exit.
  for (const char* p : {"/o/points/p0000/result.json", "/o/points/p0001/result.json"}) {
    ASSERT_TRUE(fs::exists(d + p)) << p;
    EXPECT_EQ(json::parse(read_text(d + p)).at("exit"), 143) << p;
  }
  EXPECT_FALSE(process_running_with(d + "/o/points/")) << "a point is still running";
}

// ------------------------------------------------------------------ names

// Two workloads with one basename (a/pipeline, b/pipeline) are both run,
// named by their directories; the same directory twice is still an error.
TEST(HostileSweep, WorkloadsOfOneBasenameGetDistinctNames) {
  const std::string d = scratch_dir("hs-base");
  for (const char* sub : {"/a/pipeline", "/b/pipeline"}) {
    fs::create_directories(d + sub);
    for (const auto& e : fs::directory_iterator(pipeline_workload()))
      fs::copy(e.path(), fs::path(d + sub) / e.path().filename());
  }
  const std::string s = sweep_file(d, {{"workloads", {d + "/a/pipeline", d + "/b/pipeline"}}});
  const ToolResult r = run_tool("sweep " + s + " --out " + d + "/o --no-plot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_text(d + "/o/results.csv");
  EXPECT_NE(csv.find(",a/pipeline,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",b/pipeline,"), std::string::npos) << csv;
  const std::string twice =
      sweep_file(d, {{"workloads", {pipeline_workload(), pipeline_workload()}}});
  const ToolResult t = run_tool("sweep " + twice + " --out " + d + "/o2");
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("is listed twice"), std::string::npos) << t.err;
}

// A workload directory with a terminal escape is shown escaped.
TEST(HostileSweep, EscapesInNamesAreShownEscaped) {
  const std::string d = scratch_dir("hs-esc");
  const std::string s = sweep_file(d, {{"workloads", {d + "/no\x1b[2Jsuch\nworkload"}}});
  const ToolResult r = run_tool("sweep " + s + " --out " + d + "/o");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no\\x1b[2Jsuch\\nworkload"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tpb::e2e
