// libtpbsim_dpi's core (tpbsim_dpi.h, tpb_dpi_core_*): the run API's core
// behind a chandle, called through the shared library's C ABI as a
// testbench would. Programs run one after another with memories and time
// carried over; what the core computes is checked against the independent
// TensorDequantize reference (sc_tests/sc/test_platform_ref.h); faults,
// deadlocks, bad programs and bad arguments come back as statuses with
// messages. Each test is its own process (one core per process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "platform/dpi/tpbsim_dpi.h"
#include "platform/io/npy.h"
#include "sc_tests/sc/test_platform_ref.h"
#include "sc_tests/scratch_dir.h"

namespace {

using namespace tpb;

std::string dpi_error() { return tpb_dpi_last_error(); }

// Writes `words` to partition p from byte offset off, 64 bytes a call.
void write_words(void* core, unsigned p, unsigned off, const std::vector<std::uint32_t>& words) {
  for (std::size_t i = 0; i < words.size(); i += 16) {
    unsigned chunk[16] = {};
    const std::size_t n = std::min<std::size_t>(16, words.size() - i);
    for (std::size_t k = 0; k < n; ++k) chunk[k] = words[i + k];
    ASSERT_EQ(tpb_dpi_core_write(core, "sbuf", int(p), int(off + 4 * i), chunk, int(4 * n)),
              TPB_DPI_OK)
        << dpi_error();
  }
}

std::vector<std::uint32_t> read_words(void* core, unsigned p, unsigned off, std::size_t n) {
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    EXPECT_EQ(tpb_dpi_core_read32(core, "sbuf", int(p), int(off + 4 * i), &v), TPB_DPI_OK)
        << dpi_error();
    out[i] = v;
  }
  return out;
}

std::string dequant_program(const char* fmt, unsigned group, unsigned channels, unsigned sp,
                            unsigned src_words, unsigned dp, unsigned dst_words) {
  return fmt::format(
      ".engine pool\ntensor_dequantize fmt={} group={} channels={} "
      "src=t3d(sbuf({}, 0x0), num=[{}, 1, 1]) dst=t3d(sbuf({}, 0x4000), num=[{}, 1, 1])\n",
      fmt, group, channels, sp, src_words, dp, dst_words);
}

TEST(DpiCore, RunsProgramAfterProgramWithMemoryAndTimeCarriedOver) {
  void* core = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(core, nullptr) << dpi_error();
  EXPECT_STREQ(tpb_dpi_core_status(core), "none");
  std::mt19937 rng(9);
  // Run 1: E2M1 MX on partitions 3..5 -> 40..42.
  std::vector<std::vector<std::uint32_t>> src(3, std::vector<std::uint32_t>(20));
  for (auto& ch : src)
    for (std::size_t i = 0; i < ch.size(); ++i)
      ch[i] = i % 5 == 0 ? 0x7F7E8081u - unsigned(rng() % 8) : static_cast<std::uint32_t>(rng());
  for (unsigned c = 0; c < 3; ++c) write_words(core, 3 + c, 0, src[c]);
  ASSERT_EQ(tpb_dpi_core_run(core, dequant_program("e2m1_to_e5m2", 8, 3, 3, 20, 40, 32).c_str()),
            TPB_DPI_OK)
      << dpi_error();
  EXPECT_STREQ(tpb_dpi_core_status(core), "ok");
  EXPECT_STREQ(tpb_dpi_core_fault(core), "");
  EXPECT_EQ(tpb_dpi_core_instructions(core), 1);
  const long long t1 = tpb_dpi_core_time_ps(core);
  EXPECT_GT(t1, 0);
  for (unsigned c = 0; c < 3; ++c) {
    const auto want = platref::dequant_ref(1, 8, src[c]);
    const auto got = read_words(core, 40 + c, 0x4000, want.size());
    for (std::size_t w = 0; w < want.size(); ++w)
      EXPECT_TRUE(platref::fp8_word_equal(false, got[w], want[w]))
          << "channel " << c << " word " << w;
  }
  // Run 2: INT4 group 0 of partition 100; run 1's output is still there and
  // the time goes on from run 1's.
  std::vector<std::uint32_t> s2(16);
  for (auto& w : s2) w = static_cast<std::uint32_t>(rng());
  write_words(core, 100, 0, s2);
  ASSERT_EQ(tpb_dpi_core_run(core, dequant_program("int4_to_e5m2", 0, 1, 100, 16, 101, 32).c_str()),
            TPB_DPI_OK)
      << dpi_error();
  EXPECT_GT(tpb_dpi_core_time_ps(core), t1);
  const auto want2 = platref::dequant_ref(2, 0, s2);
  EXPECT_EQ(read_words(core, 101, 0x4000, want2.size()), want2);
  const auto want1 = platref::dequant_ref(1, 8, src[0]);
  const auto again = read_words(core, 40, 0x4000, want1.size());
  for (std::size_t w = 0; w < want1.size(); ++w)
    EXPECT_TRUE(platref::fp8_word_equal(false, again[w], want1[w])) << "word " << w;
  EXPECT_EQ(tpb_dpi_core_free(core), TPB_DPI_OK);
}

