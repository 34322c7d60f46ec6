// Hostile inputs at the HBM and DMA edges (docs/BAD_INPUT.md "HBM and DMA"):
// an HBM load larger than any SBUF, a profile with a 1 TiB HBM whose far end a
// descriptor reaches, HBM offsets past 2^63, and `tpbsim run --help` naming
// what a program can hold.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "sc_tests/e2e/hostile.h"

namespace tpb::e2e {
namespace {

// A .npy of `bytes` u1 bytes (1-D), all `fill`, written without NumPy.
void write_u8_npy(const std::string& path, std::uint64_t bytes, char fill) {
  std::string header =
      "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(bytes) + ",), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  f << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF) << char(header.size() >> 8)
    << header;
  const std::string chunk(1 << 20, fill);
  for (std::uint64_t left = bytes; left;) {
    const std::uint64_t n = left < chunk.size() ? left : chunk.size();
    f.write(chunk.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
}

// An HBM load is bounded by the HBM from its offset, not by the largest SBUF
// (256 MiB): 300 MB load and dump back; past the HBM is refused naming it.
TEST(HostileHbm, AnHbmLoadLargerThanAnySbufIsTaken) {
  const std::string d = scratch_dir("hbm-big");
  const std::uint64_t n = 300'000'000;
  write_u8_npy(d + "/big.npy", n, '\x5c');
  const std::string prog =
      put(d, "p.tpb",
          ".arch mariana\n.engine dma0\n"
          "dma_copy rows=1 row_bytes=64 src=hbm(0x11e1a2c0) dst=sbuf(0, 0x0)\n");
  const ToolResult r = run_tool("run " + prog + " -q --load hbm:0x100=" + d +
                                "/big.npy --dump sbuf:0:0:1x64:u8=" + d + "/s.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string s = read_text(d + "/s.npy");
  ASSERT_GE(s.size(), 64u);
  EXPECT_EQ(s.substr(s.size() - 64), std::string(64, '\x5c'));  // HBM 0x11e1a2c0 is inside it
  // A profile of 256 MiB of HBM: the same file is larger than the HBM from 0x100.
  put(d, "t.json", R"({"hbm": {"bytes": 268435456}})");
  const ToolResult past =
      run_tool("run " + prog + " -q --timing " + d + "/t.json --load hbm:0x100=" + d + "/big.npy");
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_NE(past.err.find("more than the HBM holds from offset 0x100 (capacity 268435456 bytes)"),
            std::string::npos)
      << past.err;
  EXPECT_EQ(past.err.find("more than any memory of the core holds"), std::string::npos);
}

// A profile with hbm.bytes 2^40: --load / --dump and a DMA descriptor at
// 20 GiB all work (the static check judges the configured capacity, not the
// generation's 18 GiB); past 2^40 the descriptor is invalid, named.
TEST(HostileHbm, AConfiguredHbmIsTheCapacityOfEveryCheck) {
  const std::string d = scratch_dir("hbm-tib");
  put(d, "t.json", R"({"hbm": {"bytes": 1099511627776}})");
  write_u8_npy(d + "/a.npy", 4096, '\x3a');
  const std::string at = "0x500000000";  // 20 GiB
  const std::string prog = put(d, "p.tpb",
                               ".arch mariana\n.engine dma4\n"
                               "dma_copy rows=4 row_bytes=1024 src=hbm(" +
                                   at +
                                   ", stride=1024) dst=sbuf(0, 0x0) update=inc(sem8)\n"
                                   ".engine dma9\n"
                                   "dma_copy rows=4 row_bytes=1024 src=sbuf(0, 0x0) dst=hbm("
                                   "0xff00000000, stride=1024) wait=ge(sem8, 1)\n");
  const ToolResult r =
      run_tool("run " + prog + " -q --timing " + d + "/t.json --load hbm:" + at + "=" + d +
               "/a.npy --dump hbm:0xff00000000:1x4096:u8=" + d + "/o.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string o = read_text(d + "/o.npy");
  ASSERT_GE(o.size(), 4096u);
  EXPECT_EQ(o.substr(o.size() - 4096), std::string(4096, '\x3a'));
  // Without the profile (18 GiB) the same descriptor is invalid by name.
  expect_tool("run " + prog + " -q", 2, "failed dma_hbm_in_capacity(src)");
  // Past 2^40 with the profile: invalid, named, before a byte moves.
  const std::string far =
      put(d, "far.tpb",
          ".arch mariana\n.engine dma0\n"
          "dma_copy rows=1 row_bytes=64 src=hbm(0xffffffffff0) dst=sbuf(0, 0x0)\n");
  expect_tool("run " + far + " -q --timing " + d + "/t.json", 2, "failed dma_hbm_in_capacity(src)");
}

// hbm(OFFSET) is a u64 (docs/ASM.md): 0x8000000000000000 assembles, and is
// judged by the capacity predicate, not refused as too large.
TEST(HostileHbm, HbmOffsetsPast2To63AreU64s) {
  const std::string d = scratch_dir("hbm-u64");
  const std::string prog =
      put(d, "p.tpb",
          ".arch mariana\n.engine dma0\n"
          "dma_copy rows=1 row_bytes=64 src=hbm(0x8000000000000000) dst=sbuf(0, 0x0)\n");
  expect_tool("check " + prog, 2, "INVALID dma_hbm_in_capacity(src)");
  EXPECT_EQ(run_tool("asm " + prog + " -o " + d + "/p.bin").exit_code, 0);
  expect_tool("disasm " + d + "/p.bin", 0, "src=hbm(0x8000000000000000)");
  const std::string over =
      put(d, "o.tpb",
          ".engine dma0\ndma_copy rows=1 row_bytes=64 src=hbm(0x10000000000000000) "
          "dst=sbuf(0, 0x0)\n");
  expect_tool("check " + over, 1, "number '0x10000000000000000' is too large");
}

// `tpbsim run --help` says what a program and the specs can name.
TEST(HostileHbm, RunHelpNamesHbmSpecsAndDmaQueues) {
  const ToolResult r = expect_tool("run --help", 0, "hbm:OFFSET=FILE.npy");
  EXPECT_NE(r.out.find("hbm:OFFSET:ROWSxCOLS:DTYPE=FILE.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dma0..dma15"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tpb::e2e
