// A hostile user's outputs (docs/BAD_INPUT.md, "Outputs" and "Signals"):
// staging files nobody can predict or plant a link at, write errors and
// special files on every output, stop signals and broken pipes, names that
// are long, loop or hold control characters, and strict timing profiles.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "sc_tests/e2e/hostile.h"

namespace tpb::e2e {
namespace {

using json = nlohmann::json;

const std::string kProgram = source_path("traces/workloads/pipeline/program.tpb");
const std::string kLoads =
    " --load sbuf:0:0=" + source_path("traces/workloads/pipeline/activations.npy") +
    " --load sbuf:0:4096=" + source_path("traces/workloads/pipeline/weights_mxfp4.npy");

bool whole_json(const std::string& path) {
  try {
    return !json::parse(read_text(path)).is_discarded();
  } catch (const std::exception&) {
    return false;
  }
}

// ------------------------------------------------------------ staging files

// A link planted at the old predictable staging name (PATH.tpbsim-tmp) is
// never followed: its target keeps its bytes, the link stays a link.
TEST(HostileStaging, ALinkPlantedAtAStagingNameIsNeverFollowed) {
  const std::string d = scratch_dir("h-plant");
  const std::string victim = put(d, "victim.txt", "precious\n");
  for (const char* f : {"s.json", "r.txt", "w.vcd", "w.gtkw", "p.json", "o.npy", "t.json"})
    ASSERT_EQ(::symlink(victim.c_str(), (d + "/" + f + std::string(".tpbsim-tmp")).c_str()), 0);
  const ToolResult r =
      run_tool("run " + kProgram + kLoads + " --stats " + d + "/s.json --retire " + d +
               "/r.txt --vcd " + d + "/w.vcd --perfetto " + d +
               "/p.json --dump psum:0:0:4x4:f32=" + d + "/o.npy --dump-timing " + d + "/t.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(victim), "precious\n");
  EXPECT_TRUE(whole_json(d + "/s.json"));
  EXPECT_TRUE(whole_json(d + "/t.json"));
  struct stat st {};
  ASSERT_EQ(::lstat((d + "/s.json.tpbsim-tmp").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// A run killed outright (SIGKILL: no handler runs) leaves no staging file:
// they have no name until they are renamed into place.
TEST(HostileStaging, ARunKilledOutrightLeavesNoStagingFile) {
  const std::string d = scratch_dir("h-kill");
  const std::string args = long_run_args(d);
  Background b = start(std::string(TPBSIM_BIN) + " run " + args + " --retire /dev/stdout --stats " +
                           d + "/s.json --perfetto " + d + "/p.json --vcd " + d + "/w.vcd",
                       d + "/err.txt", true);
  ASSERT_GT(b.pid, 0);
  ASSERT_TRUE(read_some(b.out_fd, 1)) << read_text(d + "/err.txt");  // simulating
  ::kill(b.pid, SIGKILL);
  EXPECT_EQ(wait_exit(b.pid, 30), 128 + SIGKILL);
  ::close(b.out_fd);
  EXPECT_TRUE(staging_files(d).empty());
  EXPECT_FALSE(std::ifstream(d + "/s.json").good());  // nothing under a final name
  EXPECT_FALSE(std::ifstream(d + "/p.json").good());
}

// Two runs writing the same outputs at once each write their own staging
// files: both end ok and the file in place is one run's, whole.
TEST(HostileStaging, TwoRunsWritingOneOutputNeverMixTheirFiles) {
  const std::string d = scratch_dir("h-two");
  const std::string cmd = std::string(TPBSIM_BIN) + " run " + kProgram + kLoads + " --stats " + d +
                          "/s.json --perfetto " + d + "/p.json";
  Background a = start(cmd, d + "/ea.txt"), b = start(cmd, d + "/eb.txt");
  EXPECT_EQ(wait_exit(a.pid, 120), 0) << read_text(d + "/ea.txt");
  EXPECT_EQ(wait_exit(b.pid, 120), 0) << read_text(d + "/eb.txt");
  EXPECT_TRUE(whole_json(d + "/s.json"));
  EXPECT_TRUE(whole_json(d + "/p.json"));
  EXPECT_TRUE(staging_files(d).empty());
}

// ------------------------------------------------ write errors, special files

// --dump-timing to a full device is an output error like the others: the
// run still runs and writes the rest; exit 1 naming the file.
TEST(HostileOutputs, DumpTimingToAFullDeviceIsAnOutputErrorAndTheRunGoesOn) {
  const std::string d = scratch_dir("h-full");
  const ToolResult r = run_tool("run " + kProgram + kLoads + " --dump-timing /dev/full --stats " +
                                d + "/s.json --dump psum:0:0:4x4:f32=" + d + "/o.npy");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("/dev/full: cannot write the timing profile (No space left on device)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("not written: /dev/full"), std::string::npos) << r.err;
  EXPECT_EQ(json::parse(read_text(d + "/s.json")).at("status"), "ok");
  EXPECT_TRUE(std::ifstream(d + "/o.npy").good());
  EXPECT_NE(r.out.find("tpbsim run: error"), std::string::npos) << r.out;
}

// Every output to /dev/full: each named, exit 1, no hang.
TEST(HostileOutputs, EveryOutputToAFullDeviceIsNamedAndNothingHangs) {
  const std::string d = scratch_dir("h-full-all");
  for (const std::string opt : {"--stats", "--retire", "--perfetto", "--vcd", "--dump-timing"}) {
    const ToolResult r = run_tool("run " + kProgram + kLoads + " --max-wall-time 60 " + opt +
                                  " /dev/full --stats " + d + "/s2.json");
    if (opt == "--stats") {  // named twice: refused
      EXPECT_EQ(r.exit_code, 1) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << opt << ": " << r.err;
    EXPECT_NE(r.err.find("not written: /dev/full"), std::string::npos) << opt << ": " << r.err;
    EXPECT_TRUE(whole_json(d + "/s2.json")) << opt;
  }
  const ToolResult r = run_tool("run " + kProgram + kLoads + " --dump psum:0:0:4x4:f32=/dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("/dev/full: write failed"), std::string::npos) << r.err;
}

// --cosim-vcd to a full device: the RTL's waves are an output error naming
// the file, the run and the other outputs complete (Verilator's own file
// ended in its fatal-error path, which deadlocked: the run hung for ever).
TEST(HostileOutputs, CosimWavesToAFullDeviceAreAnOutputErrorNotAHang) {
  const std::string w = source_path("traces/workloads/e2m1_g0_mariana");
  const std::string d = scratch_dir("h-cosim");
  double took = 0;
  Background b = start(std::string(TPBSIM_BIN) + " run " + w + "/program.tpb --load sbuf:0:0=" + w +
                           "/input.npy --cosim --cosim-vcd /dev/full --stats " + d + "/s.json",
                       d + "/err.txt");
  const int rc = wait_exit(b.pid, 120, &took);
  const std::string err = read_text(d + "/err.txt");
  if (err.find("no RTL linked") != std::string::npos)
    GTEST_SKIP() << "built without Verilator (TPBSIM_COSIM=OFF)";
  EXPECT_EQ(rc, 1) << err;
  EXPECT_NE(err.find("/dev/full: cannot write the RTL waves (No space left on device)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("not written: /dev/full"), std::string::npos) << err;
  EXPECT_TRUE(whole_json(d + "/s.json"));
}

// An output named to a FIFO: the reader gets the whole file (the check
// before the run opened it and handed the reader 0 bytes, then the real
// write blocked for ever); a FIFO nobody reads is an error, not a hang.
TEST(HostileOutputs, AFifoOutputGetsTheWholeFileAndOneWithoutReaderIsAnError) {
  const std::string d = scratch_dir("h-fifo");
  const std::string fifo = d + "/stats.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  Background reader = start("cat " + fifo, d + "/cat.err", false, d + "/got.json");
  Background run = start(std::string(TPBSIM_BIN) + " run " + kProgram + kLoads + " --stats " + fifo,
                         d + "/err.txt");
  EXPECT_EQ(wait_exit(run.pid, 60), 0) << read_text(d + "/err.txt");
  EXPECT_EQ(wait_exit(reader.pid, 10), 0);
  ASSERT_TRUE(whole_json(d + "/got.json")) << read_text(d + "/got.json");
  EXPECT_EQ(json::parse(read_text(d + "/got.json")).at("status"), "ok");

  double took = 0;
  Background lonely = start(std::string(TPBSIM_BIN) + " run " + kProgram + kLoads + " --stats " +
                                fifo + " --retire " + d + "/r.txt",
                            d + "/err2.txt");
  EXPECT_EQ(wait_exit(lonely.pid, 30, &took), 1);
  EXPECT_LT(took, 25.0);
  EXPECT_NE(read_text(d + "/err2.txt").find(fifo + ": a FIFO that nothing reads"),
            std::string::npos)
      << read_text(d + "/err2.txt");
}

// A broken pipe (EPIPE) and the file-size limit (EFBIG) are write errors
// naming the file; the process is not killed by SIGPIPE / SIGXFSZ and the
// other outputs are written whole.
TEST(HostileOutputs, ABrokenPipeAndTheFileSizeLimitAreWriteErrorsNotDeaths) {
  const std::string d = scratch_dir("h-pipe");
  std::string prog = ".arch mariana\n.engine pool\n";
  for (int i = 0; i < 3000; ++i)
    prog +=
        "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=4 "
        "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) "
        "dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[128, 1, 1])\n";
  const std::string p = put(d, "p.tpb", prog);
  const std::string base =
      std::string(TPBSIM_BIN) + " run " + p + " --stats " + d + "/s.json --retire " + d + "/r.txt";
  const std::string cmd = "bash -c '" + base + " --perfetto /dev/stdout 2>" + d +
                          "/err.txt | head -c1 >/dev/null; exit ${PIPESTATUS[0]}'";
  int st = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(st)) << "killed by a signal";
  EXPECT_EQ(WEXITSTATUS(st), 1) << read_text(d + "/err.txt");
  EXPECT_NE(read_text(d + "/err.txt").find("Broken pipe"), std::string::npos)
      << read_text(d + "/err.txt");
  EXPECT_TRUE(whole_json(d + "/s.json"));
  EXPECT_EQ(retire_count(d + "/r.txt"), 3000u);

  const std::string cmd2 = "bash -c 'ulimit -f 64; " + std::string(TPBSIM_BIN) + " run " + p +
                           " --stats " + d + "/s.json --perfetto " + d + "/big.json 2>" + d +
                           "/err2.txt; exit $?'";
  std::remove((d + "/s.json").c_str());
  st = std::system(cmd2.c_str());
  EXPECT_TRUE(WIFEXITED(st)) << "killed by a signal";
  EXPECT_EQ(WEXITSTATUS(st), 1) << read_text(d + "/err2.txt");
  EXPECT_NE(read_text(d + "/err2.txt").find("File too large"), std::string::npos)
      << read_text(d + "/err2.txt");
  EXPECT_FALSE(std::ifstream(d + "/big.json").good());  // never a half file
  EXPECT_TRUE(whole_json(d + "/s.json"));
  EXPECT_TRUE(staging_files(d).empty());
}

// ------------------------------------------------------------------ signals

// SIGINT or SIGTERM mid-run: the run stops within a second or two, says so,
// exits 130 / 143, writes every output whole up to the stop time (stats
// status "interrupted") and leaves no staging file.
TEST(HostileSignals, AStopSignalMidRunStopsCleanlyWithWholeOutputs) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const std::string d = scratch_dir("h-sig");
    Background b =
        start(std::string(TPBSIM_BIN) + " run " + long_run_args(d) +
                  " --retire /dev/stdout --stats " + d + "/s.json --perfetto " + d +
                  "/p.json --vcd " + d + "/w.vcd --dump sbuf:0:0:1x16:u8=" + d + "/o.npy",
              d + "/err.txt", true);
    ASSERT_GT(b.pid, 0);
    ASSERT_TRUE(read_some(b.out_fd, 1)) << read_text(d + "/err.txt");  // simulating
    ::kill(b.pid, sig);
    double took = 0;
    std::thread drain([&] { read_some(b.out_fd, SIZE_MAX); });
    const int rc = wait_exit(b.pid, 30, &took);
    drain.join();
    ::close(b.out_fd);
    const std::string err = read_text(d + "/err.txt");
    EXPECT_EQ(rc, 128 + sig) << err;
    EXPECT_LT(took, 10.0);
    EXPECT_NE(err.find(sig == SIGINT ? "interrupted (SIGINT)" : "interrupted (SIGTERM)"),
              std::string::npos)
        << err;
    ASSERT_TRUE(whole_json(d + "/s.json")) << err;
    EXPECT_EQ(json::parse(read_text(d + "/s.json")).at("status"), "interrupted");
    EXPECT_TRUE(whole_json(d + "/p.json"));
    EXPECT_NE(read_text(d + "/w.vcd").find("$enddefinitions"), std::string::npos);
    EXPECT_TRUE(std::ifstream(d + "/o.npy").good());
    EXPECT_TRUE(staging_files(d).empty());
  }
}

// A second signal stops at once: exit 130, a line saying so, and no file
// under a final name that is not whole (here: none, or whole ones).
TEST(HostileSignals, ASecondSignalStopsAtOnceLeavingNoPartialFile) {
  const std::string d = scratch_dir("h-sig2");
  Background b =
      start(std::string(TPBSIM_BIN) + " run " + long_run_args(d) +
                " --retire /dev/stdout --stats " + d + "/s.json --perfetto " + d + "/p.json",
            d + "/err.txt", true);
  ASSERT_TRUE(read_some(b.out_fd, 1)) << read_text(d + "/err.txt");
  ::kill(b.pid, SIGINT);
  ::kill(b.pid, SIGINT);
  std::thread drain([&] { read_some(b.out_fd, SIZE_MAX); });
  EXPECT_EQ(wait_exit(b.pid, 30), 130) << read_text(d + "/err.txt");
  drain.join();
  ::close(b.out_fd);
  EXPECT_NE(read_text(d + "/err.txt").find("interrupted (SIGINT)"), std::string::npos);
  for (const char* f : {"/s.json", "/p.json"}) {
    if (std::ifstream(d + f).good()) {
      EXPECT_TRUE(whole_json(d + f)) << f;
    }
  }
  EXPECT_TRUE(staging_files(d).empty());
}

// --------------------------------------------------------------- names

// A 250-byte output name is legal and written (the staging name is cut to
// fit); a path past PATH_MAX and a link loop are named for what they are.
TEST(HostileNames, LongNamesWorkAndOverlongPathsAndLoopsSayWhy) {
  const std::string d = scratch_dir("h-names");
  const std::string name250(245, 's');
  const ToolResult ok = run_tool("run " + kProgram + kLoads + " --stats " + d + "/" + name250 +
                                 ".json --vcd " + d + "/" + std::string(251, 'w') + ".vcd");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(whole_json(d + "/" + name250 + ".json"));
  EXPECT_TRUE(std::ifstream(d + "/" + std::string(251, 'w') + ".vcd").good());

  ASSERT_EQ(::symlink("loop2", (d + "/loop1").c_str()), 0);
  ASSERT_EQ(::symlink("loop1", (d + "/loop2").c_str()), 0);
  const ToolResult loop = run_tool("run " + kProgram + kLoads + " --stats " + d + "/loop1");
  EXPECT_EQ(loop.exit_code, 1);
  EXPECT_NE(loop.err.find("Too many levels of symbolic links"), std::string::npos) << loop.err;
  struct stat st {};
  ASSERT_EQ(::lstat((d + "/loop1").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // not replaced by a file

  std::string deep = d;
  for (int i = 0; i < 20; ++i) deep += "/" + std::string(250, 'd');
  const ToolResult longp = run_tool("run " + kProgram + kLoads + " --stats " + deep + "/s.json");
  EXPECT_EQ(longp.exit_code, 1);
  EXPECT_NE(longp.err.find("File name too long"), std::string::npos) << longp.err.substr(0, 300);
  EXPECT_EQ(longp.err.find("no such file"), std::string::npos);
}

// A name with a newline or a terminal escape is shown escaped in a
// diagnostic, never raw; a VCD of such a name writes no [dumpfile] line
// that would inject lines into the .gtkw.
TEST(HostileNames, ControlCharactersInNamesAreEscapedAndNeverInjected) {
  const std::string d = scratch_dir("h-esc");
  const ToolResult r =
      run_tool("run " + kProgram + kLoads + " --stats '" + d + "/missing/a\nb\x1b[31m.json'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a\\nb\\x1b[31m.json"), std::string::npos) << r.err;

  const ToolResult v =
      run_tool("run " + kProgram + kLoads + " --vcd '" + d + "/w\n[dumpfile] \"injected\"\n.vcd'");
  EXPECT_EQ(v.exit_code, 0) << v.err;
  const std::string gtkw = read_text(d + "/w\n[dumpfile] \"injected\"\n.gtkw");
  ASSERT_FALSE(gtkw.empty());
  EXPECT_EQ(gtkw.find("\n[dumpfile]"), std::string::npos) << gtkw.substr(0, 300);
  EXPECT_EQ(gtkw.find("injected"), std::string::npos);
}

// ---------------------------------------------------------- timing profiles

// A profile's "arch" is a generation in any case or its alias; a key given
// twice is refused naming it (the JSON library kept the last silently).
TEST(HostileTiming, ArchNamesInAnyCaseAndDuplicateKeysAreRefused) {
  const std::string d = scratch_dir("h-timing");
  for (const char* arch : {"MARIANA", "Mariana", "v4"}) {
    const std::string t = put(d, "t.json", std::string(R"({"arch": ")") + arch + R"("})");
    const ToolResult r = run_tool("run " + kProgram + kLoads + " --timing " + t);
    EXPECT_EQ(r.exit_code, 0) << arch << ": " << r.err;
  }
  const std::string other = put(d, "o.json", R"({"arch": "CAYMAN"})");
  const ToolResult o = run_tool("run " + kProgram + kLoads + " --timing " + other);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("profile is for 'CAYMAN' but the run is for 'mariana'"), std::string::npos)
      << o.err;
  const std::string bogus = put(d, "b.json", R"({"arch": "marianna"})");
  const ToolResult b = run_tool("run " + kProgram + kLoads + " --timing " + bogus);
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("'marianna' is not a generation"), std::string::npos) << b.err;

  const std::string dup =
      put(d, "dup.json", R"({"clocks_mhz": {"dve": 600, "pe": 2400, "dve": 2400}})");
  const ToolResult r = run_tool("run " + kProgram + kLoads + " --timing " + dup);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("duplicate key 'clocks_mhz.dve'"), std::string::npos) << r.err;
  const std::string dup_top = put(d, "dup2.json", R"({"quantum_ns": 10, "quantum_ns": 20})");
  EXPECT_NE(run_tool("run " + kProgram + kLoads + " --timing " + dup_top)
                .err.find("duplicate key 'quantum_ns'"),
            std::string::npos);
  // The same key in two objects is not a duplicate.
  const std::string fine =
      put(d, "fine.json", R"({"sbuf": {"latency_cycles": 9}, "psum": {"latency_cycles": 9}})");
  EXPECT_EQ(run_tool("run " + kProgram + kLoads + " --timing " + fine).exit_code, 0);
  // A megabyte value is cut in the message.
  const std::string huge =
      put(d, "huge.json", "{\"quantum_ns\": \"" + std::string(1 << 20, 'x') + "\"}");
  const ToolResult h = run_tool("run " + kProgram + kLoads + " --timing " + huge);
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_LT(h.err.size(), 4000u);
  EXPECT_NE(h.err.find("quantum_ns"), std::string::npos) << h.err.substr(0, 400);
}

}  // namespace
}  // namespace tpb::e2e
