// Timing-only runs (SPEC §13, `tpbsim run --timing-only`): on every workload
// in traces/workloads/ and every example program in traces/examples/, the
// timing-only run's retire file, VCD and Perfetto trace are byte for byte the
// full run's, its stats the same but for the mode and the wall time, and its
// exit code the same (TQUANT computes in both modes: its faults on data are
// the full run's too).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sc_tests/e2e/tool_runner.h"

namespace {

using json = nlohmann::json;
using tpb::e2e::read_text;
using tpb::e2e::scratch_dir;
using tpb::e2e::source_path;

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A cmd.txt's arguments (one or more per line, '#' comments), shell-quoted.
std::string cmd_args(const std::string& path) {
  std::stringstream in(read_text(path));
  std::string args;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ls(line);
    for (std::string tok; ls >> tok;) args += " '" + tok + "'";
  }
  return args;
}

// Where a case runs (its files are relative to it) and what it passes.
struct Case {
  std::string name, dir, args;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::string wl = source_path("traces/workloads");
  for (const std::string& n : list_dir(wl))
    if (is_file(wl + "/" + n + "/cmd.txt"))
      out.push_back({"workloads/" + n, wl + "/" + n, cmd_args(wl + "/" + n + "/cmd.txt")});
  const std::string ex = source_path("traces/examples");
  for (const std::string& n : list_dir(ex)) {
    if (is_file(ex + "/" + n + "/cmd.txt"))
      out.push_back({"examples/" + n, ex + "/" + n, cmd_args(ex + "/" + n + "/cmd.txt")});
    else if (n.size() > 4 && n.compare(n.size() - 4, 4, ".tpb") == 0)
      out.push_back({"examples/" + n, ex, " '" + n + "'"});
  }
  return out;
}

struct ModeRun {
  int exit_code = -1;
  std::string err, retire, vcd, perfetto;
  json stats;
};

// Runs the case in its directory with every trace output in `out`; dumps
// (cmd.txt's --dump) land in the case's scratch directory by their relative
// names, so they are rewritten to `out` too.
ModeRun run_case(const Case& c, const std::string& out, bool timing_only,
                 const std::string& threads = "2") {
  std::string args = c.args;
  // --dump ...=FILE: FILE into out.
  for (std::size_t at = 0; (at = args.find("'--dump' '", at)) != std::string::npos;) {
    const std::size_t eq = args.find('=', at);
    const std::size_t end = args.find('\'', eq);
    if (eq == std::string::npos || end == std::string::npos) break;
    args.replace(eq + 1, end - eq - 1, out + "/" + args.substr(eq + 1, end - eq - 1));
    at = end;
  }
  const std::string cmd = "cd '" + c.dir + "' && '" + TPBSIM_BIN + "' run" + args + " --vcd '" +
                          out + "/w.vcd' --perfetto '" + out + "/t.json' --stats '" + out +
                          "/s.json' --retire '" + out + "/r.txt' --threads " + threads +
                          (timing_only ? " --timing-only" : "") + " >'" + out + "/out' 2>'" + out +
                          "/err'";
  const int st = std::system(cmd.c_str());
  ModeRun r;
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read_text(out + "/err");
  r.retire = read_text(out + "/r.txt");
  r.vcd = read_text(out + "/w.vcd");
  r.perfetto = read_text(out + "/t.json");
  const std::string s = read_text(out + "/s.json");
  if (!s.empty()) r.stats = json::parse(s, nullptr, false);
  return r;
}

// The stats as the two modes must agree on them.
json comparable(json s) {
  if (!s.is_object()) return s;
  s.erase("wall_seconds");
  s.erase("mode");
  s.erase("mode_note");
  if (s.contains("traces"))
    for (json& t : s["traces"]) t.erase("path");
  return s;
}

