// Hostile inputs, round four (docs/BAD_INPUT.md): a DMA queue of any length
// in linear time and bounded memory, host address space running out in the
// middle of a run, outputs that clash through dangling links, SBUF -> SBUF
// transfers in their queue's order, and the empty values of counting options.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "models/isa/sanitizer.h"
#include "sc_tests/e2e/hostile.h"

namespace tpb::e2e {
namespace {

// A shell command's end, with the peak resident memory of its process
// (wait4's rusage: the tool is exec'd in place of the shell).
struct Measured {
  int exit_code = -1;  // -1: killed after the time allowed
  long max_rss_kib = 0;
  double seconds = 0;
};

Measured run_measured(const std::string& shell_cmd, double timeout_s) {
  Measured m;
  // Under AddressSanitizer freed memory waits in a quarantine (256 MiB)
  // before reuse: off, so the peak is the program's own.
  const std::string env = kAddressSanitizer ? "env "
                                              "ASAN_OPTIONS=\"$ASAN_OPTIONS:quarantine_size_mb=0:"
                                              "thread_local_quarantine_size_kb=0\" "
                                            : "";
  const std::string cmd = "exec " + env + shell_cmd;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (;;) {
    int st = 0;
    rusage ru{};
    const pid_t r = ::wait4(pid, &st, WNOHANG, &ru);
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r == pid) {
      m.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      m.max_rss_kib = ru.ru_maxrss;
      return m;
    }
    if (m.seconds > timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      return m;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A shell script's exit code and output.
ToolResult shell(const std::string& script) {
  const std::string d = scratch_dir("sh");
  put(d, "s.sh", script + "\n");
  const int status =
      std::system(("bash " + d + "/s.sh >" + d + "/out 2>" + d + "/err </dev/null").c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(d + "/out");
  r.err = read_text(d + "/err");
  return r;
}

// A binary program (words only) of `n` copies of one assembled word.
std::string repeat_word(const std::string& dir, const std::string& name, const std::string& line,
                        std::size_t n) {
  const std::string one = put(dir, name + ".tpb", line + "\n");
  const ToolResult a = run_tool("asm " + one + " -o " + dir + "/" + name + "1.bin");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  const std::string word = read_text(dir + "/" + name + "1.bin");
  EXPECT_EQ(word.size(), 64u);
  const std::string path = dir + "/" + name + ".bin";
  std::ofstream f(path, std::ios::binary);
  for (std::size_t i = 0; i < n; ++i) f.write(word.data(), static_cast<std::streamsize>(64));
  return path;
}

// Issue 40 #4: N one-row descriptors on one queue cost time linear in N and
// memory bounded whatever N (1.8 s at 40k, 42 s at 160k, memory growing with
// N, before). 200k descriptors finish in seconds, in no more memory than 20k.
TEST(HostileRound4, ADmaQueueOfAnyLengthRunsInLinearTimeAndBoundedMemory) {
  const std::string d = scratch_dir("dma-long");
  const std::string line =
      ".arch mariana\n.engine dma0\n"
      "dma_copy rows=1 row_bytes=64 src=hbm(0x40, stride=64) dst=sbuf(5, 0x0)";
  const std::string small = repeat_word(d, "small", line, 20000);
  const std::string big = repeat_word(d, "big", line, 200000);
  const std::string tool = std::string(TPBSIM_BIN) + " run -q --arch mariana ";
  const Measured a = run_measured(tool + small + " --stats " + d + "/s.json", 60);
  ASSERT_EQ(a.exit_code, 0);
  const Measured b = run_measured(tool + big + " --stats " + d + "/b.json", 60);
  ASSERT_EQ(b.exit_code, 0) << "took " << b.seconds << " s";
  EXPECT_LT(b.max_rss_kib, a.max_rss_kib + 16 * 1024)
      << "20k descriptors: " << a.max_rss_kib << " KiB, 200k: " << b.max_rss_kib << " KiB";
  // Every transfer retired, and with racecheck too (its registrations are
  // bounded and found without a scan).
  EXPECT_NE(read_text(d + "/b.json").find("\"instructions\": 200000"), std::string::npos);
  const Measured c = run_measured(tool + big + " --racecheck", 60);
  EXPECT_EQ(c.exit_code, 0) << "took " << c.seconds << " s";
  EXPECT_LT(c.max_rss_kib, a.max_rss_kib + 32 * 1024);
}

// Issue 40 #9: outputs that name one file through a link whose target does
// not exist yet (each a chain of links, relative and absolute, in another
// directory) are refused as the same file spelled twice is: nothing
// written, the races not lost under the stats.
TEST(HostileRound4, OutputsClashingThroughADanglingLinkAreRefused) {
  const std::string d = scratch_dir("dangling-clash");
  ::mkdir((d + "/sub").c_str(), 0755);
  const std::string prog = put(d, "p.tpb", ".arch mariana\n.engine pool\n");
  // link.json -> r.jsonl (missing); sub/two -> ../link.json; abs -> d/r2.txt
  ASSERT_EQ(::symlink("r.jsonl", (d + "/link.json").c_str()), 0);
  ASSERT_EQ(::symlink("../link.json", (d + "/sub/two").c_str()), 0);
  ASSERT_EQ(::symlink((d + "/r2.txt").c_str(), (d + "/abs").c_str()), 0);
  const ToolResult r = run_tool("run " + prog + " --racecheck --races " + d + "/r.jsonl --stats " +
                                d + "/link.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--races " + d + "/r.jsonl names the output of --stats too"),
            std::string::npos)
      << r.err;
  const ToolResult chain = run_tool("run " + prog + " --retire " + d + "/sub/two --stats " + d +
                                    "/r.jsonl --vcd " + d + "/abs --perfetto " + d + "/r2.txt");
  EXPECT_EQ(chain.exit_code, 1) << chain.err;
  EXPECT_NE(chain.err.find("--retire " + d + "/sub/two names the output of --stats too"),
            std::string::npos)
      << chain.err;
  EXPECT_NE(chain.err.find("--perfetto " + d + "/r2.txt names the output of --vcd too"),
            std::string::npos)
      << chain.err;
  for (const char* f : {"/r.jsonl", "/r2.txt"})
    EXPECT_FALSE(std::ifstream(d + f).good()) << f << " written";
  // A link to a file of its own is no clash: both written, the link kept.
  const ToolResult ok =
      run_tool("run " + prog + " -q --stats " + d + "/link.json --retire " + d + "/abs");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(read_text(d + "/r.jsonl").find("\"status\""), std::string::npos);
}

// Issue 40 #1: host address space running out in the middle of a run (HBM
// chunks mapped as DMA transfers first touch them, under ulimit -v) ends
// the run with a clear error, exit 1, the outputs written up to the stop;
// never an abort (it was `free(): invalid pointer`, exit 134). A timing-only
// run touches no HBM storage at all: it completes under the same limit.
TEST(HostileRound4, HostAddressSpaceRunningOutMidRunIsAnErrorNotAnAbort) {
  if (kAddressSanitizer) GTEST_SKIP() << "ulimit -v and AddressSanitizer's shadow conflict";
  const std::string d = scratch_dir("hbm-space");
  for (const auto& [limit, n] : {std::pair<long, int>{1000000, 30}, {4000000, 130}}) {
    // n HBM -> HBM copies of 32 MiB each to fresh ranges: 2 n GiB... of
    // address space once mapped, more than the limit allows.
    std::string p = ".arch mariana\n.engine dma0\n";
    for (int i = 0; i < n; ++i)
      p += "dma_copy rows=128 row_bytes=262144 src=hbm(0x0, stride=262144) dst=hbm(" +
           std::to_string(static_cast<std::uint64_t>(i + 1) << 25) + ", stride=262144)\n";
    const std::string prog = put(d, "p" + std::to_string(n) + ".tpb", p);
    const std::string cmd =
        "ulimit -v " + std::to_string(limit) + "; exec " + std::string(TPBSIM_BIN) + " run " + prog;
    const ToolResult full = shell(cmd + " --stats " + d + "/s.json --retire " + d + "/r.txt");
    EXPECT_EQ(full.exit_code, 1) << limit << ": " << full.err;
    EXPECT_NE(full.err.find("tpbsim run: error: dma0 instruction "), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("HBM: no host address space left for 2 MiB of HBM at offset 0x"),
              std::string::npos)
        << full.err;
    EXPECT_EQ(full.out.find("ok"), std::string::npos) << full.out;
    // The outputs, whole up to the stop: the stats say where it stopped.
    const std::string stats = read_text(d + "/s.json");
    EXPECT_NE(stats.find("no host address space left"), std::string::npos) << stats.substr(0, 400);
    EXPECT_GT(retire_count(d + "/r.txt"), 0u);
    EXPECT_LT(retire_count(d + "/r.txt"), static_cast<std::size_t>(n));
    const ToolResult timing = shell(cmd + " --timing-only");
    EXPECT_EQ(timing.exit_code, 0) << limit << ": " << timing.err;
    EXPECT_NE(timing.out.find(std::to_string(n) + " instructions"), std::string::npos)
        << timing.out;
  }
}

// Issue 40 (minor): `--threads ""`, `--cores ""`, `--lnc ""` (any setting
// given an empty value) are errors, not the default.
TEST(HostileRound4, AnEmptyValueOfASettingIsAnError) {
  const std::string d = scratch_dir("empty-values");
  const std::string prog = put(d, "p.tpb", ".arch mariana\n.engine pool\n");
  for (const char* opt : {"threads", "cores", "lnc", "arch", "mx-emax", "trace-engines",
                          "trace-window", "max-sim-time", "max-wall-time"}) {
    const ToolResult r = run_tool("run " + prog + " --" + opt + " ''");
    EXPECT_EQ(r.exit_code, 1) << opt << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(std::string("--") + opt +
                         " '': an empty value (leave the option out for its default)"),
              std::string::npos)
        << r.err;
  }
}

// Three 64 KiB loads on dma4 and a sim-time limit before the first lands.
std::string three_loads(const std::string& d) {
  std::string p = ".arch mariana\n.engine dma4\n";
  for (int i = 0; i < 3; ++i)
    p += "dma_copy rows=1 row_bytes=65536 src=hbm(0x0, stride=65536) dst=sbuf(64, 0x0)\n";
  return put(d, "three.tpb", p);
}

// Issue 40 (minor): a watchdog's "pending" list names a DMA queue's
// transfers in flight, not its next-to-issue index ("dma4 instruction 3" of
// 3 descriptors).
TEST(HostileRound4, APendingListNamesTheTransfersInFlight) {
  const std::string d = scratch_dir("pending-dma");
  const ToolResult r = run_tool("run " + three_loads(d) + " --max-sim-time 2us");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("pending: dma4 transfers 0-2 not completed (dma_copy)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("instruction 3"), std::string::npos) << r.err;
}

// Issue 40 (minor): a device whose core 0 reaches --max-sim-time while core
// 1 waits for ever ends as one core would with those two engines: a
// watchdog (exit 4), every trace and the stats cut at the limit (it was a
// deadlock, exit 3, its traces running past the limit).
TEST(HostileRound4, ADeviceStoppedByAWatchdogWhileACoreWaitsIsAWatchdog) {
  const std::string d = scratch_dir("device-watchdog");
  std::string longer = ".arch mariana\n.engine dma0\n";
  for (int i = 0; i < 50; ++i)
    longer += "dma_copy rows=1 row_bytes=65536 src=hbm(0x0, stride=65536) dst=sbuf(64, 0x0)\n";
  const std::string waits =
      ".engine dma1\ndma_copy rows=1 row_bytes=64 src=hbm(0x0, stride=64) "
      "dst=sbuf(0, 0x0) wait=ge(sem3, 1)\n";
  const std::string p0 = put(d, "p0.tpb", longer), p1 = put(d, "p1.tpb", ".arch mariana\n" + waits);
  const std::string one = put(d, "one.tpb", longer + waits);
  const ToolResult single = run_tool("run " + one + " --max-sim-time 20us");
  EXPECT_EQ(single.exit_code, 4) << single.err;
  const ToolResult r = run_tool("run --cores 2 " + p0 + " " + p1 + " --max-sim-time 20us --stats " +
                                d + "/s.json --retire " + d + "/r.txt");
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("simulated 20000.000 ns"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("core1: simulated time limit 20000000 ps reached; pending: dma1 "
                       "instruction 0 waits for sem[3]"),
            std::string::npos)
      << r.err;
  EXPECT_NE(read_text(d + "/s.json").find("\"simulated_ps\": 20000000,"), std::string::npos);
  for (const RetireLine& l : read_retire_lines(d + "/r.txt")) EXPECT_LE(l.end_ps, 20000000u);
}

// Issue 40 (minor): a raw descriptor with an update-core byte and no update
// mode updates nothing: the run faults naming the predicate, as `check`
// does (it was refused as updating `core1:sem0`).
TEST(HostileRound4, AnUpdateCoreByteWithoutAnUpdateIsInvalidNotAnUpdate) {
  const std::string d = scratch_dir("update-core");
  const std::string one = put(d, "u.tpb",
                              ".arch mariana\n.engine dma0\n"
                              "dma_copy rows=1 row_bytes=64 src=hbm(0x40, stride=64) "
                              "dst=sbuf(5, 0x0) update=inc(core1:sem0)\n");
  ASSERT_EQ(run_tool("asm " + one + " -o " + d + "/u.bin").exit_code, 0);
  std::string w = read_text(d + "/u.bin");
  ASSERT_EQ(w.size(), 64u);
  w[6] = 0;  // EVENTS update_mode: none (byte 20 still says core1)
  std::ofstream(d + "/n.bin", std::ios::binary) << w;
  const ToolResult r = run_tool("run " + d + "/n.bin");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("failed dma_valid_update_core"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("core1:sem0"), std::string::npos) << r.err;
  expect_tool("check " + d + "/n.bin", 2, "INVALID dma_valid_update_core");
}

// Issue 40 (minor): programs of different generations on one device are
// refused (all ran on program 0's); --arch runs them all on one.
TEST(HostileRound4, ProgramsOfDifferentGenerationsAreRefused) {
  const std::string d = scratch_dir("two-archs");
  const std::string a = put(d, "a.tpb", ".arch mariana\n.engine pool\n");
  const std::string b = put(d, "b.tpb", ".arch cayman\n.engine pool\n");
  const std::string none = put(d, "n.tpb", ".engine pool\n");
  const ToolResult r = run_tool("run --cores 2 " + a + " " + b);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(b + " says .arch cayman and " + a +
                       " .arch mariana: the cores of a device are of one generation"),
            std::string::npos)
      << r.err;
  expect_tool("run --cores 2 " + a + " " + b + " --arch cayman", 0, "arch cayman");
  expect_tool("run --cores 2 " + none + " " + b, 0, "arch cayman");
}

// Issue 40 (minor): `tpbsim check --cores N` judges the HBM of a device of
// N cores (a descriptor valid on two cores was INVALID).
TEST(HostileRound4, CheckJudgesTheHbmOfTheDevice) {
  const std::string d = scratch_dir("check-cores");
  // 20 GiB: past one mariana core's 18 GiB, inside two cores' 36 GiB.
  const std::string p = put(d, "p.tpb",
                            ".arch mariana\n.engine dma0\n"
                            "dma_copy rows=1 row_bytes=64 src=hbm(0x500000000, stride=64) "
                            "dst=sbuf(0, 0x0)\n");
  expect_tool("check " + p, 2, "INVALID dma_hbm_in_capacity");
  expect_tool("check " + p + " --cores 2", 0, "1 ok, 0 invalid");
  expect_tool("check " + p + " --cores 33", 1, "--cores '33' is not a number of cores (1 to 32)");
  expect_tool("check " + p + " --cores x", 1, "--cores 'x' is not a number of cores");
}

// Issue 40 (minor): a device of 32 cores runs in 4 GiB of address space
// (SPEC §15; SystemC's "(E518) stack setup failed" before); a limit too low
// for the coroutine stacks is said plainly, exit 1.
TEST(HostileRound4, ThirtyTwoCoresFitInFourGiB) {
  if (kAddressSanitizer) GTEST_SKIP() << "ulimit -v and AddressSanitizer's shadow conflict";
  const std::string d = scratch_dir("cores32");
  const std::string p = put(d, "p.tpb",
                            ".arch mariana\n.engine dma0\n"
                            "dma_copy rows=1 row_bytes=64 src=hbm(0x40, stride=64) "
                            "dst=sbuf(5, 0x0)\n");
  const std::string run = std::string(TPBSIM_BIN) + " run --cores 32 " + p;
  const ToolResult ok = shell("ulimit -v 4000000; " + run);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("1 instructions"), std::string::npos) << ok.out;
  const ToolResult low = shell("ulimit -v 2500000; " + run);
  EXPECT_EQ(low.exit_code, 1) << low.err;
  EXPECT_NE(low.err.find("no host address space left"), std::string::npos) << low.err;
  EXPECT_EQ(low.err.find("E518"), std::string::npos) << low.err;
  EXPECT_EQ(low.err.find("bad_alloc"), std::string::npos) << low.err;
}

// Issue 40 (minor): a clash is said once (a program given for two cores is
// one input), and a spec is echoed as given (`core1:core1:sbuf:...` was
// shown stripped of its first prefix).
TEST(HostileRound4, AClashIsSaidOnceAndASpecAsGiven) {
  const std::string d = scratch_dir("clash-once");
  const std::string p = put(d, "p.tpb", ".arch mariana\n.engine pool\n");
  const ToolResult twice = run_tool("run --cores 2 " + p + " " + p + " --stats " + p);
  EXPECT_EQ(twice.exit_code, 1);
  const std::string line = "--stats " + p + " names the input of PROGRAM";
  const std::size_t at = twice.err.find(line);
  ASSERT_NE(at, std::string::npos) << twice.err;
  EXPECT_EQ(twice.err.find(line, at + 1), std::string::npos) << twice.err;
  const ToolResult spec =
      run_tool("run --cores 2 " + p + " --dump core1:core1:sbuf:0:0:1x4:u8=" + d + "/a.npy");
  EXPECT_EQ(spec.exit_code, 1);
  EXPECT_NE(spec.err.find("'core1:core1:sbuf:0:0:1x4:u8=" + d + "/a.npy'"), std::string::npos)
      << spec.err;
}

// Issue 40 (minor): under --lnc 2, `coreK:` names logical core K (the same
// half of K's pair): docs/ASM.md's hand-off example runs on two logical cores
// (it deadlocked: core1 was physical core 1, the program's own other half).
TEST(HostileRound4, TheHandOffExampleRunsOnLogicalCores) {
  const std::string d = scratch_dir("lnc-handoff");
  const std::string p0 = put(d, "p0.tpb",
                             ".arch mariana\n.engine dma1\n"
                             "dma_copy rows=16 row_bytes=256 src=sbuf(0, 0x0) dst=hbm(0x40000, "
                             "stride=256) update=inc(core1:sem5)\n");
  const std::string p1 = put(d, "p1.tpb",
                             ".arch mariana\n.engine dma3\n"
                             "dma_copy rows=16 row_bytes=256 src=hbm(0x40000, stride=256) "
                             "dst=sbuf(32, 0x100) wait=ge(sem5, 1)\n");
  // 16 rows of 256 bytes, row r all r + 1, on both halves of logical core 0.
  std::string npy = "{'descr': '|u1', 'fortran_order': False, 'shape': (16, 256), }";
  npy += std::string(64 - (10 + npy.size() + 1) % 64, ' ') + "\n";
  npy = std::string("\x93NUMPY\x01\x00", 8) + char(npy.size() & 0xFF) + char(npy.size() >> 8) + npy;
  for (int r = 0; r < 16; ++r) npy += std::string(256, static_cast<char>(r + 1));
  put(d, "in.npy", npy);
  const ToolResult r =
      run_tool("run --cores 4 --lnc 2 " + p0 + " " + p1 + " --load core0:sbuf:0:0=" + d +
               "/in.npy --load core1:sbuf:0:0=" + d + "/in.npy --dump " +
               "core2:sbuf:32:0x100:16x256:u8=" + d + "/c2.npy --dump " +
               "core3:sbuf:32:0x100:16x256:u8=" + d + "/c3.npy");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* f : {"/c2.npy", "/c3.npy"}) {
    const std::string got = read_text(d + f);
    ASSERT_GE(got.size(), 4096u) << f;
    EXPECT_EQ(got.substr(got.size() - 4096), npy.substr(npy.size() - 4096)) << f;
  }
  // Physical cores as before without --lnc: core1 is core 1.
  expect_tool("run --cores 2 " + p0 + " " + p1, 0, "2 instructions");
}

}  // namespace
}  // namespace tpb::e2e