// SPEC §14 through the C ABI: with the check on, a run that races completes
// and returns TPB_DPI_ERACE, the race's message at hand; ordered, TPB_DPI_OK.
TEST(DpiCore, TheRaceCheckReportsARaceAsEraceWithItsMessage) {
  void* core = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(core, nullptr) << dpi_error();
  auto racy = [](const std::string& update) {
    return ".engine dma0\ndma_copy rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(0, "
           "0x0)" +
           update + "\n" + dequant_program("e2m1_to_e5m2", 8, 32, 0, 80, 0, 128);
  };
  const std::string plain = racy("");
  // Off by default: the same program runs ok.
  EXPECT_EQ(tpb_dpi_core_run(core, plain.c_str()), TPB_DPI_OK) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_races(core), 0);
  ASSERT_EQ(tpb_dpi_core_racecheck(core, 1), TPB_DPI_OK);
  EXPECT_EQ(tpb_dpi_core_run(core, plain.c_str()), TPB_DPI_ERACE);
  EXPECT_STREQ(tpb_dpi_core_status(core), "ok");
  EXPECT_EQ(tpb_dpi_core_races(core), 1);
  const std::string msg = tpb_dpi_core_race(core, 0);
  // The sides in the order they ran (issue 40): the pool read before the
  // load's latency had passed.
  EXPECT_EQ(msg,
            "no semaphore orders dma0[0] dma_copy (program:2, DMA engines 0-3) after pool[0] "
            "tensor_dequantize (program:4): WAR on sbuf partitions 0-31 bytes 0x0-0x13f");
  EXPECT_EQ(dpi_error(), "race: " + msg);
  EXPECT_STREQ(tpb_dpi_core_race(core, 1), "");
  EXPECT_STREQ(tpb_dpi_core_race(core, -1), "");
  // Ordered by a semaphore: ok (the wait goes on the dequant's line).
  std::string ordered = racy(" update=inc(sem1)");
  ordered.insert(ordered.rfind('\n'), " wait=ge(sem1, 1)");
  EXPECT_EQ(tpb_dpi_core_run(core, ordered.c_str()), TPB_DPI_OK) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_races(core), 0);
  EXPECT_EQ(tpb_dpi_core_racecheck(nullptr, 1), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_core_races(nullptr), -1);
  EXPECT_EQ(tpb_dpi_core_free(core), TPB_DPI_OK);
}

