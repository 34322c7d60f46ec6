// `tpbsim sweep` (docs/SWEEPS.md): a 2 x 2 grid of timing overrides on the
// pipeline workload, run by the local runner, by GNU parallel and by the
// Slurm script of a dry run; each CSV row checked against `tpbsim run
// --timing` run directly, and the errors a user meets named.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

// A shell command's exit code (stdout and stderr into files of `dir`).
int sh(const std::string& cmd, const std::string& dir, std::string* err = nullptr) {
  const int st = std::system(("(" + cmd + ") >" + dir + "/sh.out 2>" + dir + "/sh.err").c_str());
  if (err) *err = read_text(dir + "/sh.err");
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

using Csv = std::vector<std::map<std::string, std::string>>;

// The CSV read by splitting on commas (no field of these sweeps is quoted).
Csv read_csv(const std::string& path, std::vector<std::string>* header_out = nullptr) {
  std::istringstream in(read_text(path));
  std::string line;
  std::vector<std::string> header;
  Csv rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::string cur;
    for (char c : l) {
      if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    f.push_back(cur);
    return f;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    const auto f = split(line);
    EXPECT_EQ(f.size(), header.size()) << line;
    std::map<std::string, std::string> r;
    for (std::size_t i = 0; i < f.size() && i < header.size(); ++i) r[header[i]] = f[i];
    rows.push_back(r);
  }
  if (header_out) *header_out = header;
  return rows;
}

std::string write_sweep(const std::string& dir, const json& extra = json::object()) {
  json s = {{"name", "tiny"},
            {"workloads", {pipeline_workload()}},
            {"parameters",
             {{{"key", "clocks_mhz.dve"}, {"values", {1200, 2400}}},
              {{"key", "sbuf.beat_bytes"}, {"values", {16, 64}}}}},
            {"metric", "simulated_ns"}};
  s.update(extra);
  const std::string path = dir + "/sweep.json";
  std::ofstream(path) << s.dump(2);
  return path;
}

// The CSV without the wall_seconds column (the only one that differs
// between two runs of the same points).
std::string csv_without_wall(const std::string& path) {
  std::vector<std::string> header;
  const Csv rows = read_csv(path, &header);
  std::string out;
  for (const auto& r : rows) {
    for (const auto& h : header)
      if (h != "wall_seconds") out += r.at(h) + ",";
    out += "\n";
  }
  return out;
}

// One sweep shared by the tests below (the runs take a fraction of a second).
struct LocalSweep {
  std::string dir, out, sweep;
  ToolResult r;
};
const LocalSweep& local_sweep() {
  static LocalSweep s = [] {
    LocalSweep l;
    l.dir = scratch_dir("sweep");
    l.out = l.dir + "/out";
    l.sweep = write_sweep(l.dir);
    l.r = run_tool("sweep " + l.sweep + " --out " + l.out + " --jobs 2");
    return l;
  }();
  return s;
}

TEST(Sweep, LocalGridWritesOneRowPerPointInGridOrder) {
  const LocalSweep& s = local_sweep();
  ASSERT_EQ(s.r.exit_code, 0) << s.r.err;
  std::vector<std::string> header;
  const Csv rows = read_csv(s.out + "/results.csv", &header);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(header[0], "point");
  EXPECT_EQ(header[2], "clocks_mhz.dve");
  EXPECT_EQ(header[3], "sbuf.beat_bytes");
  for (const char* col : {"simulated_ns", "dve_busy_cycles", "dve_stall_cycles", "dve_busy_ns",
                          "dve_utilization", "pe_busy_cycles", "pool_stall_cycles", "wall_seconds"})
    EXPECT_NE(std::find(header.begin(), header.end(), col), header.end()) << col;
  // The last parameter varies fastest.
  const std::vector<std::pair<std::string, std::string>> want = {
      {"1200", "16"}, {"1200", "64"}, {"2400", "16"}, {"2400", "64"}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("point"), "p000" + std::to_string(i));
    EXPECT_EQ(rows[i].at("workload"), "pipeline");
    EXPECT_EQ(rows[i].at("clocks_mhz.dve"), want[i].first);
    EXPECT_EQ(rows[i].at("sbuf.beat_bytes"), want[i].second);
    EXPECT_EQ(rows[i].at("status"), "ok");
    EXPECT_EQ(rows[i].at("exit_code"), "0");
    EXPECT_EQ(rows[i].at("dve_instructions"), "2");  // the pipeline's retire file: 2 DVE
    EXPECT_EQ(rows[i].at("pe_instructions"), "2");
    EXPECT_EQ(rows[i].at("pool_instructions"), "1");
  }
}

