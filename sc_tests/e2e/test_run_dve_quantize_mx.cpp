// End-to-end: `tpbsim run` of QuantizeMX programs as a user writes them, with
// --load of the source tensor and --dump of the packed data and the scale
// rows, compared with bytes computed here by the independent reference
// (sc_tests/sc/test_dve_quantize_mx_ref.h); and a two-engine deadlock.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "sc_tests/e2e/tool_runner.h"
#include "sc_tests/sc/test_dve_quantize_mx_ref.h"

namespace {

using tpb::e2e::read_text;
using tpb::e2e::run_tool;
using tpb::e2e::scratch_dir;
using namespace tpb::dveref;

// .npy v1.0 writer / reader for 2-D C-order arrays (written here, not the
// project's platform/io).
void write_npy(const std::string& path, const char* descr, std::size_t rows, std::size_t cols,
               const void* data, std::size_t elem) {
  std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                  std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t n = static_cast<std::uint16_t>(h.size());
  out.write(reinterpret_cast<const char*>(&n), 2);
  out << h;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(rows * cols * elem));
}

// The payload of a .npy file whose header names `descr` and shape (rows, cols).
std::string npy_payload(const std::string& path, const std::string& descr, std::size_t rows,
                        std::size_t cols) {
  const std::string f = read_text(path);
  if (f.size() < 10 || f.compare(0, 6, "\x93NUMPY") != 0) return "not a .npy file";
  const std::size_t hlen = static_cast<unsigned char>(f[8]) | static_cast<unsigned char>(f[9]) << 8;
  const std::string h = f.substr(10, hlen);
  if (h.find("'" + descr + "'") == std::string::npos) return "descr: " + h;
  if (h.find("(" + std::to_string(rows) + ", " + std::to_string(cols) + ")") == std::string::npos)
    return "shape: " + h;
  return f.substr(10 + hlen);
}

