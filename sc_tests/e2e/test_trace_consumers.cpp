// The traces of `tpbsim run` opened by real consumers (docs/TRACES.md):
// the --perfetto trace parsed by Chrome DevTools' trace engine (the
// Performance panel's parser, run headless in node), and the GTKWave save
// file of --vcd loaded by GTKWave itself under a virtual X server.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

using nlohmann::json;

int sh_redirected(const std::string& cmd, const std::string& out, const std::string& err) {
  const int st = std::system(("(" + cmd + ") >" + out + " 2>" + err).c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct PipelineRun {
  std::string dir, vcd, gtkw, perfetto, retire;
  ToolResult r;
};

// The pipeline workload (POOL dequant, two DVE QuantizeMX, PE ldweights /
// matmul) with every trace.
const PipelineRun& pipeline() {
  static PipelineRun p = [] {
    PipelineRun x;
    x.dir = scratch_dir("consumers");
    x.vcd = x.dir + "/run.vcd";
    x.gtkw = x.dir + "/run.gtkw";
    x.perfetto = x.dir + "/run.perfetto.json";
    x.retire = x.dir + "/run.retire";
    const std::string wl = source_path("traces/workloads/pipeline");
    x.r = run_tool("run " + wl + "/program.tpb --load sbuf:0:0=" + wl +
                   "/activations.npy --load sbuf:0:4096=" + wl +
                   "/weights_mxfp4.npy --dump psum:0:0:64x128:f32=" + x.dir + "/out.npy --vcd " +
                   x.vcd + " --perfetto " + x.perfetto + " --retire " + x.retire + " -q");
    return x;
  }();
  return p;
}

TEST(TraceConsumer, DevToolsTraceEngineParsesOneSlicePerRetiredInstruction) {
  const PipelineRun& p = pipeline();
  ASSERT_EQ(p.r.exit_code, 0) << p.r.err;
  const std::string script = source_path("scripts/trace_consumer/devtools_parse.mjs");
  const std::string pkg =
      source_path("scripts/trace_consumer/node_modules/@paulirish/trace_engine/package.json");
  if (std::system("command -v node >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "node is missing: scripts/install-deps.sh installs Debian's nodejs";
  if (!std::ifstream(pkg).good())
    GTEST_SKIP() << "Chrome DevTools' trace engine is not installed: run scripts/install-deps.sh "
                    "(npm ci into scripts/trace_consumer)";
  const std::string out = p.dir + "/devtools.json", err = p.dir + "/devtools.err";
  ASSERT_EQ(sh_redirected("node " + script + " " + p.perfetto, out, err), 0) << read_text(err);
  const json parsed = json::parse(read_text(out));

  // What DevTools built, per engine: the top-level slices of its thread and
  // of its lanes ("pe lane 1": instructions that overlap, SPEC §8), in order
  // of their start.
  std::map<std::string, std::vector<json>> roots;
  for (const json& t : parsed.at("threads"))
    if (!t.at("name").is_null()) {
      std::string name = t.at("name").get<std::string>();
      name = name.substr(0, name.find(" lane "));
      for (const json& r : t.at("roots")) roots[name].push_back(r);
    }
  for (auto& [name, list] : roots)
    std::stable_sort(list.begin(), list.end(), [](const json& a, const json& b) {
      return a.at("ts_us").get<double>() < b.at("ts_us").get<double>();
    });

  // Against the retire file, written by another path of the model: one slice
  // per retired instruction on its engine's threads, in retire order (an
  // engine completes in program order), with its name, ending when the
  // instruction retired.
  const std::vector<RetireLine> retired = read_retire_lines(p.retire);
  ASSERT_EQ(retired.size(), 5u);
  std::map<std::string, std::vector<RetireLine>> by_engine;
  for (const RetireLine& r : retired) by_engine[r.engine].push_back(r);
  for (const auto& [engine, list] : by_engine) {
    const auto& got = roots[engine];
    ASSERT_EQ(got.size(), list.size()) << engine << ": " << parsed.dump();
    for (std::size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(got[i].at("name"), list[i].name) << engine << " " << i;
      const double end = got[i].at("ts_us").get<double>() + got[i].at("dur_us").get<double>();
      EXPECT_NEAR(end, static_cast<double>(list[i].end_ps) / 1e6, 1e-6) << engine << " " << i;
      EXPECT_GT(got[i].at("dur_us").get<double>(), 0.0) << engine << " " << i;
      EXPECT_GT(got[i].at("children").get<int>(), 0) << "bundles nest under the instruction";
    }
  }
  EXPECT_EQ(roots.count("sfu") ? roots.at("sfu").size() : 0u, 0u);
  // The trace ends when the last instruction retired.
  EXPECT_NEAR(parsed.at("bounds").at("max_us").get<double>(),
              static_cast<double>(retired.back().end_ps) / 1e6, 1e-6);
}

// The VCD's signals as GTKWave names them: the $scope path joined by '.',
// and [msb:0] after a vector's name. Read from the $var lines, independently
// of the writers.
std::set<std::string> vcd_signals(const std::string& vcd) {
  std::set<std::string> out;
  for (const VcdVar& v : vcd_var_list(read_text(vcd)))
    out.insert(v.width > 1 ? v.path + "[" + std::to_string(v.width - 1) + ":0]" : v.path);
  return out;
}

struct Gtkw {
  std::string dumpfile;
  std::vector<std::string> signals;
  std::map<std::string, std::vector<std::string>> groups;  // group -> signals
};

Gtkw read_gtkw(const std::string& path) {
  Gtkw g;
  std::istringstream in(read_text(path));
  std::string line, group;
  while (std::getline(in, line)) {
    if (line.rfind("[dumpfile] ", 0) == 0) {
      g.dumpfile = line.substr(11);
      g.dumpfile = g.dumpfile.substr(1, g.dumpfile.size() - 2);  // "quoted"
    } else if (line.rfind("-", 0) == 0) {
      group = group == line.substr(1) ? "" : line.substr(1);  // begin / end marker
    } else if (!line.empty() && line[0] != '[' && line[0] != '@' && line[0] != '*') {
      g.signals.push_back(line);
      g.groups[group].push_back(line);
    }
  }
  return g;
}

TEST(TraceConsumer, GtkwSaveFileNamesTheVcdAndOnlyItsSignalsInGroups) {
  const PipelineRun& p = pipeline();
  ASSERT_EQ(p.r.exit_code, 0) << p.r.err;
  ASSERT_TRUE(std::ifstream(p.gtkw).good()) << "--vcd run.vcd writes run.gtkw beside it";
  const Gtkw g = read_gtkw(p.gtkw);
  EXPECT_EQ(g.dumpfile, p.vcd);
  const std::set<std::string> vcd = vcd_signals(p.vcd);
  ASSERT_FALSE(vcd.empty());
  for (const auto& s : g.signals) EXPECT_TRUE(vcd.count(s)) << s << " is not in the VCD";
  EXPECT_EQ(std::set<std::string>(g.signals.begin(), g.signals.end()).size(), g.signals.size());
  for (const char* e : {"pool", "dve", "pe", "sfu"}) {
    ASSERT_TRUE(g.groups.count(e)) << "no group " << e;
    EXPECT_EQ(g.groups.at(e).front(), std::string("tpb.") + e + ".busy");
    EXPECT_NE(std::find(g.groups.at(e).begin(), g.groups.at(e).end(),
                        std::string("tpb.") + e + ".opcode[7:0]"),
              g.groups.at(e).end());
  }
  ASSERT_TRUE(g.groups.count("semaphores"));
  EXPECT_NE(std::find(g.groups.at("semaphores").begin(), g.groups.at("semaphores").end(),
                      "tpb.sem.sem0[31:0]"),
            g.groups.at("semaphores").end());
  ASSERT_TRUE(g.groups.count("memories"));
  EXPECT_NE(std::find(g.groups.at("memories").begin(), g.groups.at("memories").end(),
                      "tpb.psum.bytes_written[63:0]"),
            g.groups.at("memories").end());
  EXPECT_EQ(g.groups.count(""), 0u) << "every signal is in a group";
}

TEST(TraceConsumer, GtkwaveLoadsTheSaveFileHeadless) {
  const PipelineRun& p = pipeline();
  ASSERT_EQ(p.r.exit_code, 0) << p.r.err;
  if (std::system("command -v gtkwave >/dev/null 2>&1 && command -v xvfb-run >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gtkwave or xvfb-run is missing (scripts/install-deps.sh installs both)";
  const std::string tcl = p.dir + "/probe.tcl", report = p.dir + "/gtkwave.txt";
  std::ofstream(tcl) << "set f [open \"" << report << "\" w]\n"
                     << "puts $f \"dumpfile [gtkwave::getDumpFileName]\"\n"
                     << "puts $f \"max [gtkwave::getMaxTime]\"\n"
                     << "puts $f \"start [gtkwave::getWindowStartTime]\"\n"
                     << "puts $f \"zoom [gtkwave::getZoomFactor]\"\n"
                     << "foreach s [gtkwave::getDisplayedSignals] { puts $f \"signal $s\" }\n"
                     << "close $f\n"
                     << "gtkwave::/File/Quit\n";
  const int rc =
      sh_redirected("cd " + p.dir + " && timeout 120 xvfb-run -a gtkwave -S " + tcl + " " + p.gtkw,
                    p.dir + "/gtkwave.out", p.dir + "/gtkwave.err");
  ASSERT_TRUE(std::ifstream(report).good())
      << "gtkwave exited " << rc
      << " without running the script: " << read_text(p.dir + "/gtkwave.err");
  std::istringstream in(read_text(report));
  std::string line, dumpfile;
  long long max = -1, start = -1;
  double zoom = 1;
  std::vector<std::string> shown;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "dumpfile") ls >> dumpfile;
    if (key == "max") ls >> max;
    if (key == "start") ls >> start;
    if (key == "zoom") ls >> zoom;
    if (key == "signal") {
      std::string s;
      ls >> s;
      shown.push_back(s);
    }
  }
  EXPECT_EQ(dumpfile, p.vcd);
  // The whole run in view: the window starts at 0, and at GTKWave's zoom
  // (2^-zoom time units per pixel) the run fits in 1000 pixels of the wave
  // pane (the 1400-pixel window less the signal pane) and fills at least a
  // quarter of them. (Under a bare X server the script runs before the pane
  // has its width, so GTKWave's window end time is not the measure.)
  EXPECT_GT(max, 0);
  EXPECT_EQ(start, 0);
  EXPECT_LT(zoom, 0.0);
  const double ps_per_pixel = std::pow(2.0, -zoom);
  EXPECT_LE(static_cast<double>(max), 1000 * ps_per_pixel) << "zoom " << zoom;
  EXPECT_GT(static_cast<double>(max), 250 * ps_per_pixel) << "zoom " << zoom;
  // Every signal of the save file resolved (GTKWave drops names it cannot find).
  const Gtkw g = read_gtkw(p.gtkw);
  std::vector<std::string> shown_signals;
  for (const auto& s : shown)
    if (std::find(g.signals.begin(), g.signals.end(), s) != g.signals.end())
      shown_signals.push_back(s);
  EXPECT_EQ(shown_signals, g.signals) << read_text(report);
}

TEST(TraceConsumer, GtkwIsStagedAndCheckedLikeEveryOutput) {
  const std::string wl = source_path("traces/workloads/pipeline");
  const std::string d = scratch_dir("gtkw-staged");
  const std::string base = "run " + wl + "/program.tpb --load sbuf:0:0=" + wl +
                           "/activations.npy --load sbuf:0:4096=" + wl + "/weights_mxfp4.npy -q ";
  // A VCD into a device: no save file beside it.
  const ToolResult dev = run_tool(base + "--vcd /dev/null");
  EXPECT_EQ(dev.exit_code, 0) << dev.err;
  EXPECT_FALSE(std::ifstream("/dev/null.gtkw").good());
  // The save file may not overwrite another output: refused before running.
  const ToolResult clash = run_tool(base + "--vcd " + d + "/x.vcd --perfetto " + d + "/x.gtkw");
  EXPECT_EQ(clash.exit_code, 1);
  EXPECT_NE(clash.err.find("--vcd (its GTKWave save file) " + d +
                           "/x.gtkw names the output of "
                           "--perfetto"),
            std::string::npos)
      << clash.err;
  EXPECT_FALSE(std::ifstream(d + "/x.vcd").good());
  // Not a .vcd name: NAME.gtkw beside it.
  const ToolResult other = run_tool(base + "--vcd " + d + "/wave.txt");
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_TRUE(std::ifstream(d + "/wave.txt.gtkw").good());
  EXPECT_FALSE(std::ifstream(d + "/wave.txt.gtkw.tpbsim-tmp").good());
}

}  // namespace
}  // namespace tpb::e2e