TEST(DpiCore, AFaultAndADeadlockComeBackAsEfaultAndTheCoreGoesOn) {
  void* core = tpb_dpi_core_new(nullptr, nullptr);  // mariana
  ASSERT_NE(core, nullptr) << dpi_error();
  // group 4: invalid (traces/examples/invalid.tpb).
  EXPECT_EQ(tpb_dpi_core_run(core, dequant_program("e2m1_to_e5m2", 4, 32, 0, 16, 0, 32).c_str()),
            TPB_DPI_EFAULT);
  EXPECT_STREQ(tpb_dpi_core_status(core), "fault");
  const std::string fault = tpb_dpi_core_fault(core);
  EXPECT_NE(fault.find("pool instruction 0"), std::string::npos) << fault;
  EXPECT_NE(fault.find("has_valid_group_size"), std::string::npos) << fault;
  EXPECT_EQ(dpi_error(), "fault: " + fault);
  EXPECT_EQ(tpb_dpi_core_instructions(core), 0);
  // A wait nobody satisfies.
  EXPECT_EQ(tpb_dpi_core_run(core, (".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 channels=1 "
                                    "wait=eq(sem5, 1) src=t3d(sbuf(0, 0x0), num=[1, 1, 1]) "
                                    "dst=t3d(sbuf(0, 0x100), num=[2, 1, 1])\n")),
            TPB_DPI_EFAULT);
  EXPECT_STREQ(tpb_dpi_core_status(core), "deadlock");
  EXPECT_NE(std::string(tpb_dpi_core_fault(core)).find("sem"), std::string::npos)
      << tpb_dpi_core_fault(core);
  // A watchdog: a run stopped at 1 ns of simulated time.
  ASSERT_EQ(tpb_dpi_core_limits(core, 1000, 0), TPB_DPI_OK);
  write_words(core, 9, 0, std::vector<std::uint32_t>(4096, 0x11111111u));
  EXPECT_EQ(tpb_dpi_core_run(core, dequant_program("e2m1_to_e5m2", 0, 1, 9, 4096, 9, 8192).c_str()),
            TPB_DPI_EFAULT);
  EXPECT_STREQ(tpb_dpi_core_status(core), "watchdog");
  ASSERT_EQ(tpb_dpi_core_limits(core, 0, 0), TPB_DPI_OK);
  EXPECT_EQ(tpb_dpi_core_limits(core, -1, 0), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "max_sim_ps: -1 ps must be more than 0 (0: off)");
  // The limits of --max-sim-time and --max-wall-time (1 ps .. 2^62 ps, (0, 1e9] s):
  // a wall limit past 1e9 s, an infinite or NaN one, is refused, not a run that
  // stops at once.
  EXPECT_EQ(tpb_dpi_core_limits(core, (1ll << 62) + 1, 0), TPB_DPI_EARG);
  EXPECT_NE(dpi_error().find("past the longest simulated time, 2^62 ps"), std::string::npos)
      << dpi_error();
  EXPECT_EQ(tpb_dpi_core_limits(core, 1ll << 62, 1e9), TPB_DPI_OK) << dpi_error();
  for (const double s : {1e10, 1e300, -1.0, std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN(), 1e9 * (1 + 1e-15)}) {
    EXPECT_EQ(tpb_dpi_core_limits(core, 0, s), TPB_DPI_EARG) << s;
    EXPECT_NE(dpi_error().find("max_wall_seconds: "), std::string::npos) << dpi_error();
    EXPECT_NE(dpi_error().find("seconds is not in (0, 1e9]"), std::string::npos) << dpi_error();
  }
  // A refused limit leaves the limits as they were: every run still runs.
  ASSERT_EQ(tpb_dpi_core_limits(core, 0, 0), TPB_DPI_OK);
  // The core still runs a good program.
  write_words(core, 7, 0, {0x01234567u});
  ASSERT_EQ(tpb_dpi_core_run(core, dequant_program("e2m1_to_e5m2", 0, 1, 7, 1, 7, 2).c_str()),
            TPB_DPI_OK)
      << dpi_error();
  EXPECT_EQ(read_words(core, 7, 0x4000, 2), platref::dequant_ref(1, 0, {0x01234567u}));
  EXPECT_EQ(tpb_dpi_core_free(core), TPB_DPI_OK);
}

// A cayman core dequantizes the NF4 word at partition p, offset 0, into
// 0x4000: the reference's FP8 E4M3 values.
void expect_nf4_dequant_on_cayman(void* core, unsigned p, std::uint32_t word) {
  ASSERT_EQ(
      tpb_dpi_core_run(
          core, (".arch cayman\n" + dequant_program("nf4_to_e4m3", 0, 1, p, 1, p, 2)).c_str()),
      TPB_DPI_OK)
      << dpi_error();
  const auto want = platref::dequant_ref(3, 0, {word});
  const auto got = read_words(core, p, 0x4000, 2);
  for (int w = 0; w < 2; ++w) EXPECT_TRUE(platref::fp8_word_equal(true, got[w], want[w]));
}

