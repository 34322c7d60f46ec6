// `tpbsim run --cosim` of the DVE QuantizeMX (docs/COSIM.md): the Verilated
// block datapath (platform/cosim/rtl/tpb_quantize_mx.sv) quantizes every 8 x 4
// block and the model checks its scale and words. Random data of every input
// dtype x output format x emax mode (NaN / Inf blocks, FP32 and FP16
// subnormals, blocks whose scale clamps), every channel count, against the
// independent reference of sc_tests/sc/test_dve_quantize_mx_ref.h; a mutant
// RTL (subnormal inputs read as zero) caught at exactly the first wrong block
// in time, computed here from that reference with the mutant's inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "platform/io/npy.h"
#include "sc_tests/cosim/cosim_test_util.h"
#include "sc_tests/sc/test_dve_quantize_mx_ref.h"

namespace tpb {
namespace {

using cosimtest::read_text;
using cosimtest::run;
using cosimtest::ToolRun;
using nlohmann::json;

struct QmxCase {
  isa::Dtype in = isa::Dtype::Fp32;
  bool e4m3 = true, alt = false;
  unsigned channels = 32, sp = 0, dp = 0, pidx = 0;
  std::uint32_t cols = 8;
  std::vector<std::vector<std::uint32_t>> raw;  // [channel][element]
  std::string dir;
  unsigned rows() const { return channels / 8; }
  // Block row b's scale partition (SPEC §4).
  unsigned scale_partition(unsigned b) const { return dp + 32 * (b / 4) + pidx + b % 4; }
};

const char* dtype_text(isa::Dtype d) {
  return d == isa::Dtype::Bf16 ? "bf16" : d == isa::Dtype::Fp16 ? "fp16" : "fp32";
}

QmxCase make_case(isa::Dtype in, bool e4m3, bool alt, unsigned channels, unsigned sp, unsigned dp,
                  unsigned pidx, std::uint32_t cols, std::uint32_t seed) {
  QmxCase k;
  k.in = in, k.e4m3 = e4m3, k.alt = alt, k.channels = channels, k.sp = sp, k.dp = dp;
  k.pidx = pidx, k.cols = cols;
  k.raw.assign(channels, std::vector<std::uint32_t>(4 * cols));
  for (unsigned c = 0; c < channels; ++c)
    for (unsigned e = 0; e < 4 * cols; ++e) k.raw[c][e] = dveref::gen_elem(in, seed, c, e, true);
  return k;
}

// program.tpb and input.npy in a fresh directory: data at 0x8000 and scales
// at 0x10000 of the destination partitions.
void write_case(QmxCase& k, const std::string& name) {
  k.dir = cosimtest::scratch(name);
  std::ofstream(k.dir + "/program.tpb") << fmt::format(
      ".arch mariana\n.engine dve\nquantize_mx channels={} in_dtype={} out_dtype={} "
      "src=t3d(sbuf({}, 0x0), step=[1, 0, 0], num=[{}, 1, 1]) "
      "dst=mx1d(data=sbuf({}, 0x8000), scale=sbuf({}, 0x10000), num={}, step=1, scale_pidx={})\n",
      k.channels, dtype_text(k.in), k.e4m3 ? "fp8_e4m3" : "fp8_e5m2", k.sp, 4 * k.cols, k.dp, k.dp,
      k.cols, k.pidx);
  io::NpyArray a;
  const unsigned es = k.in == isa::Dtype::Fp32 ? 4 : 2;
  a.dtype = es == 4 ? io::NpyDtype::U32 : io::NpyDtype::U16;
  a.shape = {k.channels, 4 * k.cols};
  a.data.resize(std::size_t(k.channels) * 4 * k.cols * es);
  for (unsigned c = 0; c < k.channels; ++c)
    for (unsigned e = 0; e < 4 * k.cols; ++e)
      std::memcpy(a.data.data() + (std::size_t(c) * 4 * k.cols + e) * es, &k.raw[c][e], es);
  io::write_npy(k.dir + "/input.npy", a);
}

std::string case_args(const QmxCase& k, const std::string& tag) {
  return fmt::format(
      "program.tpb --load sbuf:{}:0=input.npy --dump sbuf:{}:0x8000:{}x{}:u32={}.data.npy "
      "--dump sbuf:{}:0x10000:{}x{}:u8={}.scales.npy --retire {}.retire --stats {}.json -q{}",
      k.sp, k.dp, k.channels, k.cols, tag, k.dp, 128 - k.dp, k.cols, tag, tag, tag,
      k.alt ? " --mx-emax neuron-alt" : "");
}

json qmx_of(const std::string& stats) { return cosimtest::cosim_block(stats, "quantize_mx"); }

// Runs a case model-only and co-simulated; both against the reference.
void check_case(QmxCase& k, const std::string& name) {
  write_case(k, name);
  const ToolRun rm = run(TPBSIM_BIN, case_args(k, "model"), k.dir);
  const ToolRun rc = run(TPBSIM_BIN, case_args(k, "cosim") + " --cosim", k.dir);
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  ASSERT_EQ(rc.exit_code, 0) << rc.err;
  // The RTL is never the bottleneck: the retire trace is the model's.
  EXPECT_EQ(read_text(k.dir + "/cosim.retire"), read_text(k.dir + "/model.retire"));
  const json q = qmx_of(k.dir + "/cosim.json");
  ASSERT_TRUE(q.is_object()) << read_text(k.dir + "/cosim.json");
  EXPECT_EQ(q.at("dut"), "tpb_quantize_mx");
  EXPECT_EQ(q.at("instructions"), 1);
  EXPECT_EQ(q.at("mismatches"), 0);
  const std::uint64_t blocks = std::uint64_t{k.rows()} * k.cols;
  EXPECT_EQ(q.at("blocks_compared").get<std::uint64_t>(), blocks);
  EXPECT_EQ(q.at("words_compared").get<std::uint64_t>(), 8 * blocks);
  EXPECT_EQ(q.at("source_words").get<std::uint64_t>(), 32 * blocks);
  EXPECT_EQ(q.at("stretched_ps"), 0);
  EXPECT_GE(q.at("max_latency_cycles").get<std::uint64_t>(), 1u);
  // Every byte the DVE wrote was compared: the x4 words and one scale per block.
  EXPECT_EQ(cosimtest::engine_stat(k.dir + "/cosim.json", "dve", "bytes_written"),
            4 * 8 * blocks + blocks);
  // The dumps are the reference's.
  const dveref::QmxResult want = dveref::quantize_ref(k.in, k.e4m3, k.alt, k.raw);
  const io::NpyArray data = io::read_npy(k.dir + "/cosim.data.npy");
  const io::NpyArray sc = io::read_npy(k.dir + "/cosim.scales.npy");
  unsigned bad = 0;
  for (unsigned c = 0; c < k.channels; ++c)
    for (std::uint32_t j = 0; j < k.cols; ++j) {
      std::uint32_t got;
      std::memcpy(&got, data.data.data() + (std::size_t(c) * k.cols + j) * 4, 4);
      if (got != want.words[c][j] && ++bad <= 5)
        ADD_FAILURE() << "partition " << k.dp + c << " word " << j << std::hex << ": 0x" << got
                      << ", want 0x" << want.words[c][j];
    }
  for (unsigned b = 0; b < k.rows(); ++b)
    for (std::uint32_t j = 0; j < k.cols; ++j) {
      const std::uint8_t got = sc.data[std::size_t(k.scale_partition(b) - k.dp) * k.cols + j];
      if (got != want.scales[b][j] && ++bad <= 5)
        ADD_FAILURE() << "block row " << b << " column " << j << ": scale " << int(got) << ", want "
                      << int(want.scales[b][j]);
    }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(read_text(k.dir + "/cosim.data.npy"), read_text(k.dir + "/model.data.npy"));
}

struct QmxCombo {
  isa::Dtype in;
  bool e4m3, alt;
};
class CosimQuantizeMx : public ::testing::TestWithParam<QmxCombo> {};

TEST_P(CosimQuantizeMx, AllChannels) {
  const QmxCombo p = GetParam();
  QmxCase k = make_case(p.in, p.e4m3, p.alt, 128, 0, 0, 0, 24,
                        100 + unsigned(p.in) * 4 + p.e4m3 * 2 + p.alt);
  check_case(k, "qmx-all");
}

TEST_P(CosimQuantizeMx, ThirtyTwoChannelsOfAnotherQuadrantWithScaleRowsBelow) {
  const QmxCombo p = GetParam();
  QmxCase k = make_case(p.in, p.e4m3, p.alt, 32, 17, 96, 28, 9,
                        200 + unsigned(p.in) * 4 + p.e4m3 * 2 + p.alt);
  check_case(k, "qmx-q3");
}

TEST_P(CosimQuantizeMx, NinetySixChannels) {
  const QmxCombo p = GetParam();
  QmxCase k = make_case(p.in, p.e4m3, p.alt, 96, 32, 32, 3, 5,
                        300 + unsigned(p.in) * 4 + p.e4m3 * 2 + p.alt);
  check_case(k, "qmx-96");
}

INSTANTIATE_TEST_SUITE_P(
    DtypesFormatsEmax, CosimQuantizeMx,
    ::testing::Values(
        QmxCombo{isa::Dtype::Fp32, true, false}, QmxCombo{isa::Dtype::Fp32, false, false},
        QmxCombo{isa::Dtype::Fp32, true, true}, QmxCombo{isa::Dtype::Fp32, false, true},
        QmxCombo{isa::Dtype::Bf16, true, false}, QmxCombo{isa::Dtype::Bf16, false, true},
        QmxCombo{isa::Dtype::Fp16, true, false}, QmxCombo{isa::Dtype::Fp16, false, false},
        QmxCombo{isa::Dtype::Fp16, true, true}, QmxCombo{isa::Dtype::Fp16, false, true}),
    [](const ::testing::TestParamInfo<QmxCombo>& i) {
      return fmt::format("{}_{}_{}", dtype_text(i.param.in), i.param.e4m3 ? "e4m3" : "e5m2",
                         i.param.alt ? "neuron_alt" : "ocp");
    });

// Every FP32 biased exponent as the top one of a block column (0 =
// subnormals and zero, 255 = Inf and NaN): every scale a block can have
// (0, clamped, to 254 - emax) and 0xFF, in both formats.
TEST(CosimQuantizeMxSweep, EveryExponentAndEveryScale) {
  for (bool e4m3 : {true, false}) {
    QmxCase k;
    k.in = isa::Dtype::Fp32, k.e4m3 = e4m3, k.channels = 32, k.cols = 256;
    k.raw.assign(32, std::vector<std::uint32_t>(4 * 256));
    std::mt19937 rng(e4m3 ? 1 : 2);
    for (unsigned c = 0; c < 32; ++c)
      for (unsigned e = 0; e < 4 * 256; ++e) {
        const unsigned col = e / 4;
        // Block (row, col): the top exponent `col` in one element, the rest below.
        const bool top = (c % 8) * 4 + e % 4 == (col * 7 + c / 8) % 32;
        const unsigned ex = top ? col : rng() % (col + 1);
        k.raw[c][e] = (rng() & 0x80000000u) | ex << 23 | (rng() & 0x7FFFFFu);
        if (ex == 255 && !top) k.raw[c][e] &= ~(0xFFu << 23);
      }
    check_case(k, e4m3 ? "qmx-sweep4" : "qmx-sweep5");
  }
}

// ---------------------------------------------------------------------------
// The mutant: FP32 / BF16 subnormal inputs read as zero (TPB_MUTANT_DAZ).

// The first block in time whose output differs from the mutant's: lanes
// (block rows) run in lockstep a column per clock, so the lowest column, then
// the lowest block row; then its first differing word.
std::string first_wrong(const QmxCase& k) {
  auto daz = k.raw;
  for (auto& ch : daz)
    for (auto& v : ch) {
      const bool fp32 = k.in == isa::Dtype::Fp32;
      const std::uint32_t exp = fp32 ? (v >> 23) & 0xFF : (v >> 7) & 0xFF;
      if (k.in != isa::Dtype::Fp16 && exp == 0) v &= fp32 ? 0x80000000u : 0x8000u;
    }
  const dveref::QmxResult want = dveref::quantize_ref(k.in, k.e4m3, k.alt, k.raw);
  const dveref::QmxResult got = dveref::quantize_ref(k.in, k.e4m3, k.alt, daz);
  for (std::uint32_t j = 0; j < k.cols; ++j)
    for (unsigned b = 0; b < k.rows(); ++b) {
      if (want.scales[b][j] != got.scales[b][j])
        return fmt::format(
            "block row {} (partitions {}..{}), column {}: scale: expected 0x{:02x}, "
            "got 0x{:02x}",
            b, k.dp + 8 * b, k.dp + 8 * b + 7, j, want.scales[b][j], got.scales[b][j]);
      for (unsigned r = 0; r < 8; ++r)
        if (want.words[8 * b + r][j] != got.words[8 * b + r][j])
          return fmt::format(
              "block row {} (partitions {}..{}), column {}: partition {}, x4 word {}: expected "
              "0x{:08x}, got 0x{:08x}",
              b, k.dp + 8 * b, k.dp + 8 * b + 7, j, k.dp + 8 * b + r, j, want.words[8 * b + r][j],
              got.words[8 * b + r][j]);
    }
  return "";
}

TEST(CosimQuantizeMxMutant, SubnormalsAsZeroIsCaughtAtTheFirstWrongBlock) {
  for (isa::Dtype in : {isa::Dtype::Fp32, isa::Dtype::Bf16}) {
    QmxCase k = make_case(in, true, false, 64, 64, 64, 0, 16, 41 + unsigned(in));
    write_case(k, "qmx-daz");
    const std::string want = first_wrong(k);
    ASSERT_FALSE(want.empty()) << "the data never exercises the mutation";
    const ToolRun r = run(TPBSIM_RTL_QMX_MUTANT_DAZ, case_args(k, "cosim") + " --cosim", k.dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("co-simulation mismatch at "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" ps, " + want + " (the block: "), std::string::npos)
        << "want: " << want << "\n"
        << r.err;
    EXPECT_NE(r.err.find("tpb_quantize_mx+mutant_daz"), std::string::npos) << r.err;
    const json q = qmx_of(k.dir + "/cosim.json");
    EXPECT_GE(q.at("mismatches").get<std::uint64_t>(), 1u);
    EXPECT_EQ(json::parse(read_text(k.dir + "/cosim.json")).at("status"), "fault");
    EXPECT_EQ(read_text(k.dir + "/cosim.retire"), "");  // the faulted instruction never retired
  }
}

TEST(CosimQuantizeMxMutant, PassesFp16WhoseSubnormalsItDoesNotTouch) {
  QmxCase k = make_case(isa::Dtype::Fp16, false, false, 32, 0, 0, 0, 16, 43);
  write_case(k, "qmx-daz16");
  const ToolRun r = run(TPBSIM_RTL_QMX_MUTANT_DAZ, case_args(k, "cosim") + " --cosim", k.dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(qmx_of(k.dir + "/cosim.json").at("mismatches"), 0);
}

// ---------------------------------------------------------------------------
// Both block kinds in one run, their waves in one VCD, the summary lines.

TEST(CosimQuantizeMxCli, PipelineCosimulatesBothKindsIntoOneVcd) {
  const std::string dir = std::string(TPB_SOURCE_DIR) + "/traces/workloads/pipeline";
  const std::string out = cosimtest::scratch("pipeline");
  std::string args;
  std::ifstream in(dir + "/cmd.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t eq = line.rfind('=');
    if (line.rfind("--dump", 0) == 0 && eq != std::string::npos)
      line = line.substr(0, eq + 1) + out + "/" + line.substr(eq + 1);
    args += line + " ";
  }
  const ToolRun r = run(
      TPBSIM_BIN, args + "--cosim --cosim-vcd " + out + "/rtl.vcd --stats " + out + "/s.json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tpbsim run: cosim tpb_dequant at 1200 MHz: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tpbsim run: cosim tpb_quantize_mx at 1200 MHz: "), std::string::npos)
      << r.out;
  const json c = cosimtest::cosim_section(out + "/s.json");
  const json dq = c.at("blocks").at("dequant"), q = c.at("blocks").at("quantize_mx");
  EXPECT_GT(q.at("blocks_compared").get<std::uint64_t>(), 0u);
  EXPECT_GT(dq.at("words_compared").get<std::uint64_t>(), 0u);
  EXPECT_EQ(
      c.at("words_compared").get<std::uint64_t>(),
      dq.at("words_compared").get<std::uint64_t>() + q.at("words_compared").get<std::uint64_t>());
  EXPECT_EQ(c.at("mismatches"), 0);
  const std::string vcd = read_text(out + "/rtl.vcd");
  EXPECT_NE(vcd.find("$scope module cosim.dequant.lane0"), std::string::npos);
  EXPECT_NE(vcd.find("$scope module cosim.quantize_mx.block0"), std::string::npos);
  EXPECT_NE(vcd.find("s1_scale"), std::string::npos);  // the QuantizeMX RTL's own signals
}

TEST(CosimQuantizeMxCli, SummaryLineCountsTheBlocks) {
  QmxCase k = make_case(isa::Dtype::Bf16, true, false, 64, 0, 0, 0, 6, 44);
  write_case(k, "qmx-summary");
  const ToolRun r = run(TPBSIM_BIN, "program.tpb --load sbuf:0:0=input.npy --cosim", k.dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cosim tpb_quantize_mx at 1200 MHz: 48 blocks (384 words) compared, 0 "
                       "mismatches"),
            std::string::npos)
      << r.out;
  // The dequant lanes ran nothing: no line for them.
  EXPECT_EQ(r.out.find("cosim tpb_dequant"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tpb
