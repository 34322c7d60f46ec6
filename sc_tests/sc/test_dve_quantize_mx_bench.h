// A QuantizeMX bench over TpbCore: cases loaded into per-case windows of every
// partition, guard bytes around every destination, the expected window images
// built by the independent reference of test_dve_quantize_mx_ref.h.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "platform/core/tpb_core.h"
#include "sc_tests/sc/test_dve_quantize_mx_ref.h"

namespace tpb::dveref {

// ---- the bench --------------------------------------------------------------

// Windows per instruction index k (byte offsets in every partition).
inline constexpr std::uint32_t kSrcWin = 0x4000, kDataWin = 0x2000, kScaleWin = 0x400;
inline std::uint32_t src_base(std::size_t k) { return std::uint32_t(k) * kSrcWin; }
inline std::uint32_t data_base(std::size_t k) { return 0x20000 + std::uint32_t(k) * kDataWin; }
inline std::uint32_t scale_base(std::size_t k) { return 0x30000 + std::uint32_t(k) * kScaleWin; }

struct QmxCase {
  isa::Dtype in = isa::Dtype::Fp32;
  bool e4m3 = true;
  unsigned channels = 32;
  unsigned src_part = 0;
  isa::Tensor3D src{};  // start = offset inside the src window
  unsigned dst_part = 0;
  std::uint32_t data_off = 0, scale_off = 0;  // inside the data / scale windows
  std::uint16_t num = 0;
  std::int8_t step = 1;
  std::uint8_t pidx = 0;
  bool specials = false;
  std::uint32_t seed = 1;
};

// Loads the sources of every case into `core` (each case k in its windows)
// and guard bytes into every data / scale window, and returns the instruction
// words; `expect` receives the full expected data and scale window images,
// [case][partition] -> bytes.
struct Expected {
  std::vector<std::vector<std::vector<std::uint8_t>>> data, scale;
};

inline std::vector<isa::RawInst> load_cases(platform::TpbCore& core,
                                            const std::vector<QmxCase>& cases, bool neuron_alt,
                                            Expected& expect) {
  std::vector<isa::RawInst> prog;
  expect.data.assign(cases.size(),
                     std::vector<std::vector<std::uint8_t>>(
                         isa::kNumPartitions, std::vector<std::uint8_t>(kDataWin, 0xA5)));
  expect.scale.assign(cases.size(),
                      std::vector<std::vector<std::uint8_t>>(
                          isa::kNumPartitions, std::vector<std::uint8_t>(kScaleWin, 0x5A)));
  for (unsigned p = 0; p < isa::kNumPartitions; ++p)
    for (std::size_t k = 0; k < cases.size(); ++k) {
      core.load_memory(isa::sbuf_addr(p, data_base(k)), expect.data[k][p].data(), kDataWin);
      core.load_memory(isa::sbuf_addr(p, scale_base(k)), expect.scale[k][p].data(), kScaleWin);
    }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const QmxCase& c = cases[k];
    const unsigned es = elem_size(c.in);
    const auto offs = elem_offsets(c.src, es);
    std::vector<std::vector<std::uint32_t>> raw(c.channels);
    for (unsigned ch = 0; ch < c.channels; ++ch) {
      // Junk everywhere, then the designed elements at their addresses; the
      // reference reads back through the pattern (aliasing: last write wins).
      std::vector<std::uint8_t> win(kSrcWin);
      Rng junk{0xABCDull + k * 1000 + ch};
      for (auto& b : win) b = static_cast<std::uint8_t>(junk.next());
      for (std::size_t i = 0; i < offs.size(); ++i) {
        const std::uint32_t v = gen_elem(c.in, c.seed, ch, unsigned(i), c.specials);
        std::memcpy(win.data() + c.src.start_addr.raw + offs[i], &v, es);
      }
      for (std::size_t i = 0; i < offs.size(); ++i) {
        std::uint32_t v = 0;
        std::memcpy(&v, win.data() + c.src.start_addr.raw + offs[i], es);
        raw[ch].push_back(v);
      }
      core.load_memory(isa::sbuf_addr(c.src_part + ch, src_base(k)), win.data(), kSrcWin);
    }
    const QmxResult r = quantize_ref(c.in, c.e4m3, neuron_alt, raw);
    for (unsigned ch = 0; ch < c.channels; ++ch)
      for (std::size_t j = 0; j < r.words[ch].size(); ++j)
        std::memcpy(
            expect.data[k][c.dst_part + ch].data() + c.data_off + std::int64_t(j) * c.step * 4,
            &r.words[ch][j], 4);
    for (std::size_t b = 0; b < r.scales.size(); ++b) {
      const unsigned p = c.dst_part + 32 * unsigned(b / 4) + c.pidx + unsigned(b % 4);
      std::memcpy(expect.scale[k][p].data() + c.scale_off, r.scales[b].data(), r.scales[b].size());
    }
    isa::Tensor3D s = c.src;
    s.start_addr.raw = isa::sbuf_addr(c.src_part, src_base(k) + c.src.start_addr.raw);
    prog.push_back(
        qmx_inst(c.in, c.e4m3, c.channels, s, isa::sbuf_addr(c.dst_part, data_base(k) + c.data_off),
                 isa::sbuf_addr(c.dst_part, scale_base(k) + c.scale_off), c.num, c.step, c.pidx));
  }
  return prog;
}

// Compares every data and scale window of every partition; reports the first
// differing byte per window.
inline void check_windows(platform::TpbCore& core, const Expected& expect) {
  for (std::size_t k = 0; k < expect.data.size(); ++k)
    for (unsigned p = 0; p < isa::kNumPartitions; ++p) {
      const auto got_d = core.dump_memory(isa::sbuf_addr(p, data_base(k)), kDataWin);
      const auto got_s = core.dump_memory(isa::sbuf_addr(p, scale_base(k)), kScaleWin);
      for (std::size_t i = 0; i < kDataWin; ++i)
        if (got_d[i] != expect.data[k][p][i]) {
          ADD_FAILURE() << "case " << k << " data partition " << p << " byte " << i << ": got 0x"
                        << std::hex << int(got_d[i]) << " want 0x" << int(expect.data[k][p][i]);
          break;
        }
      for (std::size_t i = 0; i < kScaleWin; ++i)
        if (got_s[i] != expect.scale[k][p][i]) {
          ADD_FAILURE() << "case " << k << " scale partition " << p << " byte " << i << ": got 0x"
                        << std::hex << int(got_s[i]) << " want 0x" << int(expect.scale[k][p][i]);
          break;
        }
    }
}

// Runs `cases` as one DVE stream and checks every window.
inline platform::CoreRunResult run_cases(const std::vector<QmxCase>& cases,
                                         isa::Arch arch = isa::Arch::Mariana) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(arch));
  Expected expect;
  core->load_queue(isa::Queue::Dve, load_cases(*core, cases, false, expect));
  const platform::CoreRunResult r = core->run();
  EXPECT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  EXPECT_EQ(r.instructions, cases.size());
  check_windows(*core, expect);
  return r;
}

}  // namespace tpb::dveref