TEST(TimingOnly, EveryWorkloadAndExampleTimesAsTheFullRun) {
  const std::vector<Case> all = cases();
  ASSERT_GE(all.size(), 20u) << "traces/ lost its workloads?";
  unsigned compared = 0, ok_runs = 0;
  for (const Case& c : all) {
    SCOPED_TRACE(c.name);
    const std::string full_dir = scratch_dir("to-full"), fast_dir = scratch_dir("to-fast");
    const ModeRun full = run_case(c, full_dir, false);
    const ModeRun fast = run_case(c, fast_dir, true);
    ASSERT_TRUE(full.stats.is_object()) << full.err;
    ASSERT_TRUE(fast.stats.is_object()) << fast.err;
    EXPECT_EQ(full.stats["mode"], "full");
    EXPECT_EQ(fast.stats["mode"], "timing-only");
    EXPECT_NE(fast.stats.value("mode_note", "").find("timing only"), std::string::npos);
    EXPECT_EQ(full.exit_code, fast.exit_code) << full.err << "\n" << fast.err;
    EXPECT_EQ(comparable(full.stats), comparable(fast.stats));
    EXPECT_EQ(full.retire, fast.retire);
    EXPECT_EQ(full.vcd, fast.vcd);
    EXPECT_EQ(full.perfetto, fast.perfetto);
    EXPECT_FALSE(full.retire.empty() && full.stats["status"] == "ok") << "nothing retired";
    ++compared;
    if (full.stats["status"] == "ok") ++ok_runs;
  }
  EXPECT_GE(compared, 20u);
  EXPECT_GE(ok_runs, 15u);
}

// What a timing-only run leaves in memory: nothing it computed. The demo
// workload's output region, dumped after a timing-only run, is the zeros of
// a fresh core, while the full run's equals its expected.npy.
TEST(TimingOnly, WritesNoValuesIntoMemory) {
  const std::string wl = source_path("traces/workloads/demo");
  const Case c{"demo", wl, cmd_args(wl + "/cmd.txt")};
  const std::string full_dir = scratch_dir("to-mem-full"), fast_dir = scratch_dir("to-mem-fast");
  const ModeRun full = run_case(c, full_dir, false);
  const ModeRun fast = run_case(c, fast_dir, true);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const std::string expected = read_text(wl + "/expected.npy");
  const std::string got_full = read_text(full_dir + "/out.npy");
  const std::string got_fast = read_text(fast_dir + "/out.npy");
  ASSERT_EQ(got_full.size(), expected.size());
  ASSERT_EQ(got_fast.size(), expected.size());
  // The data past the .npy header (same header: same shape and dtype).
  const std::size_t header = expected.find('\n') + 1;
  EXPECT_EQ(got_full.substr(header), expected.substr(header));
  EXPECT_NE(expected.substr(header).find_first_not_of('\0'), std::string::npos);
  EXPECT_EQ(got_fast.substr(header).find_first_not_of('\0'), std::string::npos);
}

// --threads N splits the arithmetic, never the results: every output of the
// workloads with the most arithmetic, the dumps included, is the same for 1
// and 3 host threads, in both modes.
TEST(Threads, OneAndThreeWriteTheSameFiles) {
  for (const char* name : {"pipeline", "two_stream", "e2m1_g8_mariana"}) {
    SCOPED_TRACE(name);
    const std::string wl = source_path(std::string("traces/workloads/") + name);
    const Case c{name, wl, cmd_args(wl + "/cmd.txt")};
    for (bool timing_only : {false, true}) {
      const std::string d1 = scratch_dir("th1"), d3 = scratch_dir("th3");
      const ModeRun a = run_case(c, d1, timing_only, "1");
      const ModeRun b = run_case(c, d3, timing_only, "3");
      ASSERT_EQ(a.exit_code, 0) << a.err;
      ASSERT_EQ(b.exit_code, 0) << b.err;
      EXPECT_EQ(a.retire, b.retire);
      EXPECT_EQ(a.vcd, b.vcd);
      EXPECT_EQ(a.perfetto, b.perfetto);
      EXPECT_EQ(comparable(a.stats), comparable(b.stats));
      unsigned dumps = 0;
      for (const std::string& f : list_dir(d1)) {
        if (f.size() < 4 || f.compare(f.size() - 4, 4, ".npy") != 0) continue;
        EXPECT_EQ(read_text(d1 + "/" + f), read_text(d3 + "/" + f)) << f;
        ++dumps;
      }
      EXPECT_GE(dumps, 1u);
    }
  }
}

TEST(TimingOnly, ThreadsAndCosimOptionsAreChecked) {
  const std::string prog = source_path("traces/examples/registers.tpb");
  for (const char* bad : {"0", "-1", "x", "1025", "99999999999"}) {
    const auto r = tpb::e2e::run_tool("run '" + prog + "' --threads " + bad);
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
  }
  const auto r = tpb::e2e::run_tool("run '" + prog + "' --timing-only --cosim");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--timing-only"), std::string::npos) << r.err;
}

}  // namespace