TEST(Sweep, RowEqualsADirectRunWithTheSameTiming) {
  const LocalSweep& s = local_sweep();
  ASSERT_EQ(s.r.exit_code, 0) << s.r.err;
  const Csv rows = read_csv(s.out + "/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  const auto& row = rows[2];  // dve 2400 MHz, 16-byte SBUF beats
  // The same profile written by hand, run by `tpbsim run` in the workload's directory.
  const std::string d = scratch_dir("sweep-direct");
  std::ofstream(d + "/t.json") << R"({"clocks_mhz": {"dve": 2400}, "sbuf": {"beat_bytes": 16}})";
  std::string cmd = "cd " + pipeline_workload() + " && " + TPBSIM_BIN +
                    " run program.tpb --load sbuf:0:0=activations.npy"
                    " --load sbuf:0:4096=weights_mxfp4.npy --dump psum:0:0:64x128:f32=" +
                    d + "/out.npy --timing " + d + "/t.json --stats " + d + "/s.json -q";
  std::string err;
  ASSERT_EQ(sh(cmd, d, &err), 0) << err;
  const json st = json::parse(read_text(d + "/s.json"));
  const double sim_ns = st.at("simulated_ps").get<double>() / 1000.0;
  EXPECT_NEAR(std::stod(row.at("simulated_ns")), sim_ns, 0.0005);
  for (const auto& e : st.at("engines")) {
    const std::string n = e.at("name");
    EXPECT_EQ(row.at(n + "_busy_cycles"), std::to_string(e.at("busy_cycles").get<std::uint64_t>()))
        << n;
    EXPECT_EQ(row.at(n + "_stall_cycles"),
              std::to_string(e.at("stall_cycles").get<std::uint64_t>()))
        << n;
    // busy time = cycles / clock; utilization = busy time / simulated time.
    const double busy_ns =
        e.at("busy_cycles").get<double>() * 1000.0 / e.at("clock_mhz").get<double>();
    EXPECT_NEAR(std::stod(row.at(n + "_busy_ns")), busy_ns, 0.0005) << n;
    EXPECT_NEAR(std::stod(row.at(n + "_utilization")), busy_ns / sim_ns, 1e-6) << n;
  }
  EXPECT_EQ(st.at("engines")[1].at("clock_mhz").get<double>(), 2400.0);
}

TEST(Sweep, AFasterDveClockNeverLengthensDveBusyTime) {
  const LocalSweep& s = local_sweep();
  ASSERT_EQ(s.r.exit_code, 0) << s.r.err;
  const Csv rows = read_csv(s.out + "/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  for (const std::string beat : {"16", "64"}) {
    double slow = -1, fast = -1;
    for (const auto& r : rows)
      if (r.at("sbuf.beat_bytes") == beat)
        (r.at("clocks_mhz.dve") == "1200" ? slow : fast) = std::stod(r.at("dve_busy_ns"));
    ASSERT_GT(slow, 0);
    EXPECT_LE(fast, slow) << "beat " << beat;
    EXPECT_LT(fast, slow) << "the DVE's own cycles take half the time at 2400 MHz";
  }
}

// A point that ran the ACT gets its columns (none of the pipeline's does:
// a queue without instructions is in no output); its clock is a parameter.
TEST(Sweep, TheActsColumnsWhenAPointRanIt) {
  const std::string dir = scratch_dir("sweep-act");
  const std::string sweep =
      write_sweep(dir, {{"workloads", {source_path("traces/workloads/softmax")}},
                        {"parameters", {{{"key", "clocks_mhz.act"}, {"values", {600, 1200}}}}}});
  const ToolResult r = run_tool("sweep " + sweep + " --out " + dir + "/out --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Csv rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("act_instructions"), "1");
  // The same ACT cycles at half the clock: twice the time.
  EXPECT_EQ(rows[0].at("act_busy_cycles"), rows[1].at("act_busy_cycles"));
  EXPECT_NEAR(std::stod(rows[0].at("act_busy_ns")), 2 * std::stod(rows[1].at("act_busy_ns")), 1);
  std::vector<std::string> header;
  read_csv(local_sweep().out + "/results.csv", &header);
  for (const auto& h : header) EXPECT_EQ(h.rfind("act_", 0), std::string::npos) << h;
}

TEST(Sweep, PlotIsAPng) {
  const LocalSweep& s = local_sweep();
  ASSERT_EQ(s.r.exit_code, 0) << s.r.err;
  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "matplotlib is missing (apt-get install python3-matplotlib): no plot";
  const std::string png = read_text(s.out + "/plot.png");
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST(Sweep, GnuParallelRunnerGivesTheSameCsv) {
  const LocalSweep& s = local_sweep();
  ASSERT_EQ(s.r.exit_code, 0) << s.r.err;
  ASSERT_EQ(std::system("command -v parallel >/dev/null"), 0)
      << "GNU parallel is missing (scripts/install-deps.sh installs it)";
  const std::string out = s.dir + "/out-parallel";
  const ToolResult r = run_tool("sweep " + s.sweep + " --out " + out +
                                " --runner parallel --sshlogin : --jobs 2 --no-plot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_text(out + "/parallel.joblog").find("--run-point"), std::string::npos);
  EXPECT_EQ(csv_without_wall(out + "/results.csv"), csv_without_wall(s.out + "/results.csv"));
}

TEST(Sweep, SlurmDryRunWritesAnArrayOfOneTaskPerPoint) {
  const LocalSweep& s = local_sweep();
  ASSERT_EQ(s.r.exit_code, 0) << s.r.err;
  const std::string out = s.dir + "/out-slurm";
  const ToolResult r = run_tool("sweep " + s.sweep + " --out " + out + " --runner slurm --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = read_text(out + "/sweep.sbatch");
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("\n#SBATCH --array=0-3\n"), std::string::npos) << script;
  EXPECT_NE(script.find("sweep --run-point " + out + " \"$SLURM_ARRAY_TASK_ID\""),
            std::string::npos)
      << script;
  // A dry run runs nothing.
  EXPECT_FALSE(std::ifstream(out + "/points/p0000/result.json").good());
  // commands.txt: task i's `tpbsim run` line, with its own timing and stats.
  std::istringstream cmds(read_text(out + "/commands.txt"));
  std::string line;
  int n = 0;
  for (; std::getline(cmds, line); ++n) {
    const std::string p = out + "/points/p000" + std::to_string(n);
    EXPECT_NE(line.find(" run program.tpb "), std::string::npos) << line;
    EXPECT_NE(line.find("--timing " + p + "/timing.json"), std::string::npos) << line;
    EXPECT_NE(line.find("--stats " + p + "/stats.json"), std::string::npos) << line;
    EXPECT_NE(line.find("=" + p + "/out.npy"), std::string::npos) << "dump into the point dir";
  }
  EXPECT_EQ(n, 4);
  // Each array task as Slurm would start it (the #SBATCH lines are comments
  // to bash), then the merge: the same CSV as the local runner's.
  for (int k = 0; k < 4; ++k) {
    std::string err;
    ASSERT_EQ(sh("SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " bash " + out + "/sweep.sbatch",
                 s.dir, &err),
              0)
        << err;
  }
  const ToolResult c = run_tool("sweep --collect " + out + " --no-plot");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(csv_without_wall(out + "/results.csv"), csv_without_wall(s.out + "/results.csv"));
}

TEST(Sweep, AFailingPointIsARowAndTheSweepFailsNamingIt) {
  const std::string dir = scratch_dir("sweep-fail");
  const std::string sweep = write_sweep(
      dir, {{"workloads", {pipeline_workload(), source_path("traces/workloads/invalid")}},
            {"parameters", {{{"key", "clocks_mhz.pool"}, {"values", {1200}}}}}});
  const ToolResult r = run_tool("sweep " + sweep + " --out " + dir + "/out --no-plot");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1 of 2 points failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("p0001 (workload invalid, clocks_mhz.pool=1200): exit 2"), std::string::npos)
      << r.err;
  const Csv rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[1].at("status"), "failed");
  EXPECT_EQ(rows[1].at("exit_code"), "2");
  EXPECT_EQ(rows[1].at("simulated_ns"), "");
}

TEST(Sweep, CollectNamesPointsThatDidNotRunOrLeftNoStats) {
  const std::string dir = scratch_dir("sweep-partial");
  const std::string sweep = write_sweep(dir), out = dir + "/out";
  const ToolResult plan = run_tool("sweep " + sweep + " --out " + out + " --dry-run");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  ASSERT_EQ(run_tool("sweep --run-point " + out + " 0").exit_code, 0);
  ASSERT_EQ(run_tool("sweep --run-point " + out + " 1").exit_code, 0);
  std::remove((out + "/points/p0001/stats.json").c_str());
  const ToolResult c = run_tool("sweep --collect " + out + " --no-plot");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("3 of 4 points failed"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("p0001 (workload pipeline, clocks_mhz.dve=1200, sbuf.beat_bytes=64): "
                       "point stats"),
            std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("p0003 (workload pipeline, clocks_mhz.dve=2400, sbuf.beat_bytes=64): "
                       "not run (no result.json)"),
            std::string::npos)
      << c.err;
  const Csv rows = read_csv(out + "/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[1].at("status"), "failed");
  EXPECT_EQ(rows[1].at("exit_code"), "0");
  EXPECT_EQ(rows[2].at("status"), "failed");
  EXPECT_EQ(rows[2].at("exit_code"), "");
  const ToolResult bad = run_tool("sweep --run-point " + out + " 4");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("point '4' is not 0..3"), std::string::npos) << bad.err;
}

TEST(Sweep, BadInputIsNamedAndNothingRuns) {
  const std::string dir = scratch_dir("sweep-bad");
  struct Case {
    std::string text, want;
  };
  const std::string wl = "\"workloads\": [\"" + pipeline_workload() + "\"]";
  const std::vector<Case> cases = {
      {"{\"workloads\": [", "not valid JSON"},
      {"{" + wl + ", \"parameter\": []}", "unknown key 'parameter'"},
      {"{" + wl + ", \"parameters\": [{\"key\": \"clocks_mhz.dvx\", \"values\": [1]}]}",
       "'dvx' is not a timing key"},
      {"{" + wl + ", \"parameters\": [{\"key\": \"clocks_mhz\", \"values\": [1]}]}",
       "names an object"},
      {"{" + wl + ", \"parameters\": [{\"key\": \"clocks_mhz.dve\", \"values\": [0]}]}",
       "clocks_mhz.dve': must not be 0"},
      {"{" + wl + ", \"parameters\": [{\"key\": \"clocks_mhz.dve\", \"values\": []}]}",
       "at least one value"},
      {"{\"workloads\": [\"no/such/dir\"], \"parameters\": [{\"key\": \"clocks_mhz.dve\", "
       "\"values\": [1]}]}",
       "is not a directory"},
      {"{" + wl +
           ", \"parameters\": [{\"key\": \"clocks_mhz.dve\", \"values\": [1]}], "
           "\"metric\": \"speed\"}",
       "metric 'speed' is not a result column"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string f = dir + "/bad" + std::to_string(i) + ".json";
    std::ofstream(f) << cases[i].text;
    const ToolResult r = run_tool("sweep " + f + " --out " + dir + "/out" + std::to_string(i));
    EXPECT_EQ(r.exit_code, 1) << cases[i].text;
    EXPECT_NE(r.err.find(cases[i].want), std::string::npos) << cases[i].text << "\n" << r.err;
    EXPECT_NE(::access((dir + "/out" + std::to_string(i)).c_str(), F_OK), 0) << "nothing written";
  }
  const ToolResult nodir = run_tool("sweep --collect " + dir + "/nothing-here");
  EXPECT_EQ(nodir.exit_code, 1);
  EXPECT_NE(nodir.err.find("no plan.json"), std::string::npos) << nodir.err;
}

// cmd.txt is read with the very options of `tpbsim run`: both spellings of
// every option, and every output rewritten into the point's directory,
// however its path climbs out and whatever its name holds (a --dump's file
// split where the run splits it, at the first '='). Every output option of
// the run table: SweepPlan.*; --cosim-vcd run for real: CosimCli.*.
TEST(Sweep, CmdTxtTakesEveryRunOptionInBothSpellingsAndOutputsStayInThePoint) {
  const std::string dir = scratch_dir("sweep-cmdtxt");
  const std::string wl = dir + "/deep/wl";
  ASSERT_EQ(sh("mkdir -p " + wl + " && cp " + pipeline_workload() + "/program.tpb " +
                   pipeline_workload() + "/activations.npy " + pipeline_workload() +
                   "/weights_mxfp4.npy " + wl,
               dir),
            0);
  std::ofstream(wl + "/cmd.txt")
      << "# both spellings\nprogram.tpb --load sbuf:0:0=activations.npy\n"
         "--load=sbuf:0:4096=weights_mxfp4.npy --dump psum:0:0:64x128:f32=../../out.npy\n"
         "--trace-level instr --trace-engines=pool,pe --vcd=../../escape.vcd\n"
         "--retire ../r.txt --perfetto ../../../p.json --mx-emax ocp --max-sim-time 1ms\n"
         "--dump-timing=../../t.json --dump psum:0:0:64x128:f32=../../o=ut.npy\n";
  const std::string sweep = write_sweep(
      dir,
      {{"workloads", {wl}}, {"parameters", {{{"key", "clocks_mhz.dve"}, {"values", {1200}}}}}});
  const ToolResult r = run_tool("sweep " + sweep + " --out " + dir + "/out --no-plot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string p = dir + "/out/points/p0000/";
  for (const char* f : {"out.npy", "escape.vcd", "escape.gtkw", "r.txt", "p.json", "stats.json",
                        "t.json", "o=ut.npy"})
    EXPECT_EQ(::access((p + f).c_str(), F_OK), 0) << f;
  for (const std::string& f :
       {dir + "/out.npy", dir + "/escape.vcd", dir + "/deep/r.txt", dir + "/p.json",
        wl + "/../../out.npy", dir + "/t.json", dir + "/o=ut.npy", dir + "/o="})
    EXPECT_NE(::access(f.c_str(), F_OK), 0) << f << " written outside the point";
  // The two-token --trace-level instr reached the run (the default, auto,
  // traces this short program's bundles).
  EXPECT_NE(read_text(p + "p.json").find("tensor_dequantize"), std::string::npos);
  EXPECT_EQ(read_text(p + "p.json").find("pool.decode.entry"), std::string::npos);
  // --trace-engines=pool,pe: no DVE track.
  EXPECT_EQ(read_text(p + "p.json").find("\"dve\""), std::string::npos);
  const std::string cmds = read_text(dir + "/out/commands.txt");
  EXPECT_NE(cmds.find("--trace-level instr"), std::string::npos) << cmds;
  EXPECT_NE(cmds.find("--stats " + p + "stats.json"), std::string::npos) << cmds;
}

}  // namespace

// Issue 40 (minor): a workload of several cores (`--cores 2`, stats naming
// core0.pool, core1.pool) fills the engine columns: the sum over the cores,
// the utilization their mean; two cores running one workload each are twice
// the instructions and busy cycles of one, at the same utilization (they
// were empty).
TEST(Sweep, ADeviceWorkloadFillsTheEngineColumns) {
  const std::string d = scratch_dir("sweep-cores");
  std::string prog = ".arch mariana\n.engine pool\n";
  for (int i = 0; i < 3; ++i)
    prog +=
        "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
        "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[8, 1, 1]) "
        "dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[16, 1, 1])\n";
  for (const char* w : {"/one", "/two"}) {
    ASSERT_EQ(::mkdir((d + w).c_str(), 0755), 0);
    std::ofstream(d + w + "/p0.tpb") << prog;
    std::ofstream(d + w + "/p1.tpb") << prog;
  }
  std::ofstream(d + "/one/cmd.txt") << "p0.tpb\n";
  std::ofstream(d + "/two/cmd.txt") << "--cores 2\np0.tpb\np1.tpb\n";
  const json s = {{"name", "cores"},
                  {"workloads", {d + "/one", d + "/two"}},
                  {"parameters", {{{"key", "dma.mbytes_per_s"}, {"values", {33000}}}}}};
  std::ofstream(d + "/sweep.json") << s.dump(2);
  const ToolResult r = run_tool("sweep " + d + "/sweep.json --out " + d + "/out --no-plot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Csv rows = read_csv(d + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  const auto& one = rows[0];
  const auto& two = rows[1];
  ASSERT_EQ(one.at("pool_instructions"), "3");
  EXPECT_EQ(two.at("pool_instructions"), "6");
  EXPECT_EQ(std::stod(two.at("pool_busy_cycles")), 2 * std::stod(one.at("pool_busy_cycles")));
  EXPECT_EQ(two.at("pool_utilization"), one.at("pool_utilization"));
  EXPECT_EQ(two.at("simulated_ns"), one.at("simulated_ns"));
}

}  // namespace tpb::e2e