TEST(DpiCore, SeveralCoresAtOnceEachWithItsOwnMemoryAndTime) {
  void* a = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(a, nullptr) << dpi_error();
  void* b = tpb_dpi_core_new("cayman", "");
  ASSERT_NE(b, nullptr) << dpi_error();
  ASSERT_NE(a, b);
  write_words(a, 7, 0, {0x01234567u});
  write_words(b, 7, 0, {0x89ABCDEFu});
  // a runs; b's memory and time are untouched by it.
  ASSERT_EQ(tpb_dpi_core_run(a, dequant_program("e2m1_to_e5m2", 0, 1, 7, 1, 7, 2).c_str()),
            TPB_DPI_OK)
      << dpi_error();
  EXPECT_EQ(read_words(a, 7, 0x4000, 2), platref::dequant_ref(1, 0, {0x01234567u}));
  EXPECT_GT(tpb_dpi_core_time_ps(a), 0);
  EXPECT_EQ(tpb_dpi_core_time_ps(b), 0);
  EXPECT_EQ(read_words(b, 7, 0, 1), std::vector<std::uint32_t>{0x89ABCDEFu});
  EXPECT_EQ(read_words(b, 7, 0x4000, 2), (std::vector<std::uint32_t>{0, 0}));
  EXPECT_EQ(tpb_dpi_core_instructions(a), 1);
  EXPECT_EQ(tpb_dpi_core_instructions(b), 0);
  // Freeing one leaves the other running.
  EXPECT_EQ(tpb_dpi_core_free(a), TPB_DPI_OK);
  expect_nf4_dequant_on_cayman(b, 7, 0x89ABCDEFu);
  EXPECT_EQ(tpb_dpi_core_free(b), TPB_DPI_OK);
}

TEST(DpiCore, AFreedCoreIsNoLongerLiveAndANewOneWorks) {
  void* a = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(a, nullptr) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_free(a), TPB_DPI_OK);
  EXPECT_EQ(tpb_dpi_core_free(a), TPB_DPI_EARG);  // freed
  EXPECT_NE(dpi_error().find("not a live core"), std::string::npos) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_write32(a, "sbuf", 0, 0, 1), TPB_DPI_EARG);
  void* b = tpb_dpi_core_new("cayman", "");
  ASSERT_NE(b, nullptr) << dpi_error();
  write_words(b, 0, 0, {0xFEDCBA98u});
  expect_nf4_dequant_on_cayman(b, 0, 0xFEDCBA98u);
  // A program for another generation is refused, nothing run.
  EXPECT_EQ(tpb_dpi_core_run(b, ".arch mariana\n"), TPB_DPI_EARG);
  EXPECT_NE(dpi_error().find("the program is for mariana (.arch) but the core is cayman"),
            std::string::npos)
      << dpi_error();
  EXPECT_EQ(tpb_dpi_core_free(b), TPB_DPI_OK);
}

TEST(DpiCore, HbmIsReachedByByteOffsetAsPythonReachesIt) {
  void* core = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(core, nullptr) << dpi_error();
  const unsigned words[4] = {0x03020100u, 0x07060504u, 0x0B0A0908u, 0x0F0E0D0Cu};
  ASSERT_EQ(tpb_dpi_core_write(core, "hbm", 0, 0x1000, words, 16), TPB_DPI_OK) << dpi_error();
  unsigned v = 0;
  ASSERT_EQ(tpb_dpi_core_read32(core, "hbm", 0, 0x1004, &v), TPB_DPI_OK) << dpi_error();
  EXPECT_EQ(v, 0x07060504u);
  // The model sees those bytes: a DMA copies them into SBUF partition 5.
  ASSERT_EQ(tpb_dpi_core_run(core,
                             ".engine dma0\ndma_copy rows=1 row_bytes=16 "
                             "src=hbm(0x1000, stride=16) dst=sbuf(5, 0x200)\n"),
            TPB_DPI_OK)
      << dpi_error();
  EXPECT_EQ(read_words(core, 5, 0x200, 4), std::vector<std::uint32_t>(words, words + 4));
  // Bytes past the HBM's capacity (18 GiB on mariana: past an int offset) are
  // refused by the check Python uses; an int offset cannot reach them, so
  // the last bytes below 2^31 are read back instead.
  ASSERT_EQ(tpb_dpi_core_write32(core, "hbm", 0, 0x7FFFFFFC, 0xA5A5A5A5u), TPB_DPI_OK)
      << dpi_error();
  ASSERT_EQ(tpb_dpi_core_read32(core, "hbm", 0, 0x7FFFFFFC, &v), TPB_DPI_OK) << dpi_error();
  EXPECT_EQ(v, 0xA5A5A5A5u);
  EXPECT_EQ(tpb_dpi_core_free(core), TPB_DPI_OK);
}