std::string write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(RunDveQuantizeMx, Fp32ToE5M2With64ChannelsDumpsDataAndScales) {
  const std::string dir = scratch_dir("qmx");
  // 64 partitions x 64 FP32 (as u32 bits), with NaN / Inf blocks.
  const unsigned kCh = 64, kElems = 64, kCols = 16;
  std::vector<std::vector<std::uint32_t>> raw(kCh);
  std::vector<std::uint32_t> flat;
  for (unsigned c = 0; c < kCh; ++c)
    for (unsigned k = 0; k < kElems; ++k) {
      raw[c].push_back(gen_elem(tpb::isa::Dtype::Fp32, 2024, c, k, true));
      flat.push_back(raw[c].back());
    }
  write_npy(dir + "/in.npy", "<u4", kCh, kElems, flat.data(), 4);
  const std::vector<std::uint8_t> guard(37 * 16, 0xA5);
  write_npy(dir + "/guard.npy", "|u1", 37, 16, guard.data(), 1);
  write_text(dir + "/prog.tpb",
             ".arch mariana\n"
             ".engine dve\n"
             "quantize_mx channels=64 in_dtype=fp32 out_dtype=fp8_e5m2 \\\n"
             "    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) \\\n"
             "    dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16, step=1, "
             "scale_pidx=1)\n");
  const auto r = run_tool("run " + dir + "/prog.tpb --load sbuf:0:0=" + dir +
                          "/in.npy --load sbuf:0:0x2000=" + dir +
                          "/guard.npy --dump sbuf:0:0x1000:64x16:u32=" + dir +
                          "/data.npy --dump sbuf:0:0x2000:37x16:u8=" + dir +
                          "/scales.npy --retire " + dir + "/retire.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;

  const QmxResult q = quantize_ref(tpb::isa::Dtype::Fp32, false, false, raw);
  unsigned nan_blocks = 0;
  for (const auto& row : q.scales)
    for (std::uint8_t s : row) nan_blocks += s == 0xFF;
  EXPECT_GT(nan_blocks, 0u);  // the NaN / Inf path is exercised

  const std::string data = npy_payload(dir + "/data.npy", "<u4", kCh, kCols);
  ASSERT_EQ(data.size(), kCh * kCols * 4u) << data;
  for (unsigned c = 0; c < kCh; ++c) {
    std::vector<std::uint32_t> got(kCols);
    std::memcpy(got.data(), data.data() + c * kCols * 4, kCols * 4);
    EXPECT_EQ(got, q.words[c]) << "partition " << c;
  }
  // Block row b -> partition 0 + 32*(b/4) + 1 + b%4: rows 1..4 and 33..36.
  const std::string sc = npy_payload(dir + "/scales.npy", "|u1", 37, 16);
  ASSERT_EQ(sc.size(), 37u * 16) << sc;
  std::vector<std::vector<std::uint8_t>> want(37, std::vector<std::uint8_t>(16, 0xA5));
  for (unsigned b = 0; b < 8; ++b) want[32 * (b / 4) + 1 + b % 4] = q.scales[b];
  for (unsigned p = 0; p < 37; ++p)
    EXPECT_EQ(std::vector<std::uint8_t>(sc.begin() + p * 16, sc.begin() + p * 16 + 16), want[p])
        << "scale partition " << p;
  const std::string retire = read_text(dir + "/retire.txt");
  EXPECT_NE(retire.find("dve"), std::string::npos) << retire;
  EXPECT_NE(retire.find("0xe3"), std::string::npos) << retire;
}

TEST(RunDveQuantizeMx, Bf16ToE4M3FromAQuadrant32ProgramWithExplicitOcpEmax) {
  const std::string dir = scratch_dir("qmx-bf16");
  const unsigned kCh = 32, kElems = 32, kCols = 8;
  std::vector<std::vector<std::uint32_t>> raw(kCh);
  std::vector<std::uint16_t> flat;
  for (unsigned c = 0; c < kCh; ++c)
    for (unsigned k = 0; k < kElems; ++k) {
      raw[c].push_back(gen_elem(tpb::isa::Dtype::Bf16, 99, c, k, false));
      flat.push_back(static_cast<std::uint16_t>(raw[c].back()));
    }
  write_npy(dir + "/in.npy", "<u2", kCh, kElems, flat.data(), 2);
  write_text(dir + "/prog.tpb",
             ".arch maverick\n"
             ".engine dve\n"
             "quantize_mx channels=32 in_dtype=bf16 out_dtype=fp8_e4m3 \\\n"
             "    src=t3d(sbuf(40, 0x100), step=[1, 0, 0], num=[32, 1, 1]) \\\n"
             "    dst=mx1d(data=sbuf(32, 0x1000), scale=sbuf(32, 0x2000), num=8, step=1, "
             "scale_pidx=20)\n");
  const auto r = run_tool("run " + dir + "/prog.tpb --mx-emax ocp --load sbuf:40:0x100=" + dir +
                          "/in.npy --dump sbuf:32:0x1000:32x8:u32=" + dir +
                          "/data.npy --dump sbuf:52:0x2000:4x8:u8=" + dir + "/scales.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const QmxResult q = quantize_ref(tpb::isa::Dtype::Bf16, true, false, raw);
  const std::string data = npy_payload(dir + "/data.npy", "<u4", kCh, kCols);
  ASSERT_EQ(data.size(), kCh * kCols * 4u) << data;
  for (unsigned c = 0; c < kCh; ++c) {
    std::vector<std::uint32_t> got(kCols);
    std::memcpy(got.data(), data.data() + c * kCols * 4, kCols * 4);
    EXPECT_EQ(got, q.words[c]) << "partition " << c;
  }
  const std::string sc = npy_payload(dir + "/scales.npy", "|u1", 4, 8);
  ASSERT_EQ(sc.size(), 32u) << sc;
  for (unsigned b = 0; b < 4; ++b)
    EXPECT_EQ(std::vector<std::uint8_t>(sc.begin() + b * 8, sc.begin() + b * 8 + 8), q.scales[b])
        << "block row " << b;
}

TEST(RunDveQuantizeMx, PoolAndDveWaitingOnEachOtherExitWithDeadlock) {
  const std::string dir = scratch_dir("qmx-deadlock");
  write_text(dir + "/prog.tpb",
             ".arch mariana\n"
             ".engine pool\n"
             "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \\\n"
             "    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[16, 1, 1]) \\\n"
             "    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[32, 1, 1]) \\\n"
             "    wait=ge(sem2, 1) update=inc(sem1)\n"
             ".engine dve\n"
             "quantize_mx channels=32 in_dtype=fp16 out_dtype=fp8_e4m3 \\\n"
             "    src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[64, 1, 1]) \\\n"
             "    dst=mx1d(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num=16, step=1) \\\n"
             "    wait=ge(sem1, 1) update=inc(sem2)\n");
  const auto r = run_tool("run " + dir + "/prog.tpb");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("deadlock"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pool instruction 0 waits for sem[2] >= 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dve instruction 0 waits for sem[1] >= 1"), std::string::npos) << r.err;
}