TEST(DpiCore, BadArgumentsAndProgramsAreErrorsWithMessages) {
  EXPECT_EQ(tpb_dpi_core_new("nc9", ""), nullptr);
  EXPECT_NE(dpi_error().find("'nc9' is not one of"), std::string::npos) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_new("mariana", "/nonexistent/timing.json"), nullptr);
  EXPECT_NE(dpi_error().find("/nonexistent/timing.json"), std::string::npos) << dpi_error();
  void* core = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(core, nullptr) << dpi_error();
  unsigned v = 0, w[16] = {};
  EXPECT_EQ(tpb_dpi_core_write32(core, "hbm", 1, 0, 1), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "hbm has no partitions: partition must be 0, not 1");
  EXPECT_EQ(tpb_dpi_core_write32(core, "hbm", 0, -4, 1), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "hbm offset -4 is negative");
  EXPECT_EQ(tpb_dpi_core_write32(core, "sram", 0, 0, 1), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "memory 'sram' is not one of sbuf, psum, hbm");
  // The messages and ranges of the CLI and Python (platform/run/host_args.h).
  EXPECT_EQ(tpb_dpi_core_write32(core, "sbuf", 128, 0, 1), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "partition 128 does not exist (0..127)");
  EXPECT_EQ(tpb_dpi_core_write32(core, "sbuf", -1, 0, 1), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "partition -1 does not exist (0..127)");
  EXPECT_EQ(tpb_dpi_core_write32(core, "sbuf", 0, -4, 1), TPB_DPI_EARG);
  EXPECT_EQ(dpi_error(), "offset -4 is outside every partition (0..262143)");
  EXPECT_EQ(tpb_dpi_core_read(core, "sbuf", 0, 0, w, 65), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_core_write32(core, "sbuf", 0, 256 * 1024 - 2, 1), TPB_DPI_EARG);
  EXPECT_NE(dpi_error().find("sbuf"), std::string::npos) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_read32(core, "psum", 0, 16 * 1024, &v), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_core_read32(core, "psum", 0, 16 * 1024 - 4, &v), TPB_DPI_OK) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_run(core, ".engine pool\ntensor_dequantize fmt=bogus\n"), TPB_DPI_EARG);
  EXPECT_NE(dpi_error().find("program:2:"), std::string::npos) << dpi_error();
  EXPECT_EQ(tpb_dpi_core_run_file(core, "/nonexistent/p.tpb"), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_core_load_npy(core, "sbuf:0:0"), TPB_DPI_EARG);
  EXPECT_FALSE(dpi_error().empty());
  EXPECT_EQ(tpb_dpi_core_run(nullptr, ""), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_core_time_ps(nullptr), -1);
  EXPECT_STREQ(tpb_dpi_core_status(nullptr), "none");
  EXPECT_EQ(tpb_dpi_core_free(core), TPB_DPI_OK);
}

TEST(DpiCore, NpyLoadAndDumpAsTpbsimRunDoes) {
  void* core = tpb_dpi_core_new("mariana", "");
  ASSERT_NE(core, nullptr) << dpi_error();
  const std::string dir = testutil::make_scratch_dir("dpi-core");
  io::NpyArray a;
  a.dtype = io::NpyDtype::U32;
  a.shape = {2, 4};
  const std::uint32_t vals[8] = {1, 2, 3, 4, 0xdeadbeef, 6, 7, 8};
  a.data.resize(32);
  std::memcpy(a.data.data(), vals, 32);
  io::write_npy(dir + "/in.npy", a);
  ASSERT_EQ(tpb_dpi_core_load_npy(core, ("sbuf:10:0x100=" + dir + "/in.npy").c_str()), TPB_DPI_OK)
      << dpi_error();
  EXPECT_EQ(read_words(core, 11, 0x100, 4), (std::vector<std::uint32_t>{0xdeadbeef, 6, 7, 8}));
  ASSERT_EQ(tpb_dpi_core_dump_npy(core, ("sbuf:10:0x100:2x4:u32=" + dir + "/out.npy").c_str()),
            TPB_DPI_OK)
      << dpi_error();
  EXPECT_EQ(io::read_npy(dir + "/out.npy").data, a.data);
  EXPECT_EQ(tpb_dpi_core_dump_npy(core, ("sbuf:127:0:2x4:u32=" + dir + "/x.npy").c_str()),
            TPB_DPI_EARG);  // two rows from partition 127
  EXPECT_FALSE(dpi_error().empty());
  EXPECT_EQ(tpb_dpi_core_free(core), TPB_DPI_OK);
}

}  // namespace
